"""The embedding route for FastAPI.

    app.include_router(aiagent_router(user=lambda request: {"id": ..., "name": ..., "email": ...}), prefix="/aiagent")

serves ``POST /aiagent/session`` and ``POST /aiagent/refresh``, which the host script's ``AiAgent.start`` calls.
"""
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from .route import EmbedRoute

__all__ = ["aiagent_router"]


def aiagent_router(user, **settings):
    """An APIRouter with the two endpoints. ``user(request)``: the signed-in user's dict or None, from your session.

    ``settings``: EmbedRoute's (base_url, app_url, chatbot_id, client_api_key, store, log); the environment by default.
    """
    route = EmbedRoute(**settings)
    router = APIRouter()

    # A plain def: FastAPI runs it in its thread pool, so the calls to the service do not block the event loop.
    @router.post("/{endpoint}", include_in_schema=False)
    def endpoint(endpoint: str, request: Request):
        h = request.headers
        status, body = route.handle(endpoint, request.method, h.get("origin"), h.get("x-requested-with"), user(request))
        return JSONResponse(body, status_code=status)

    return router
