from aiagent_embed.flask import aiagent_blueprint
from flask import Flask, request

def user():  # your login's signed-in user (here a demo cookie; or Flask's session, flask_login's current_user)
    return {"id": request.cookies.get("uid"), "name": "Ada", "email": "ada@example.com"}

app = Flask(__name__)
app.register_blueprint(aiagent_blueprint(user), url_prefix="/aiagent")  # AIAGENT_URL, AIAGENT_CHATBOT_ID, …_API_KEY
app.get("/")(lambda: open("page.html").read())
