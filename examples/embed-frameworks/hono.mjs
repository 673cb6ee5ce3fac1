import { readFileSync } from "node:fs";
import { serve } from "@hono/node-server";
import { aiagent } from "aiagent/client/hono";
import { Hono } from "hono";
import { getCookie } from "hono/cookie";

const user = (c) => ({ id: getCookie(c, "uid"), name: "Ada", email: "ada@example.com" }); // your login's (a cookie here)
const app = new Hono().post("/aiagent/*", aiagent({ user })).get("/", (c) => c.html(readFileSync("page.html", "utf8")));
const port = Number(process.env.PORT ?? 3000); // AIAGENT_URL, AIAGENT_CHATBOT_ID, AIAGENT_CLIENT_API_KEY: from the env
serve({ fetch: app.fetch, hostname: "127.0.0.1", port }, () => console.log(`http://127.0.0.1:${port}/`));
