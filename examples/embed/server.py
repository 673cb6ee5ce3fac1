import json, os, re, sys, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from aiagent_embed import EmbedError, create_embed_session, refresh_access_token
BASE_URL = os.environ.get("AIAGENT_URL", "http://127.0.0.1:8080")
APP_URL = os.environ.get("AIAGENT_APP_URL", BASE_URL)
CHATBOT_ID, API_KEY = os.environ.get("AIAGENT_CHATBOT_ID", ""), os.environ.get("AIAGENT_CLIENT_API_KEY", "")
PAGE = open(os.path.join(os.path.dirname(__file__), "page.html")).read().replace("%APP_URL%", APP_URL).encode()
refresh_tokens = {}  # user id -> refresh token: kept on this server only
class Handler(BaseHTTPRequestHandler):
    def send(self, status, body, kind="application/json", cookie=None):
        self.send_response(status)
        self.send_header("content-type", kind)
        if cookie: self.send_header("set-cookie", f"uid={cookie}; Path=/; HttpOnly; SameSite=Lax")
        self.end_headers()
        self.wfile.write(body if isinstance(body, bytes) else json.dumps(body).encode())
    def do_GET(self):  # your login says who the user is; this example gives each browser an id in a cookie
        if self.path != "/": return self.send(404, {})
        self.send(200, PAGE, "text/html; charset=utf-8", None if self.user() else str(uuid.uuid4()))
    def do_POST(self):  # the custom header keeps other sites out: no CORS preflight is ever granted
        user = self.user()
        if not user or self.headers.get("x-requested-with") != "aiagent-host": return self.send(404, {})
        try:
            if self.path == "/aiagent/session":
                origin = self.headers.get("origin")  # the page's (sent with a POST): the launch code works only there
                s = create_embed_session(BASE_URL, API_KEY, CHATBOT_ID, user, APP_URL, host_origin=origin, launch=True)
                refresh_tokens[user] = s["refresh_token"]
                return self.send(200, {"frame_url": s["frame_url"]})
            if self.path != "/aiagent/refresh" or user not in refresh_tokens: return self.send(404, {})
            fresh = refresh_access_token(BASE_URL, CHATBOT_ID, user, refresh_tokens[user])
            self.send(200, {"access_token": fresh["access_token"]})  # the access token only
        except EmbedError as e:  # the real cause, logged and answered: a refused key, an origin not allowed…
            print(f"aiagent: {e}", file=sys.stderr, flush=True)
            self.send(502, {"error": f"the chat service refused: {e}"})
    def user(self):
        return (re.search(r"\buid=([\w-]{36})", self.headers.get("cookie", "")) or [None, None])[1]

server = ThreadingHTTPServer(("127.0.0.1", int(os.environ.get("PORT", "3000"))), Handler)
print(f"http://127.0.0.1:{server.server_address[1]}/", flush=True)
server.serve_forever()
