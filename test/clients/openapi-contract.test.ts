import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { idToken, issueTokens, ownerOf, send } from "../helpers/flows.js";
import { startServer, type TestAccount, type TestServer, UNANSWERED_RELAY } from "../helpers/server.js";

// The contract test of issue 47: for every operation of the OpenAPI document, requests are generated from the
// document alone (its example, then each rule of its schemas broken one at a time), and the service must accept what
// the document allows and refuse, with 400 naming the field, what it forbids. Ajv checks each generated request
// against the document first (so the test cannot probe a rule the document does not state) and each answer's body
// against the documented response. Runs on SQLite and, in the api-postgres project, on PostgreSQL.
const doc = JSON.parse(readFileSync("gen/openapi/aiagent.v1.openapi.json", "utf8"));

type Schema = Record<string, any>;
interface Operation {
  key: string;
  verb: string;
  path: string;
  op: Schema;
}
const operations: Operation[] = Object.entries(doc.paths as Record<string, Record<string, Schema>>).flatMap(
  ([path, ops]) => Object.entries(ops).map(([verb, op]) => ({ key: `${verb.toUpperCase()} ${path}`, verb, path, op })),
);

const ajv = new Ajv2020({ strict: false, allErrors: false, logger: false });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
ajv.addFormat("uuid", UUID);
ajv.addFormat("email", /^[^\s@]+@[^\s@]+$/);
ajv.addFormat("date", /^\d{4}-\d{2}-\d{2}$/);
ajv.addFormat("date-time", { validate: (s: string) => !Number.isNaN(Date.parse(s)) });
for (const f of ["int32", "int64", "uint32"]) ajv.addFormat(f, { type: "number", validate: () => true });
ajv.addSchema(doc, "openapi.json");
const validators = new Map<string, (v: unknown) => boolean>();
/** Whether `value` conforms to `schema` (a schema of the document, or a $ref into it). */
function conforms(schema: Schema, value: unknown): boolean {
  const id = JSON.stringify(schema);
  let v = validators.get(id);
  if (!v) {
    const local = JSON.parse(id.replace(/"#\/components\//g, '"openapi.json#/components/'));
    v = ajv.compile(local) as (v: unknown) => boolean;
    validators.set(id, v);
  }
  return v(value);
}
const schemaErrors = (schema: Schema, value: unknown) =>
  conforms(schema, value) ? [] : ajv.errorsText((validators.get(JSON.stringify(schema)) as { errors?: never }).errors);

/** A request as the test sends it. */
interface Sent {
  path: Record<string, string>;
  query: Record<string, unknown>;
  body?: Record<string, unknown>;
  headers: Record<string, string>;
}

let s: TestServer;
let a: TestAccount;
let id: string;
let access: string;
let refresh: string;
let conversationId: string;
let contactId: string;
/** Ids of this account's things, by the name of the field that names them. */
const ids: Record<string, string> = {};
/** The label ids a request may name (set_conversation_labels). */
const labelIds: string[] = [];
const USER = "contract-user";

/** A JSON call of account a's admin: its `data`. */
async function admin(verb: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${s.url}${path}`, {
    method: verb,
    headers: { authorization: `Bearer ${id}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await r.json()) as any;
  expect(r.status, `${verb} ${path}: ${JSON.stringify(json)}`).toBe(200);
  return json.data;
}

beforeAll(async () => {
  // With a relay, so that /send_transcript queues.
  s = await startServer({ env: UNANSWERED_RELAY });
  a = await s.account({
    knowledge: [{ title: "Shipping", url: "https://example.com/shipping", snippet: "We ship in two days." }],
  });
  const t = await issueTokens(s.url, a, USER, { contact_name: "Ada", email: "ada@example.com" });
  access = t.access_token;
  refresh = t.refresh_token;
  id = await idToken(s.url, a);
  conversationId = (await send(s.url, access, "How long does shipping take?")).conversation_id;
  const r = await fetch(`${s.url}/get_contact_conversations?user_email_id=${encodeURIComponent(a.email)}`, {
    headers: { authorization: `Bearer ${id}` },
  });
  contactId = ((await r.json()) as any).data.data.contacts[0].contact_id;
  const base = `/v1/account/chatbots/${a.chatbotId}`;
  ids.endpoint_id = (
    await admin("POST", "/v1/account/webhooks", { url: "http://127.0.0.1:9/hooks" })
  ).endpoint.endpoint_id;
  await send(s.url, access, "A message for the webhook", conversationId);
  ids.delivery_id = (
    await admin("GET", `/v1/account/webhooks/${ids.endpoint_id}/deliveries`)
  ).deliveries[0].delivery_id;
  ids.tool_id = (
    await admin("POST", `${base}/tools`, { name: "lookup", description: "A tool.", url: "https://tools.example/x" })
  ).tool.tool_id;
  ids.source_id = (
    await admin("POST", `${base}/knowledge_sources`, {
      kind: "snippets",
      snippets: [{ title: "Returns", url: "https://shop.example/returns", snippet: "Returns within 30 days." }],
    })
  ).source_id;
  ids.saved_reply_id = (
    await admin("POST", "/v1/account/saved_replies", { shortcut: "hello", content: "Hello!" })
  ).saved_reply_id;
  ids.label_id = (await admin("POST", "/v1/account/labels", { name: "Contract label" })).label_id;
  labelIds.push(ids.label_id!);
  ids.member_id = (await s.app.team.invite(ownerOf(a), "member@contract.example", "operator")).member.memberId;
  ids.session_id = (await admin("GET", "/v1/account/sessions")).sessions[0].session_id;
  ids.api_key_id = (await admin("GET", "/v1/account/api_keys")).api_keys[0].api_key_id;
});
afterAll(() => s?.close(true));

/** Values of this test's account for the fields whose example is a stand-in (an id, a credential). */
function known(name: string): unknown {
  const values: Record<string, unknown> = {
    chatbot_id: a.chatbotId,
    conversation_id: conversationId,
    contact_id: contactId,
    user_id: USER,
    user_email_id: a.email,
    client_api_key: a.apiKey,
    refresh_token: refresh,
    email: a.email,
    password: a.password,
    current_password: a.password,
    label_ids: labelIds,
    ...ids,
  };
  return values[name];
}

/**
 * Requests whose valid form the document cannot state, with the values that make them valid: rules that depend on
 * another field's value (a knowledge source's kind) or on the account's state (a live invitation code).
 */
const VALID_OVERRIDES: Record<string, () => Promise<Partial<Sent>> | Partial<Sent>> = {
  // The test's machine resolves no public name; a webhook may call loopback in development.
  "POST /v1/account/webhooks": () => ({ body: { url: "http://127.0.0.1:9/created" } }),
  // Rated once closed: a conversation of its own, closed.
  "POST /ai_agent/rate_conversation": async () => {
    const c = (await send(s.url, access, "Rate me")).conversation_id;
    await admin("POST", "/close_conversation", { conversation_id: c });
    return { body: { conversation_id: c, score: 1 } };
  },
  "POST /v1/account/chatbots/{chatbot_id}/knowledge_sources": () => ({
    body: {
      kind: "snippets",
      snippets: [{ title: "Gift cards", url: "https://shop.example/gift", snippet: "Gift cards never expire." }],
    },
  }),
  "POST /v1/invitations/accept": async () => {
    const inv = await s.app.team.invite(ownerOf(a), `contract${Date.now()}@example.com`, "operator");
    return { body: { invitation_code: inv.invitationCode, password: "correct horse battery" } };
  },
};

/**
 * Examples the document gives that this machine cannot take as they are: it resolves no public name (a webhook's
 * example address), and a current password cannot be an example. Their valid form is VALID_OVERRIDES'.
 */
const NOT_AS_IS = new Set(["POST /v1/account/webhooks", "POST /v1/account/password"]);

/**
 * The valid request of an operation: its documented example, with this account's ids and credentials (or, `asIs`,
 * the example's own values: ids of nothing, which are answered 404 or 401 but never refused as input).
 */
async function validRequest(o: Operation, asIs = false): Promise<Sent> {
  const known_ = asIs ? () => undefined : known;
  const sent: Sent = { path: {}, query: {}, headers: {} };
  for (const p of o.op.parameters ?? []) {
    if (!("example" in p)) continue;
    const v = known_(p.name) ?? p.example;
    if (p.in === "path") sent.path[p.name] = String(v);
    else sent.query[p.name] = v;
  }
  const media = o.op.requestBody?.content["application/json"];
  if (media) {
    expect(media.example, `${o.key}: the document gives an example body`).toBeDefined();
    sent.body = Object.fromEntries(
      Object.entries(media.example as Record<string, unknown>).map(([k, v]) => [k, known_(k) ?? v]),
    );
  }
  const security: Record<string, string[]>[] = o.op.security;
  if (security.some((x) => "idToken" in x)) sent.headers.authorization = `Bearer ${id}`;
  else if (security.some((x) => "accessTokenBearer" in x)) sent.headers.authorization = `Bearer ${access}`;
  // The console's session routes want its CSRF header.
  if (o.path === "/console/session") sent.headers["x-aiagent-csrf"] = "1";
  const override = asIs ? undefined : await VALID_OVERRIDES[o.key]?.();
  return { ...sent, ...override };
}

async function call(o: Operation, sent: Sent): Promise<{ status: number; body: any; type: string | null }> {
  const path = o.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(sent.path[n] ?? ""));
  const qs = new URLSearchParams(Object.entries(sent.query).map(([k, v]) => [k, String(v)])).toString();
  const headers = { ...sent.headers, ...(sent.body ? { "content-type": "application/json" } : {}) };
  const r = await fetch(`${s.url}${path}${qs ? `?${qs}` : ""}`, {
    method: o.verb.toUpperCase(),
    headers,
    ...(sent.body ? { body: JSON.stringify(sent.body) } : {}),
  });
  const type = r.headers.get("content-type");
  if (type === "application/x-ndjson") {
    // A stream (a watch never ends): its first line is the answer's shape.
    const reader = r.body!.getReader();
    const { value } = await reader.read();
    await reader.cancel();
    const first = new TextDecoder().decode(value).split("\n")[0]!;
    return { status: r.status, body: first ? JSON.parse(first) : undefined, type };
  }
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined, type };
}

/** The document's verdict on a request: its parameters and body against their schemas, and either-or rules. */
function documentAllows(o: Operation, sent: Sent): boolean {
  for (const p of o.op.parameters ?? []) {
    const v = p.in === "path" ? sent.path[p.name] : sent.query[p.name];
    if (v === undefined) {
      if (p.required) return false;
      continue;
    }
    // Query values are text on the wire: an integer parameter is allowed when its text is one.
    const typed = p.schema.type === "integer" && /^-?\d+$/.test(String(v)) ? Number(v) : v;
    if (!conforms(p.schema, typed)) return false;
  }
  const either = o.op["x-requires-one-of"] as { fields: string[]; exactlyOne: boolean } | undefined;
  if (either) {
    const given = either.fields.filter((f) => sent.query[f] !== undefined && sent.query[f] !== "").length;
    if (given === 0 || (either.exactlyOne && given > 1)) return false;
  }
  const media = o.op.requestBody?.content["application/json"];
  if (media && !conforms(media.schema, sent.body)) return false;
  return true;
}

/** One request the document forbids, and the field the refusal must name. */
interface Probe {
  what: string;
  field: string;
  sent: Sent;
}

/** Values that break one rule of a schema each (or none when the schema states no rule the probe can break). */
function breaking(schema: Schema): { what: string; value: unknown }[] {
  const out: { what: string; value: unknown }[] = [];
  const s = schema.$ref ? resolveRef(schema.$ref) : schema;
  switch (s.type) {
    case "string":
      out.push({ what: "a number for a string", value: 12345 });
      if (s.minLength) out.push({ what: "an empty required string", value: "" });
      if (s.maxLength && s.maxLength < 20_000) out.push({ what: "over maxLength", value: "x".repeat(s.maxLength + 1) });
      if (s.enum) out.push({ what: "a value outside the enum", value: "not-a-listed-value" });
      if (s.format === "uuid") out.push({ what: "not a uuid", value: "not-a-uuid" });
      if (s.format === "email") out.push({ what: "not an e-mail", value: "not-an-email" });
      if (s.format === "date") out.push({ what: "not a date", value: "31/01/2026" });
      break;
    case "integer":
      out.push({ what: "a string for an integer", value: "abc" });
      if (s.minimum !== undefined) out.push({ what: "below minimum", value: s.minimum - 1 });
      if (s.maximum !== undefined) out.push({ what: "above maximum", value: s.maximum + 1 });
      break;
    case "boolean":
      out.push({ what: "a string for a boolean", value: "yes" });
      break;
    case "array":
      out.push({ what: "a string for an array", value: "x" });
      break;
    case "object":
      out.push({ what: "a string for an object", value: "x" });
      break;
  }
  return out;
}

function resolveRef(ref: string): Schema {
  return ref
    .split("/")
    .slice(1)
    .reduce((o: any, k) => o[k], doc);
}

/** Every request the document forbids that the test derives from the valid one: one broken rule each. */
function invalidProbes(o: Operation, valid: Sent): Probe[] {
  const probes: Probe[] = [];
  for (const p of o.op.parameters ?? []) {
    for (const b of breaking(p.schema)) {
      // On the wire every query value is text: a "number for a string" is a string there.
      if (typeof b.value === "number" && p.schema.type === "string") continue;
      if (p.in === "path") {
        // An empty path segment is another path (404 or 405), not an empty value.
        if (b.value === "") continue;
        probes.push({
          what: `${p.name}: ${b.what}`,
          field: p.name,
          sent: { ...valid, path: { ...valid.path, [p.name]: String(b.value) } },
        });
      } else
        probes.push({
          what: `${p.name}: ${b.what}`,
          field: p.name,
          sent: { ...valid, query: { ...valid.query, [p.name]: b.value } },
        });
    }
  }
  const either = o.op["x-requires-one-of"] as { fields: string[] } | undefined;
  if (either) {
    const query = Object.fromEntries(Object.entries(valid.query).filter(([k]) => !either.fields.includes(k)));
    probes.push({ what: `none of ${either.fields.join(", ")}`, field: either.fields[0]!, sent: { ...valid, query } });
  }
  const media = o.op.requestBody?.content["application/json"];
  if (media && valid.body) {
    const body = resolveRef(media.schema.$ref);
    probes.push({
      what: "an unknown field",
      field: "zz_not_a_field",
      sent: { ...valid, body: { ...valid.body, zz_not_a_field: 1 } },
    });
    for (const [name, schema] of Object.entries((body.properties ?? {}) as Record<string, Schema>)) {
      // A field the path fills is compared with the path, not probed on its own.
      if (name in valid.path) continue;
      for (const b of breaking(schema))
        probes.push({
          what: `${name}: ${b.what}`,
          field: name,
          sent: { ...valid, body: { ...valid.body, [name]: b.value } },
        });
    }
    // What one value of a field requires or refuses of the others (`if`/`then`): each broken once.
    for (const rule of (body.allOf ?? []) as Schema[]) {
      if (!rule.if) continue;
      const [field, test] = Object.entries(rule.if.properties as Record<string, Schema>)[0]!;
      const required = rule.then.required as string[];
      const base: Record<string, unknown> = { ...valid.body, [field]: test.const };
      for (const n of Object.keys(base)) if (n !== field && !(body.required ?? []).includes(n)) delete base[n];
      probes.push({
        what: `${field}=${test.const} without ${required[0]}`,
        field: required[0]!,
        sent: { ...valid, body: base },
      });
      const refused = Object.entries(rule.then.properties as Record<string, Schema>).filter(
        ([, c]) => c.maxLength === 0 || c.maxItems === 0 || c.const === 0,
      );
      // With what the value requires given, each field it refuses is given in turn.
      const sample = (n: string) =>
        n === "url"
          ? "https://example.com/"
          : n === "file_name"
            ? "notes.txt"
            : { string: "aGVsbG8", integer: 1, array: [{ title: "T", url: "", snippet: "S" }] }[
                body.properties[n].type as "string"
              ];
      const satisfied = { ...base, ...Object.fromEntries(required.map((n) => [n, sample(n)])) };
      for (const [n] of refused)
        probes.push({
          what: `${field}=${test.const} with ${n}`,
          field: n,
          sent: { ...valid, body: { ...satisfied, [n]: sample(n) } },
        });
    }
    for (const alternatives of [body.oneOf, body.anyOf])
      if (alternatives) {
        const names = alternatives.flatMap((x: Schema) => x.required as string[]);
        const rest = Object.fromEntries(Object.entries(valid.body).filter(([k]) => !names.includes(k)));
        probes.push({ what: `none of ${names.join(", ")}`, field: names[0], sent: { ...valid, body: rest } });
      }
  }
  return probes;
}

/** Requests the document allows beside the example: each bounded integer at its bounds, each enum value. */
function validVariants(o: Operation, valid: Sent): { what: string; sent: Sent }[] {
  const out: { what: string; sent: Sent }[] = [];
  for (const p of o.op.parameters ?? []) {
    if (p.in !== "query") continue;
    const values: unknown[] = [
      ...(p.schema.minimum !== undefined ? [p.schema.minimum] : []),
      ...(p.schema.maximum !== undefined ? [p.schema.maximum] : []),
      ...(p.schema.enum ?? []),
    ];
    for (const v of values)
      out.push({ what: `${p.name}=${v}`, sent: { ...valid, query: { ...valid.query, [p.name]: v } } });
  }
  return out;
}

/** Operations whose valid request changes what later requests can do: sent after every other. */
const LAST = /revoke|rotate|disable|erase|DELETE|sign_?out|password/i;
const ordered = [...operations.filter((o) => !LAST.test(o.key)), ...operations.filter((o) => LAST.test(o.key))];

describe("the OpenAPI document and the service agree, operation by operation", () => {
  it("gives every operation an example that the document itself accepts", async () => {
    for (const o of operations) {
      const sent = await validRequest(o);
      expect(documentAllows(o, sent), `${o.key}: ${JSON.stringify(sent)}`).toBe(true);
    }
  });

  it("refuses, with 400 naming the field, every request the document forbids", async () => {
    const disagreements: string[] = [];
    let probed = 0;
    for (const o of operations) {
      const valid = await validRequest(o);
      for (const p of invalidProbes(o, valid)) {
        // Only a rule the document states is probed: the generated request must break it.
        expect(documentAllows(o, p.sent), `${o.key} ${p.what}: the document allows it`).toBe(false);
        probed++;
        const r = await call(o, p.sent);
        const named = r.body?.message?.includes(p.field) || r.body?.details?.[0]?.debug?.metadata?.field === p.field;
        if (r.status !== 400 || !named)
          disagreements.push(`${o.key} ${p.what}: ${r.status} ${JSON.stringify(r.body)?.slice(0, 200)}`);
        else expect(conforms({ $ref: "#/components/schemas/connect.Error" }, r.body)).toBe(true);
      }
    }
    expect(disagreements).toEqual([]);
    expect(probed).toBeGreaterThan(300);
  });

  it("accepts every request the document allows, answering only the statuses it documents, with the documented bodies", async () => {
    const disagreements: string[] = [];
    for (const o of ordered) {
      const valid = await validRequest(o);
      const variants = [
        ...(NOT_AS_IS.has(o.key) ? [] : [{ what: "the example as documented", sent: await validRequest(o, true) }]),
        { what: "the example", sent: valid },
        ...validVariants(o, valid),
      ];
      for (const v of variants) {
        const r = await call(o, v.sent);
        const documented = o.op.responses[String(r.status)];
        if (r.status === 400 || r.status >= 500 || !documented) {
          disagreements.push(`${o.key} ${v.what}: ${r.status} ${JSON.stringify(r.body)?.slice(0, 200)}`);
          continue;
        }
        const media = documented.$ref ? resolveRef(documented.$ref).content : documented.content;
        const schema = media?.[r.type ?? ""]?.schema;
        if (schema && r.body !== undefined && !conforms(schema, r.body))
          disagreements.push(`${o.key} ${v.what}: ${r.status} body: ${schemaErrors(schema, r.body)}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});
