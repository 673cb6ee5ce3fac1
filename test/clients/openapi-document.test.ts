import { readdirSync, readFileSync } from "node:fs";
import { type DescService, getOption } from "@bufbuild/protobuf";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConversationService } from "../../gen/aiagent/v1/conversation_service_pb.js";
import { allowed_values } from "../../gen/aiagent/v1/field_options_pb.js";
import { httpRoutes } from "../../src/protocol/rest/http-rules.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { resolve } from "./schema-check.js";

const doc = JSON.parse(readFileSync("gen/openapi/aiagent.v1.openapi.json", "utf8"));
/** Every service the generated code of the contract defines: a new one is covered the day it is added. */
const services: DescService[] = [];
for (const file of readdirSync("gen/aiagent/v1").filter((f) => f.endsWith("_pb.ts"))) {
  const mod = (await import(`../../gen/aiagent/v1/${file.replace(/\.ts$/, ".js")}`)) as Record<string, unknown>;
  for (const v of Object.values(mod))
    if ((v as { kind?: string } | null)?.kind === "service") services.push(v as DescService);
}
const schema = (name: string) => doc.components.schemas[`aiagent.v1.${name}`];
const param = (path: string, name: string) => doc.paths[path].get.parameters.find((p: any) => p.name === name);

describe("gen/openapi/aiagent.v1.openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const v = new Validator();
    const r = await v.validate(doc);
    expect(r.errors ?? []).toEqual([]);
    expect(r.valid).toBe(true);
    expect(v.version).toBe("3.1");
  });

  it("documents exactly the routes the google.api.http annotations declare", () => {
    expect(services.map((x) => x.name)).toEqual(expect.arrayContaining(["TokenService", "ConversationService"]));
    const annotated = httpRoutes(services)
      .map((r) => `${r.verb} ${r.template}`)
      .sort();
    const documented = Object.entries(doc.paths)
      .flatMap(([p, ops]) => Object.keys(ops as object).map((v) => `${v.toUpperCase()} ${p}`))
      .sort();
    expect(documented).toEqual(annotated);
  });

  it("states the documented query parameters with their defaults and bounds", () => {
    expect(param("/get_contact_conversations", "user_email_id")).toMatchObject({
      in: "query",
      required: true,
      schema: { type: "string" },
    });
    expect(param("/get_contact_conversations", "search")).toMatchObject({ in: "query", required: false });
    expect(param("/get_contact_conversations", "limit")).toMatchObject({
      required: false,
      schema: { type: "integer", minimum: 1, maximum: 100, default: 10 },
    });
    expect(param("/get_contact_conversations", "offset")).toMatchObject({
      required: false,
      schema: { type: "integer", minimum: 0, default: 0 },
    });
    expect(param("/get_contact_conversations", "offset").schema.maximum).toBe(1_000_000);
    expect(param("/get_contact_conversations", "filter")).toMatchObject({
      required: false,
      schema: { type: "string", enum: ["all", "unread", "live", "snoozed"], default: "all" },
    });
    expect(param("/get_messages_for_conversation", "conversation_id")).toMatchObject({
      required: true,
      schema: { type: "string", format: "uuid" },
    });
    expect(param("/get_messages_for_conversation", "limit")).toMatchObject({
      schema: { minimum: 1, maximum: 100, default: 20 },
    });
    expect(param("/get_messages_for_conversation", "offset")).toMatchObject({
      schema: { minimum: 0, maximum: 1_000_000, default: 0 },
    });
  });

  it("describes the JSON the server writes: snake_case names, every field present, int64 as integers, idToken, the envelopes", () => {
    expect(schema("TokenSet")).toMatchObject({
      required: ["access_token", "refresh_token", "access_token_expires_at", "refresh_token_expires_at"],
      properties: {
        access_token_expires_at: { type: "integer", format: "int64" },
        refresh_token_expires_at: { type: "integer", format: "int64" },
      },
    });
    expect(schema("RefreshedToken").required).toEqual(["access_token", "expires_at"]);
    expect(schema("IdToken").required).toEqual(["idToken", "expires_at"]);
    expect(schema("Contact").properties.unread_message_count).toMatchObject({ type: "string" });
    expect(schema("Contact").properties.latest_message_time).toMatchObject({ type: "string", format: "date-time" });
    expect(schema("Contact").properties.channels).toMatchObject({ type: "array", items: { type: "string" } });
    expect(schema("Contact").required).toEqual(
      expect.arrayContaining([
        "contact_id",
        "contact_name",
        "phone_number",
        "email",
        "conversation_status",
        "assigned_to",
        "unread_message_count",
        "latest_message_time",
        "channels",
      ]),
    );
    expect(schema("Message").properties.message_order).toMatchObject({ type: "integer" });
    // { data: { data: { contacts: [...] } } }
    const outer = resolve(doc, schema("GetContactConversationsResponse").properties.data.$ref);
    const inner = resolve(doc, outer.properties.data.$ref);
    expect(resolve(doc, inner.properties.contacts.items.$ref)).toBe(schema("Contact"));
    expect(schema("GetMessagesForConversationResponse").required).toContain("messages");
    // The agent's reply is absent once an operator has taken over: not required.
    expect(schema("SentMessage").required).not.toContain("reply");
  });

  it("marks what a request must send", () => {
    expect(schema("GetAccessTokenRequest").required).toEqual(["user_id", "chatbot_id", "client_api_key"]);
    expect(schema("RefreshTokenRequest").required).toEqual(["user_id", "chatbot_id", "refresh_token"]);
    expect(schema("SendMessageRequest").required).toEqual(["content"]);
    expect(schema("GetIdTokenRequest").oneOf).toEqual([{ required: ["client_api_key"] }, { required: ["password"] }]);
  });

  it("states the declared input rules: closed request schemas, non-empty required strings, formats, either-or, 409, examples", () => {
    const bodies = Object.values(doc.paths).flatMap((ops: any) =>
      Object.values(ops).flatMap((op: any) => (op.requestBody ? [op.requestBody.content["application/json"]] : [])),
    ) as any[];
    expect(bodies.length).toBeGreaterThan(40);
    for (const media of bodies) {
      expect(resolve(doc, media.schema.$ref).additionalProperties).toBe(false);
      expect(media.example).toBeDefined();
    }
    expect(schema("GetAccessTokenRequest").properties.user_id.minLength).toBe(1);
    expect(schema("CreateChatbotRequest").properties.allowed_origins.minItems).toBe(1);
    expect(schema("InviteMemberRequest").properties.email.format).toBe("email");
    expect(param("/v1/account/reports", "from").schema.format).toBe("date");
    expect(schema("RateConversationRequest").properties.score).toMatchObject({ minimum: 1, maximum: 5 });
    expect(param("/get_conversations_for_contact", "offset").schema.maximum).toBe(1_000_000);
    expect(schema("EraseContactRequest").oneOf.map((x: any) => x.required)).toEqual([["contact_id"], ["user_id"]]);
    expect(doc.paths["/v1/account/contacts/export"].get["x-requires-one-of"]).toEqual({
      fields: ["contact_id", "user_id"],
      exactlyOne: true,
    });
    expect(schema("UpdateMyProfileRequest").required ?? []).not.toContain("avatar_url");
    expect(doc.paths["/v1/account/chatbots/{chatbot_id}/tools"].post.responses["409"]).toBeDefined();
    expect(doc.paths["/ai_agent/send_message"].post.responses["409"]).toBeDefined();
    expect(doc.paths["/v1/account/chatbots"].get.responses["409"]).toBeUndefined();
    expect(param("/get_contact_conversations", "user_email_id").example).toBe("grace@example.com");
  });

  it("names the security of each route: body credential, ID token, or the frame's access token", () => {
    expect(doc.components.securitySchemes.idToken).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.components.securitySchemes.accessToken).toMatchObject({
      type: "apiKey",
      in: "query",
      name: "access_token",
    });
    expect(doc.paths["/ai_agent/get_access_token"].post.security).toEqual([]);
    expect(doc.paths["/ai_agent/refresh_token"].post.security).toEqual([]);
    expect(doc.paths["/get_contact_conversations"].get.security).toEqual([{ idToken: [] }]);
    expect(doc.paths["/get_messages_for_conversation"].get.security).toEqual([
      { accessToken: [] },
      { accessTokenBearer: [] },
      { idToken: [] },
    ]);
    expect(doc.paths["/ai_agent/send_message"].post.security).toEqual([{ accessToken: [] }, { accessTokenBearer: [] }]);
    expect(doc.paths["/close_conversation"].post.security).toEqual([{ idToken: [] }]);
  });

  it("gives every route the Connect error body for 400, 401, 403, 404, 405, 414, 429, 431, 500 and 503, and 413 to those with a body", () => {
    let checked = 0;
    for (const ops of Object.values(doc.paths) as any[]) {
      for (const op of Object.values(ops) as any[]) {
        checked++;
        expect(op.responses["413"] !== undefined).toBe(op.requestBody !== undefined);
        for (const status of [
          "400",
          "401",
          "403",
          "404",
          "405",
          "414",
          "429",
          "431",
          "500",
          "503",
          ...(op.requestBody ? ["413"] : []),
        ]) {
          const r = resolve(doc, op.responses[status].$ref);
          expect(r.content["application/json"].schema.$ref).toBe("#/components/schemas/connect.Error");
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(13);
    expect(doc.components.schemas["connect.Error"].required).toEqual(["code", "message", "details"]);
  });

  it("says where the routes are served: this document's own service, then an absolute address defaulting to a local start", () => {
    expect(doc.servers.map((x: any) => x.url)).toEqual(["/", "{scheme}://{host}"]);
    const absolute = doc.servers[1];
    const url = absolute.url.replace(/\{(\w+)\}/g, (_: string, v: string) => absolute.variables[v].default);
    expect(url).toBe("http://127.0.0.1:8080");
    // Redocly's recommended rules: no empty servers, no trailing slash but on "/" itself, a description on each.
    for (const server of doc.servers) {
      expect(server.url === "/" || !server.url.endsWith("/")).toBe(true);
      expect(server.description).toBeTruthy();
    }
    expect(resolve(doc, doc.paths["/get_contact_conversations"].get.responses["405"].$ref).headers.Allow).toBeDefined();
  });

  it("states the closed value set of filter as the contract's allowed_values option does", () => {
    const field = ConversationService.method.getContactConversations.input.field.filter!;
    expect(param("/get_contact_conversations", "filter").schema.enum).toEqual(getOption(field, allowed_values));
  });

  it("describes the streaming route as newline-delimited JSON lines, or server-sent events when asked", () => {
    const ok = doc.paths["/ai_agent/send_message_stream"].post.responses["200"];
    expect(Object.keys(ok.content)).toEqual(["application/x-ndjson", "text/event-stream"]);
    expect(ok.content["text/event-stream"].schema.description).toContain("Last-Event-ID");
    expect(ok.content["application/x-ndjson"].schema.oneOf.map((s: any) => s.required)).toEqual([
      ["result"],
      ["error"],
    ]);
  });
});

describe("GET /openapi.json and GET /docs", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s.close(true));

  it("serves the generated document as is", async () => {
    const r = await fetch(`${s.url}/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(await r.json()).toEqual(doc);
  });

  it("serves the reference page with its assets from this origin only", async () => {
    const r = await fetch(`${s.url}/docs`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const html = await r.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const a of assets) {
      expect(a.startsWith("/docs/assets/")).toBe(true);
      const ar = await fetch(s.url + a);
      expect(ar.status, a).toBe(200);
      expect((await ar.arrayBuffer()).byteLength, a).toBeGreaterThan(0);
    }
  });

  it("answers HEAD without a body and leaves other paths to the API", async () => {
    const h = await fetch(`${s.url}/docs/assets/swagger-ui.css`, { method: "HEAD" });
    expect(h.status).toBe(200);
    expect(await h.text()).toBe("");
    expect((await fetch(`${s.url}/docs/assets/../../package.json`)).status).toBe(404);
    expect((await fetch(`${s.url}/docs/assets/swagger-ui-bundle.js.map`)).status).toBe(404);
  });
});
