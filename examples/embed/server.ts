import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createEmbedSession, refreshAccessToken } from "aiagent/client";

const baseUrl = process.env.AIAGENT_URL ?? "http://127.0.0.1:8080";
const appUrl = process.env.AIAGENT_APP_URL ?? baseUrl;
const chatbotId = process.env.AIAGENT_CHATBOT_ID ?? "";
const clientApiKey = process.env.AIAGENT_CLIENT_API_KEY ?? "";
const page = readFileSync(new URL("page.html", import.meta.url), "utf8").replaceAll("%APP_URL%", appUrl);
const service = { baseUrl, appUrl, clientApiKey, chatbotId };
const refreshTokens = new Map<string, string>(); // user id → refresh token: kept on this server only
const server = createServer(async (req, res) => {
  const userId = /\buid=([\w-]{36})/.exec(req.headers.cookie ?? "")?.[1]; // your login's user (here: a cookie)
  if (req.method === "GET" && req.url === "/") {
    if (!userId) res.setHeader("set-cookie", `uid=${randomUUID()}; Path=/; HttpOnly; SameSite=Lax`);
    return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
  }
  if (req.method !== "POST" || !userId || req.headers["x-requested-with"] !== "aiagent-host")
    return res.writeHead(404).end();
  res.setHeader("content-type", "application/json");
  try {
    if (req.url === "/aiagent/session") {
      // The page's origin (a browser sends it with a POST): the frame's launch code works only there.
      const s = await createEmbedSession({ ...service, userId, hostOrigin: req.headers.origin, launch: true });
      refreshTokens.set(userId, s.refreshToken);
      return res.end(JSON.stringify({ frame_url: s.frameUrl }));
    }
    const refreshToken = refreshTokens.get(userId);
    if (req.url !== "/aiagent/refresh" || !refreshToken) return res.writeHead(404).end("{}");
    const { access_token } = await refreshAccessToken({ baseUrl, chatbotId, userId, refreshToken });
    res.end(JSON.stringify({ access_token })); // the access token only
  } catch (e) {
    console.error("aiagent:", (e as Error).message); // the real cause: a refused key, an origin not allowed…
    res.writeHead(502).end(JSON.stringify({ error: `the chat service refused: ${(e as Error).message}` }));
  }
});
server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () =>
  console.log(`http://127.0.0.1:${(server.address() as { port: number }).port}/`),
);
