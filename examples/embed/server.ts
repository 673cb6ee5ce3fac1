import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createEmbedSession, refreshAccessToken } from "aiagent/client";

const baseUrl = process.env.AIAGENT_URL ?? "http://127.0.0.1:8080";
const appUrl = process.env.AIAGENT_APP_URL ?? baseUrl;
const chatbotId = process.env.AIAGENT_CHATBOT_ID ?? "";
const clientApiKey = process.env.AIAGENT_CLIENT_API_KEY ?? "";
const page = readFileSync(new URL("page.html", import.meta.url), "utf8").replaceAll("%APP_URL%", appUrl);
const refreshTokens = new Map<string, string>(); // user id → refresh token: kept on this server only

const server = createServer(async (req, res) => {
  // Your login says who the user is; this example gives each browser an id in a cookie.
  const userId = /\buid=([\w-]{36})/.exec(req.headers.cookie ?? "")?.[1];
  if (req.method === "GET" && req.url === "/") {
    if (!userId) res.setHeader("set-cookie", `uid=${randomUUID()}; Path=/; HttpOnly; SameSite=Lax`);
    return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
  }
  if (req.method !== "POST" || !userId || req.headers["x-requested-with"] !== "aiagent-host")
    return res.writeHead(404).end();
  res.setHeader("content-type", "application/json");
  try {
    if (req.url === "/aiagent/session") {
      const s = await createEmbedSession({ baseUrl, appUrl, clientApiKey, chatbotId, userId, launch: true });
      refreshTokens.set(userId, s.refreshToken);
      return res.end(JSON.stringify({ frame_url: s.frameUrl }));
    }
    const refreshToken = refreshTokens.get(userId);
    if (req.url !== "/aiagent/refresh" || !refreshToken) return res.writeHead(404).end("{}");
    const { access_token } = await refreshAccessToken({ baseUrl, chatbotId, userId, refreshToken });
    res.end(JSON.stringify({ access_token })); // the access token only
  } catch {
    res.writeHead(502).end(JSON.stringify({ error: "the chat service is not available" }));
  }
});
server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`http://127.0.0.1:${port}/`);
});
