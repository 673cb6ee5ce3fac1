"""The one route a client's server mounts for the host script (``AiAgent.start``).

``POST {route}/session`` answers the frame's address with a one-time launch code, ``POST {route}/refresh`` a new access
token. The FastAPI and Flask helpers (``aiagent_embed.fastapi``, ``aiagent_embed.flask``) wrap it; your server supplies
only who is signed in, as a dict ``{"id", "name", "email", "phone"}`` (all but ``id`` optional) or None.
"""
import os
import sys
import threading
import time

from . import EmbedError, create_embed_session, refresh_access_token

__all__ = ["EmbedRoute", "MemoryStore"]


class MemoryStore:
    """Refresh tokens in this process's memory, each dropped once expired (use a shared store with several instances).

    A store has ``get(user_id)`` and ``set(user_id, refresh_token, expires_at)`` (epoch milliseconds).
    """

    def __init__(self):
        self._tokens, self._lock = {}, threading.Lock()

    def get(self, user_id):
        with self._lock:
            kept = self._tokens.get(user_id)
            if kept and kept[1] > time.time() * 1000:
                return kept[0]
            self._tokens.pop(user_id, None)
            return None

    def set(self, user_id, refresh_token, expires_at):
        now = time.time() * 1000
        with self._lock:
            for uid in [u for u, (_, exp) in self._tokens.items() if exp <= now]:
                del self._tokens[uid]
            self._tokens[user_id] = (refresh_token, expires_at)


def _setting(given, name, fallback=None):
    value = given or os.environ.get(name) or fallback
    if not value:
        raise ValueError(f"aiagent: give {name} (the environment variable) or its argument")
    return value


class EmbedRoute:
    """The route's two endpoints for any framework: ``handle(endpoint, method, origin, requested_with, user)``.

    The settings default to the environment: AIAGENT_URL, AIAGENT_APP_URL (else the URL), AIAGENT_CHATBOT_ID and
    AIAGENT_CLIENT_API_KEY (which never leaves your server).
    """

    def __init__(self, base_url=None, app_url=None, chatbot_id=None, client_api_key=None, store=None, log=None):
        self.base_url = _setting(base_url, "AIAGENT_URL")
        self.app_url = _setting(app_url, "AIAGENT_APP_URL", self.base_url)
        self.chatbot_id = _setting(chatbot_id, "AIAGENT_CHATBOT_ID")
        self.client_api_key = _setting(client_api_key, "AIAGENT_CLIENT_API_KEY")
        self.store = store or MemoryStore()
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))

    def handle(self, endpoint, method, origin, requested_with, user):
        """Answers one request: (status, JSON body as a dict). ``user`` is the signed-in user's dict or None."""
        if method != "POST" or endpoint not in ("session", "refresh"):
            return 404, {"error": "not found"}
        # A custom header no other site can send without a CORS preflight, which is never granted.
        if requested_with != "aiagent-host":
            return 403, {"error": "x-requested-with: aiagent-host is required"}
        user_id = (user or {}).get("id")
        if not user_id:
            return 401, {"error": "nobody is signed in"}
        try:
            if endpoint == "session":
                # The page's origin (a browser sends it with a POST): the launch code works only there.
                s = create_embed_session(self.base_url, self.client_api_key, self.chatbot_id, user_id, self.app_url,
                                         host_origin=origin, launch=True, contact=user)
                self.store.set(user_id, s["refresh_token"], s["refresh_token_expires_at"])
                return 200, {"frame_url": s["frame_url"]}
            refresh_token = self.store.get(user_id)
            if not refresh_token:
                return 401, {"error": "no chat session: reload the page"}
            fresh = refresh_access_token(self.base_url, self.chatbot_id, user_id, refresh_token)
            if fresh.get("refresh_token"):  # rotation on: the next refresh token is kept here, never sent on
                self.store.set(user_id, fresh["refresh_token"], fresh.get("refresh_token_expires_at", 0))
            return 200, {"access_token": fresh["access_token"], "expires_at": fresh["expires_at"]}
        except EmbedError as e:  # the real cause, logged and answered: a refused key, an origin not allowed…
            self.log(f"aiagent: {e}")
            return 502, {"error": f"the chat service refused: {e}"}
