import { readdirSync } from "node:fs";
import { resolve } from "node:path";
import {
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescService,
  getOption,
  hasOption,
  ScalarType,
} from "@bufbuild/protobuf";
import { access, Credential } from "../../gen/aiagent/v1/access_pb.js";
import { allowed_values } from "../../gen/aiagent/v1/field_options_pb.js";
import { textRules } from "../../src/protocol/rest/field-rules.js";
import { type HttpRoute, httpRoutes } from "../../src/protocol/rest/http-rules.js";
import { INT32, INT64 } from "../../src/protocol/rest/json-codec.js";
import { NO_CUSTOMER_LIMITS } from "../helpers/server.js";

// The hostile table, generated from the contract: every service of gen/aiagent/v1, every google.api.http route with
// its path parameters, query parameters and body fields, and every RPC, each crossed with the hostile values that
// fit it. A route or RPC added to the contract is in the table the day it is added.

/** A server for hostile input: failure back-off and customer limits off (hostile input must reach the checks, not a
 * 429, which would pass too) and no webhook dispatcher (its background writes would show as rows changed). */
export const HOSTILE_SERVER = {
  env: {
    ...NO_CUSTOMER_LIMITS,
    AIAGENT_RATE_LIMIT_FAILURES_PER_ADDRESS: "0",
    AIAGENT_RATE_LIMIT_FAILURES_PER_TARGET: "0",
    AIAGENT_RATE_LIMIT_PASSWORD_FAILURES: "0",
  },
  overrides: { dispatch: false },
};

/** Every service the contract declares (every *_pb.ts of gen/aiagent/v1, so a new file joins by itself). */
export async function contractServices(): Promise<DescService[]> {
  const dir = resolve(import.meta.dirname, "../../gen/aiagent/v1");
  const out: DescService[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith("_pb.ts"))
    .sort()) {
    const mod = (await import(`${dir}/${file.replace(/\.ts$/, ".js")}`)) as Record<string, unknown>;
    for (const v of Object.values(mod))
      if ((v as { kind?: string } | null)?.kind === "service") out.push(v as DescService);
  }
  return out;
}

/** The credential a call presents so that its hostile input reaches the field checks, not the access gate. */
export type Presented = "none" | "access" | "admin";

export function presentedFor(method: DescMethod): Presented {
  const creds = hasOption(method, access) ? getOption(method, access).credentials : [];
  if (creds.includes(Credential.ID_TOKEN)) return "admin";
  if (creds.includes(Credential.ACCESS_TOKEN)) return "access";
  return "none";
}

/** One hostile request and what its answer must say. */
export interface HostileCase {
  /** The route ("GET /v1/account/chatbots/{chatbot_id}") or RPC ("connect aiagent.v1.X/Y") it belongs to. */
  target: string;
  name: string;
  method: string;
  /** Sent as it is: its percent-escapes, good or bad, are the case. */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  presented: Presented;
  /** The field or parameter a 4xx answer must name. */
  field?: string;
  /** The answer is a gRPC-Web one: HTTP 200 with a grpc-status that must name a client's error. */
  grpcWeb?: boolean;
  /** The answer is a Connect stream: HTTP 200 whose end-of-stream message carries the error. */
  connectStream?: boolean;
}

/** Percent-escapes that are not valid UTF-8 (a lone %, a non-hex escape, a stray byte, a surrogate, an overlong `/`). */
export const BAD_ESCAPES = ["%FF", "%", "%zz", "%ED%A0%80", "%C0%AF"];

const isInt = (t: ScalarType) => INT32.has(t) || INT64.has(t);

/** Hostile query values of a scalar field (raw, as they go on the wire). */
function queryValues(f: DescField, scalar: ScalarType): [string, string][] {
  if (scalar === ScalarType.STRING) {
    const out: [string, string][] = [
      ["a bad escape", "%FF"],
      ["an overlong escape", "%C0%AF"],
      ["a NUL", "a%00b"],
    ];
    const max = textRules(f)?.maxLength ?? 0;
    if (max > 0 && max < 4000) out.push([`${max + 1} characters`, "x".repeat(max + 1)]);
    if (hasOption(f, allowed_values))
      out.push(["a value outside the allowed ones", "nope"], ["an empty value for a closed set", ""]);
    return out;
  }
  if (isInt(scalar))
    return [
      ["1e309", "1e309"],
      ["NaN", "NaN"],
      ["0x10", "0x10"],
      ["beyond 64 bits", "99999999999999999999"],
      ["an empty value", ""],
    ];
  if (scalar === ScalarType.BOOL) return [["not a boolean", "maybe"]];
  return [["not a number", "abc"]];
}

/** Hostile JSON values of a field, as JSON text (so that 1e309 stays a literal), with what each is. */
function jsonValues(f: DescField): [string, string][] {
  const deep = `${"[".repeat(300)}${"]".repeat(300)}`;
  const scalar = f.fieldKind === "scalar" || (f.fieldKind === "list" && f.listKind === "scalar") ? f.scalar : undefined;
  const wrap = (v: string) => (f.fieldKind === "list" ? `[${v}]` : v);
  const out: [string, string][] = [];
  if (f.fieldKind === "message") out.push(["a string for an object", '"x"'], ["deep nesting", deep]);
  if (f.fieldKind === "list") out.push(["an object for an array", "{}"]);
  if (scalar === ScalarType.STRING) {
    out.push(["a NUL", wrap('"a\\u0000b"')], ["a number for a string", wrap("123")]);
    out.push(["a lone surrogate", wrap('"\\ud800"')]);
    const max = textRules(f)?.maxLength ?? 0;
    if (max > 0) out.push([`${max + 1} characters`, wrap(JSON.stringify("x".repeat(max + 1)))]);
    if (hasOption(f, allowed_values) && f.fieldKind === "scalar")
      out.push(["a value outside the allowed ones", '"nope"'], ["an empty string for a closed set", '""']);
  } else if (scalar !== undefined && isInt(scalar)) {
    out.push(
      ["1e309", wrap("1e309")],
      ['"NaN"', wrap('"NaN"')],
      ['"0x10"', wrap('"0x10"')],
      ["a fraction", wrap("1.5")],
      ["beyond 2^53", wrap("9007199254740993")],
    );
  } else if (scalar === ScalarType.BOOL) out.push(["a string for a boolean", wrap('"yes"')]);
  else if (scalar === ScalarType.BYTES)
    // Every bytes field of the contract is an image (checked by its first bytes): a script in base64 is none; or a
    // knowledge file, which is refused without its kind and name; or a message's file, which refuses markup.
    out.push(
      ["not base64", wrap('"<svg>"')],
      ["a number for bytes", wrap("123")],
      ["a script as an image", wrap(JSON.stringify(Buffer.from("<svg onload=alert(1)>").toString("base64")))],
    );
  return out;
}

/** A field's nested fields that hostile values go into, as [path, field]: one level of objects and arrays of objects. */
function bodyFields(desc: DescMessage, exclude: ReadonlySet<string>): [string[], DescField][] {
  const out: [string[], DescField][] = [];
  for (const f of desc.fields) {
    if (exclude.has(f.name)) continue;
    out.push([[f.name], f]);
    const inner =
      f.fieldKind === "message"
        ? f.message
        : f.fieldKind === "list" && f.listKind === "message"
          ? f.message
          : undefined;
    if (!inner) continue;
    for (const g of inner.fields) out.push([f.fieldKind === "list" ? [f.name, "0", g.name] : [f.name, g.name], g]);
  }
  return out;
}

/** The JSON text of a body holding `value` (JSON text) at `path` (array indexes as "0"). */
function bodyAt(path: string[], value: string): string {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  if (head === "0") return `[${bodyAt(rest, value)}]`;
  return `{${JSON.stringify(head)}:${bodyAt(rest, value)}}`;
}

/** The name the server gives a field at `path` (`knowledge[0].title`). */
function nameOf(path: string[]): string {
  return path.reduce((s, p) => (p === "0" ? `${s}[0]` : s ? `${s}.${p}` : p), "");
}

const A_UUID = "7d3c1c1e-1f6b-4b8e-9a41-0d6a3c2f5e10";

/** The key of a route in the table. */
export function routeKey(r: HttpRoute): string {
  return `${r.verb} ${r.template}`;
}

/** Every hostile case of one JSON route. */
export function routeCases(r: HttpRoute): HostileCase[] {
  const key = routeKey(r);
  const desc = r.method.input;
  const presented = presentedFor(r.method);
  const vars = [...r.template.matchAll(/\{([a-z0-9_.]+)(=\*)?\}/gi)].map((m) => m[1]!);
  const pathWith = (name: string, raw: string) =>
    r.template.replace(/\{([a-z0-9_.]+)(=\*)?\}/gi, (_m, v: string) => (v === name ? raw : A_UUID));
  const base = pathWith("", "");
  const json = { "content-type": "application/json" };
  const withBody = r.body !== "";
  const cases: HostileCase[] = [];
  const add = (
    c: Omit<HostileCase, "target" | "method" | "presented" | "headers"> & { headers?: Record<string, string> },
  ) =>
    cases.push({
      target: key,
      method: r.verb,
      presented,
      headers: withBody ? { ...json, ...c.headers } : (c.headers ?? {}),
      ...c,
      body: c.body ?? (withBody ? "{}" : undefined),
    });

  // Path parameters: the escapes that ended the process, a NUL, and one character over the declared length.
  for (const v of vars) {
    const f = desc.fields.find((x) => x.name === v);
    const values: [string, string][] = [...BAD_ESCAPES.map((e): [string, string] => [e, e]), ["%00", "a%00b"]];
    const max = f ? (textRules(f)?.maxLength ?? 0) : 0;
    if (max > 0 && max < 4000) values.push([`${max + 1} characters`, "x".repeat(max + 1)]);
    for (const [what, raw] of values) add({ name: `path ${v}: ${what}`, path: pathWith(v, raw), field: v });
  }

  // Query parameters: each bad encoding in a name, an unknown name; each field's hostile values when the route reads
  // its fields from the query.
  add({ name: "query: a bad escape in a parameter name", path: `${base}?%FF=1`, field: "query" });
  add({ name: "query: an unknown parameter", path: `${base}?no_such_parameter=1`, field: "no_such_parameter" });
  if (r.body !== "*") {
    for (const f of desc.fields) {
      if (vars.includes(f.name) || f.name === r.body) continue;
      const scalar =
        f.fieldKind === "scalar" ? f.scalar : f.fieldKind === "list" && f.listKind === "scalar" ? f.scalar : undefined;
      if (scalar === undefined) continue;
      for (const [what, raw] of queryValues(f, scalar))
        add({ name: `query ${f.name}: ${what}`, path: `${base}?${f.name}=${raw}`, field: f.name });
      if (f.fieldKind === "scalar")
        add({ name: `query ${f.name}: given twice`, path: `${base}?${f.name}=1&${f.name}=2`, field: f.name });
      if (f.jsonName !== f.name)
        add({ name: `query ${f.jsonName}: the camelCase name`, path: `${base}?${f.jsonName}=1`, field: f.jsonName });
    }
  }

  // The JSON body: each field's hostile values, and bodies that are not one JSON object with each key once.
  if (withBody) {
    const bodyDesc =
      r.body === "*"
        ? desc
        : desc.fields.find((f) => f.name === r.body)?.fieldKind === "message"
          ? (desc.fields.find((f) => f.name === r.body) as DescField & { message: DescMessage }).message
          : undefined;
    if (bodyDesc) {
      const prefix = r.body === "*" ? [] : [r.body];
      for (const [path, f] of bodyFields(bodyDesc, new Set(r.body === "*" ? vars : [])))
        for (const [what, value] of jsonValues(f))
          add({
            name: `body ${nameOf(path)}: ${what}`,
            path: base,
            body: bodyAt(path, value),
            field: nameOf([...prefix, ...path]),
          });
      const first = bodyDesc.fields.find((f) => !vars.includes(f.name));
      if (first) {
        add({
          name: `body: ${first.name} twice`,
          path: base,
          body: `{${JSON.stringify(first.name)}:null,${JSON.stringify(first.name)}:null}`,
          field: first.name,
        });
        if (first.jsonName !== first.name)
          add({
            name: `body: the camelCase ${first.jsonName}`,
            path: base,
            body: `{${JSON.stringify(first.jsonName)}:null}`,
            field: first.jsonName,
          });
      }
      add({ name: "body: an unknown field", path: base, body: '{"no_such_field":1}', field: "no_such_field" });
    }
    add({ name: "body: an array", path: base, body: "[]" });
    add({ name: "body: truncated", path: base, body: '{"a":' });
    add({ name: "body: deep nesting", path: base, body: `${'{"a":'.repeat(2000)}1${"}".repeat(2000)}` });
    add({ name: "body: not UTF-8", path: base, body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) });
    add({
      name: "body: form-encoded",
      path: base,
      body: "a=1",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
  }
  return cases;
}

/** The Connect path of an RPC. */
export function rpcPath(m: DescMethod): string {
  return `/${m.parent.typeName}/${m.name}`;
}

/** A Connect streaming envelope (flags 0) around one message. */
function envelope(payload: Buffer, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** Every hostile case of one RPC over Connect (JSON, binary, GET) and gRPC-Web. */
export function rpcCases(m: DescMethod): HostileCase[] {
  const target = `connect ${m.parent.typeName}/${m.name}`;
  const presented = presentedFor(m);
  const path = rpcPath(m);
  const stream = m.methodKind === "server_streaming";
  const cases: HostileCase[] = [];
  const add = (c: Omit<HostileCase, "target" | "presented">) => cases.push({ target, presented, ...c });
  const contentType = stream ? "application/connect+json" : "application/json";
  const wrap = (json: string) => (stream ? envelope(Buffer.from(json)) : json);
  const headers = { "content-type": contentType, "connect-protocol-version": "1" };
  // Each string field with a NUL, and one character over its declared length: refused by the contract's rules.
  for (const f of m.input.fields) {
    if (!(f.fieldKind === "scalar" && f.scalar === ScalarType.STRING)) continue;
    add({
      name: `${f.name}: a NUL`,
      method: "POST",
      path,
      headers,
      body: wrap(JSON.stringify({ [f.jsonName]: "a\u0000b" })),
      field: f.name,
      connectStream: stream,
    });
    const max = textRules(f)?.maxLength ?? 0;
    if (max > 0)
      add({
        name: `${f.name}: ${max + 1} characters`,
        method: "POST",
        path,
        headers,
        body: wrap(JSON.stringify({ [f.jsonName]: "x".repeat(max + 1) })),
        field: f.name,
        connectStream: stream,
      });
  }
  const binary = {
    "content-type": stream ? "application/connect+proto" : "application/proto",
    "connect-protocol-version": "1",
  };
  const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]);
  add({
    name: "binary: not a protobuf message",
    method: "POST",
    path,
    headers: binary,
    body: stream ? envelope(garbage) : garbage,
    connectStream: stream,
  });
  add({ name: "JSON: truncated", method: "POST", path, headers, body: wrap('{"a":'), connectStream: stream });
  if (stream)
    add({
      name: "an envelope longer than its body",
      method: "POST",
      path,
      headers,
      body: Buffer.from([0, 0, 0, 1, 0, 0x7b]),
      connectStream: true,
    });
  else {
    const get = (query: string) => `${path}?connect=v1&${query}`;
    add({
      name: "GET: message not base64",
      method: "GET",
      path: get("encoding=proto&base64=1&message=!!!%25%25"),
      headers: {},
    });
    add({ name: "GET: message not JSON", method: "GET", path: get("encoding=json&message=%7B%22a"), headers: {} });
    add({
      name: "GET: a huge message",
      method: "GET",
      path: get(`encoding=proto&base64=1&message=${"A".repeat(7000)}`),
      headers: {},
    });
    add({ name: "GET: a bad escape in message", method: "GET", path: get("encoding=json&message=%FF"), headers: {} });
  }
  // gRPC-Web: a frame that says more bytes than it has, and a frame of garbage.
  const grpcWeb = { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" };
  add({
    name: "gRPC-Web: a frame longer than its body",
    method: "POST",
    path,
    headers: grpcWeb,
    body: Buffer.from([0, 0, 0, 0, 9, 1]),
    grpcWeb: true,
  });
  add({
    name: "gRPC-Web: a frame of garbage",
    method: "POST",
    path,
    headers: grpcWeb,
    body: envelope(garbage),
    grpcWeb: true,
  });
  return cases;
}

/** Every JSON route and every RPC of the services, and the hostile cases of each. */
export function hostileTable(services: readonly DescService[]): { routes: HttpRoute[]; cases: HostileCase[] } {
  const routes = httpRoutes(services);
  const cases = [...routes.flatMap(routeCases), ...services.flatMap((s) => s.methods.flatMap(rpcCases))];
  return { routes, cases };
}
