// Type-checked by `npm run lint` (tsc -p test), never run: the framework helpers take the frameworks' own types, so a
// TypeScript server mounts them as docs/embedding.md shows, with the framework's request in the user callback.
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import { aiagent as forExpress } from "../../src/client/express.js";
import { aiagent as forFastify } from "../../src/client/fastify.js";
import { aiagent as forHono } from "../../src/client/hono.js";

export function wire(): void {
  express().use("/aiagent", forExpress({ user: (req) => ({ id: req.get("x-user"), name: "Ada" }) }));
  Fastify().register(forFastify({ user: (req) => ({ id: String(req.headers["x-user"]) }) }), { prefix: "/aiagent" });
  new Hono().post("/aiagent/*", forHono({ user: (c) => ({ id: getCookie(c, "uid"), email: "ada@example.com" }) }));
}
