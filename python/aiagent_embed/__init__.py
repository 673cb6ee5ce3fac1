"""Server helpers for embedding the AI agent's chat frame (Python standard library only).

Two calls over the service's documented JSON routes. Call them from your server only: they take your client API key
and the user's refresh token, which never go to a browser.

    session = create_embed_session(base_url, client_api_key, chatbot_id, user_id)
    # keep session["refresh_token"] on your server; give session["frame_url"] to the page
    fresh = refresh_access_token(base_url, chatbot_id, user_id, refresh_token)  # {"access_token", "expires_at"}

With a framework, one route does both for the host script's ``AiAgent.start``: ``aiagent_embed.fastapi.aiagent_router``
and ``aiagent_embed.flask.aiagent_blueprint`` (``aiagent_embed.route.EmbedRoute`` for any other).
"""
import json
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["EmbedError", "create_embed_session", "refresh_access_token"]


class EmbedError(Exception):
    """The service refused (status, code and reason say why) or could not be reached (status 0)."""

    def __init__(self, message, status, code=None, reason=None):
        super().__init__(message)
        self.status, self.code, self.reason = status, code, reason


def _required(name, value):
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} is required")
    return value


def _post(base_url, path, body):
    request = urllib.request.Request(
        urllib.parse.urljoin(base_url, path),
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)["data"]
    except urllib.error.HTTPError as e:
        try:
            err = json.load(e)
        except ValueError:
            err = {}
        reason = next((d["debug"]["reason"] for d in err.get("details", []) if d.get("debug", {}).get("reason")), None)
        raise EmbedError(err.get("message", f"HTTP {e.code}"), e.code, err.get("code"), reason) from None
    except (urllib.error.URLError, OSError) as e:
        raise EmbedError(f"the AI agent service could not be reached: {e}", 0) from None


def create_embed_session(
    base_url, client_api_key, chatbot_id, user_id, app_url=None, host_origin=None, launch=False, contact=None
):
    """Issues a user's tokens (POST /ai_agent/get_access_token) and builds the frame address.

    With launch=True the address carries a one-time launch code (60 s, used once, only under host_origin or the
    chatbot's only allowed origin) instead of the access token; otherwise it is the documented address.
    Returns a dict: frame_url, access_token, refresh_token (keep it on your server), access_token_expires_at,
    refresh_token_expires_at (epoch milliseconds), and launch_code with launch=True.
    contact: what the inbox shows of the customer instead of the bare user id, a dict of optional "name", "email",
    "phone".
    """
    body = {
        "user_id": _required("user_id", user_id),
        "chatbot_id": _required("chatbot_id", chatbot_id),
        "client_api_key": _required("client_api_key", client_api_key),
    }
    profile = {k: v for k, v in {
        "contact_name": (contact or {}).get("name"),
        "email": (contact or {}).get("email"),
        "phone_number": (contact or {}).get("phone"),
    }.items() if v}
    if profile:
        body["contact"] = profile
    if launch:
        body["launch_code"] = True
        if host_origin:
            body["embed_origin"] = host_origin
    data = _post(_required("base_url", base_url), "/ai_agent/get_access_token", body)
    if data.get("launch_code"):
        query = {"launch": data["launch_code"]}
    else:
        query = {"user_id": user_id, "access_token": data["access_token"]}
        if host_origin:
            query["host_origin"] = host_origin
    frame_url = f"{(app_url or base_url).rstrip('/')}/chatbot-iframe/{urllib.parse.quote(chatbot_id, safe='')}?{urllib.parse.urlencode(query)}"
    return {"frame_url": frame_url, **data}


def refresh_access_token(base_url, chatbot_id, user_id, refresh_token):
    """A new access token from the kept refresh token (POST /ai_agent/refresh_token): {"access_token", "expires_at"}."""
    return _post(_required("base_url", base_url), "/ai_agent/refresh_token", {
        "user_id": _required("user_id", user_id),
        "chatbot_id": _required("chatbot_id", chatbot_id),
        "refresh_token": _required("refresh_token", refresh_token),
    })
