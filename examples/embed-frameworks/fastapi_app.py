from aiagent_embed.fastapi import aiagent_router
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

def user(request: Request):  # your login's signed-in user (here a demo cookie)
    return {"id": request.cookies.get("uid"), "name": "Ada", "email": "ada@example.com"}

app = FastAPI()
app.include_router(aiagent_router(user), prefix="/aiagent")  # AIAGENT_URL, AIAGENT_CHATBOT_ID, AIAGENT_CLIENT_API_KEY
app.get("/", response_class=HTMLResponse)(lambda: open("page.html").read())
