"""The embedding route for Flask.

    app.register_blueprint(aiagent_blueprint(user=lambda: {"id": ..., "name": ..., "email": ...}), url_prefix="/aiagent")

serves ``POST /aiagent/session`` and ``POST /aiagent/refresh``, which the host script's ``AiAgent.start`` calls.
"""
from flask import Blueprint, jsonify, request

from .route import EmbedRoute

__all__ = ["aiagent_blueprint"]


def aiagent_blueprint(user, name="aiagent", **settings):
    """A Blueprint with the two endpoints. ``user()``: the signed-in user's dict or None, from your session (Flask's
    ``session``, ``flask_login.current_user``…).

    ``settings``: EmbedRoute's (base_url, app_url, chatbot_id, client_api_key, store, log); the environment by default.
    """
    route = EmbedRoute(**settings)
    blueprint = Blueprint(name, __name__)

    @blueprint.post("/<endpoint>")
    def endpoint(endpoint):
        h = request.headers
        status, body = route.handle(endpoint, request.method, h.get("origin"), h.get("x-requested-with"), user())
        return jsonify(body), status

    return blueprint
