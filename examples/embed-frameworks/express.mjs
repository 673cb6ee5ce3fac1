import { readFileSync } from "node:fs";
import { aiagent } from "aiagent/client/express";
import express from "express";

// Your login's signed-in user (a demo cookie here; with express-session: req.session.user).
const user = (req) => ({ id: /\buid=([\w-]+)/.exec(req.headers.cookie)?.[1], name: "Ada", email: "ada@example.com" });
const app = express().use("/aiagent", aiagent({ user })); // AIAGENT_URL, AIAGENT_CHATBOT_ID, AIAGENT_CLIENT_API_KEY
app.get("/", (_req, res) => res.type("html").send(readFileSync("page.html", "utf8")));
const port = Number(process.env.PORT ?? 3000);
app.listen(port, "127.0.0.1", () => console.log(`http://127.0.0.1:${port}/`));
