import { readFileSync } from "node:fs";
import { aiagent } from "aiagent/client/fastify";
import Fastify from "fastify";

// Your login's signed-in user (a demo cookie here; with @fastify/session: req.session.user).
const user = (req) => ({ id: /\buid=([\w-]+)/.exec(req.headers.cookie)?.[1], name: "Ada", email: "ada@example.com" });
const app = Fastify().register(aiagent({ user }), { prefix: "/aiagent" }); // AIAGENT_URL, …_CHATBOT_ID, …_API_KEY
app.get("/", (_req, reply) => reply.type("text/html").send(readFileSync("page.html", "utf8")));
const port = Number(process.env.PORT ?? 3000);
app.listen({ host: "127.0.0.1", port }).then((url) => console.log(`${url}/`));
