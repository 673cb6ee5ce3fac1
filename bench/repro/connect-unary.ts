import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { create, createFileRegistry, type DescMessage, toBinary, toJsonString } from "@bufbuild/protobuf";
import { configureTextEncoding, getTextEncoding } from "@bufbuild/protobuf/wire";
import {
  FileDescriptorProtoSchema,
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
} from "@bufbuild/protobuf/wkt";
import { createConnectRouter } from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import { connectNodeAdapter } from "@connectrpc/connect-node";

// A minimal reproduction of connect-node's unary floor, against connect-node alone (no service code): one unary
// method whose answer is the size and shape of the service's frame read (20 messages, about 7 kB of JSON), served
// by a plain `connectNodeAdapter` over node:http (Connect, JSON) and node:http2 (gRPC), next to bare node:http and
// node:http2 servers answering the same bytes. Each server runs in a child process and reports its own CPU time;
// the parent drives it (32 requests in flight, keep-alive) and prints CPU µs per request. Then, in-process, the
// same router's unary handler called without any HTTP (connect's own share) and the per-call pieces it is made of.
//
//   node --import tsx bench/repro/connect-unary.ts [--seconds 3] [--rounds 2] [--only bare-h1,connect-h1] [--parts-only]
// REPRO_PROF=<dir> writes a CPU profile of each server child there.

// The contract, built in code so the file stands alone: repro.v1.Pages/Get(GetRequest) returns (Page).
const str = (name: string, number: number, jsonName: string) => ({
  name,
  number,
  type: Type.STRING,
  label: Label.OPTIONAL,
  jsonName,
});
const file = create(FileDescriptorProtoSchema, {
  name: "repro/v1/pages.proto",
  package: "repro.v1",
  syntax: "proto3",
  messageType: [
    { name: "GetRequest", field: [str("conversation_id", 1, "conversationId"), str("access_token", 2, "accessToken")] },
    { name: "Document", field: [str("title", 1, "title"), str("url", 2, "url"), str("snippet", 3, "snippet")] },
    {
      name: "Message",
      field: [
        str("message_id", 1, "messageId"),
        str("conversation_id", 2, "conversationId"),
        str("conversation_created_at", 3, "conversationCreatedAt"),
        str("content", 4, "content"),
        str("created_at", 5, "createdAt"),
        { name: "message_order", number: 6, type: Type.INT32, label: Label.OPTIONAL, jsonName: "messageOrder" },
        str("tool_calls", 7, "toolCalls"),
        {
          name: "documents",
          number: 8,
          type: Type.MESSAGE,
          typeName: ".repro.v1.Document",
          label: Label.REPEATED,
          jsonName: "documents",
        },
        str("role", 9, "role"),
      ],
    },
    {
      name: "Page",
      field: [
        {
          name: "messages",
          number: 1,
          type: Type.MESSAGE,
          typeName: ".repro.v1.Message",
          label: Label.REPEATED,
          jsonName: "messages",
        },
        { name: "has_more", number: 2, type: Type.BOOL, label: Label.OPTIONAL, jsonName: "hasMore" },
      ],
    },
  ],
  service: [
    { name: "Pages", method: [{ name: "Get", inputType: ".repro.v1.GetRequest", outputType: ".repro.v1.Page" }] },
  ],
});
const registry = createFileRegistry(file, () => undefined);
const Pages = registry.getService("repro.v1.Pages")!;
const Page = registry.getMessage("repro.v1.Page")!;
const GetRequest = registry.getMessage("repro.v1.GetRequest")!;
const PATH = "/repro.v1.Pages/Get";

// The frame read's answer: 20 messages of a 30-message conversation, as the service's page cache holds it.
function page(count: number) {
  const conversationId = "00000000-000f-46a4-91e7-7ccd11b77e52";
  const at = (s: number) => new Date(Date.UTC(2026, 10, 24, 21, 13, s)).toISOString();
  return create(
    Page as DescMessage,
    {
      messages: Array.from({ length: count }, (_, i) => ({
        messageId: `00000000-${(16 + i).toString(16).padStart(4, "0")}-46a4-91e7-7ccd11b77e52`,
        conversationId,
        conversationCreatedAt: at(0),
        content:
          i % 2 === 0
            ? "How do I change the delivery address on my order?"
            : "You can change the address from your account page until the order ships. (Source: Shipping FAQ)",
        createdAt: at(i),
        messageOrder: i + 1,
        toolCalls: "",
        documents: [],
        role: i % 2 === 0 ? "user" : "assistant",
      })),
      hasMore: true,
    } as never,
  );
}

const request = create(
  GetRequest as DescMessage,
  {
    conversationId: "00000000-000f-46a4-91e7-7ccd11b77e52",
    accessToken: "eyJhbGciOiJFUzI1NiJ9.a-frame-access-token-of-typical-length-for-the-repro.c2lnbmF0dXJl",
  } as never,
);
const requestJson = toJsonString(GetRequest as DescMessage, request);
const requestBinary = toBinary(GetRequest as DescMessage, request);

/** A gRPC length-prefixed message. */
function grpcFrame(bytes: Uint8Array): Buffer {
  const out = Buffer.alloc(5 + bytes.length);
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
}

type Variant = "bare-h1" | "connect-h1" | "connect-h1-empty" | "bare-h2" | "connect-h2" | "connect-h2-empty";
const VARIANTS: { id: Variant; what: string; h2: boolean }[] = [
  { id: "bare-h1", what: "node:http, the same JSON bytes", h2: false },
  { id: "connect-h1", what: "connectNodeAdapter, Connect JSON over HTTP/1.1", h2: false },
  { id: "connect-h1-empty", what: "the same, an empty answer (no serialization)", h2: false },
  { id: "bare-h2", what: "node:http2, the same gRPC bytes and trailers", h2: true },
  { id: "connect-h2", what: "connectNodeAdapter, gRPC over HTTP/2", h2: true },
  { id: "connect-h2-empty", what: "the same, an empty answer (no serialization)", h2: true },
];

// ---- the server child: serves one variant, answers "cpu" with its own CPU time ----

async function serve(variant: Variant): Promise<void> {
  const full = page(20);
  const answer = variant.endsWith("-empty") ? page(0) : full;
  const json = Buffer.from(toJsonString(Page, full));
  const grpc = grpcFrame(toBinary(Page, full));
  const adapter = connectNodeAdapter({
    routes: (router) => router.service(Pages, { get: async () => answer } as never),
  });
  let listener: http.RequestListener;
  if (variant === "bare-h1")
    listener = (req, res) => {
      req.on("data", () => undefined);
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "content-length": json.length });
        res.end(json);
      });
    };
  else if (variant === "bare-h2")
    listener = (req, res) => {
      req.on("data", () => undefined);
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/grpc+proto" });
        res.addTrailers({ "grpc-status": "0", "grpc-message": "" });
        res.end(grpc);
      });
    };
  else listener = adapter as http.RequestListener;
  const server = variant.includes("-h2")
    ? http2.createServer(listener as never)
    : http.createServer({ keepAliveTimeout: 60_000 }, listener);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  process.on("message", (m) => {
    if (m === "cpu") {
      const u = process.cpuUsage();
      process.send!({ cpu: u.user + u.system });
    }
  });
  // Exit normally on SIGTERM, so that `--cpu-prof` (REPRO_PROF=<dir>) writes its profile.
  process.on("SIGTERM", () => process.exit(0));
  process.send!({ port: (server.address() as AddressInfo).port });
}

// ---- the parent: drives each server, reads its CPU time around the load ----

function ask<T>(child: ChildProcess, key: string, message?: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: Record<string, T>) => {
      if (key in m) {
        child.off("message", on);
        resolve(m[key]!);
      }
    };
    child.on("message", on);
    if (message) child.send(message);
  });
}

async function loadH1(port: number, seconds: number, inFlight: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: inFlight });
  const body = Buffer.from(requestJson);
  const headers = {
    "content-type": "application/json",
    "connect-protocol-version": "1",
    "content-length": String(body.length),
  };
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request({ port, host: "127.0.0.1", method: "POST", path: PATH, agent, headers }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
        res.on("data", () => undefined);
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end(body);
    });
  const end = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < end) {
        await one();
        n++;
      }
    }),
  );
  agent.destroy();
  return n;
}

async function loadH2(port: number, seconds: number, inFlight: number): Promise<number> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  const frame = grpcFrame(requestBinary);
  const headers = {
    ":method": "POST",
    ":path": PATH,
    "content-type": "application/grpc+proto",
    te: "trailers",
  };
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const s = session.request(headers);
      let status: string | undefined;
      s.on("response", (h) => (status ??= h["grpc-status"] as string | undefined));
      s.on("trailers", (t) => (status = t["grpc-status"] as string));
      s.on("data", () => undefined);
      s.on("end", () => (status === "0" ? resolve() : reject(new Error(`grpc-status ${status}`))));
      s.on("error", reject);
      s.end(frame);
    });
  const end = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < end) {
        await one();
        n++;
      }
    }),
  );
  session.close();
  return n;
}

async function measure(v: (typeof VARIANTS)[number], seconds: number): Promise<{ rps: number; cpuUs: number }> {
  const child = fork(fileURLToPath(import.meta.url), ["--serve", v.id], {
    stdio: "inherit",
    execArgv: [
      ...process.execArgv,
      ...(process.env.REPRO_PROF ? ["--cpu-prof", "--cpu-prof-dir", process.env.REPRO_PROF] : []),
    ],
  });
  try {
    const port = await ask<number>(child, "port");
    const drive = (s: number) => (v.h2 ? loadH2(port, s, 32) : loadH1(port, s, 32));
    await drive(1);
    const before = await ask<number>(child, "cpu", "cpu");
    const t0 = process.hrtime.bigint();
    const n = await drive(seconds);
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const after = await ask<number>(child, "cpu", "cpu");
    return { rps: n / wall, cpuUs: (after - before) / n };
  } finally {
    child.kill();
  }
}

// ---- in-process: connect's unary handler without HTTP, and the pieces of one call ----

/** CPU µs per call of `fn`, the median of 5 batches of `n` calls. */
async function perCall(n: number, fn: () => unknown): Promise<number> {
  const runs: number[] = [];
  for (let r = 0; r < 6; r++) {
    const start = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      const x = fn();
      if (x instanceof Promise) await x;
    }
    const u = process.cpuUsage(start);
    if (r > 0) runs.push((u.user + u.system) / n);
  }
  return runs.sort((a, b) => a - b)[2]!;
}

async function parts(): Promise<{ name: string; us: number }[]> {
  const full = page(20);
  const uHandler = (answer: unknown, protocol: "connect" | "grpc") => {
    const router = createConnectRouter();
    router.service(Pages, { get: async () => answer } as never);
    const h = router.handlers[0]!;
    const body = protocol === "connect" ? new TextEncoder().encode(requestJson) : grpcFrame(requestBinary);
    const header: Record<string, string> =
      protocol === "connect"
        ? { "content-type": "application/json", "connect-protocol-version": "1" }
        : { "content-type": "application/grpc+proto", te: "trailers" };
    return async () => {
      const res = await h({
        httpVersion: protocol === "connect" ? "1.1" : "2.0",
        method: "POST",
        url: `http://127.0.0.1${PATH}`,
        header: new Headers(header),
        body: createAsyncIterable([body]),
        signal: new AbortController().signal,
      });
      if (res.body) for await (const _ of res.body as AsyncIterable<Uint8Array>);
    };
  };
  const nodeHeaders = {
    host: "127.0.0.1:8080",
    "content-type": "application/json",
    "connect-protocol-version": "1",
    "content-length": "140",
    connection: "keep-alive",
  };
  const webHeaders = new Headers(nodeHeaders);
  const out: { name: string; us: number }[] = [];
  const add = async (name: string, n: number, fn: () => unknown) => out.push({ name, us: await perCall(n, fn) });
  await add("connect's unary handler, Connect JSON, 20 messages (no HTTP)", 5000, uHandler(full, "connect"));
  await add("  the same, an empty answer", 5000, uHandler(page(0), "connect"));
  await add("connect's unary handler, gRPC, 20 messages (no HTTP)", 5000, uHandler(full, "grpc"));
  await add("  the same, an empty answer", 5000, uHandler(page(0), "grpc"));
  await add("toJsonString of the 20-message answer", 5000, () => toJsonString(Page, full));
  await add("toBinary of the 20-message answer", 5000, () => toBinary(Page, full));
  // The same with protobuf-es's string encoder swapped for Buffer.from (pooled): TextEncoder's share of toBinary.
  const stock = getTextEncoding();
  configureTextEncoding({ ...stock, encodeUtf8: (text) => Buffer.from(text, "utf8") });
  await add("  the same, strings encoded with Buffer.from", 5000, () => toBinary(Page, full));
  configureTextEncoding(stock);
  await add("AbortController + abort() with no reason (a DOMException)", 20000, () => new AbortController().abort());
  await add("AbortController + abort(reason)", 20000, () => new AbortController().abort(PATH));
  // Kept, so that the allocation is not optimised away.
  const kept: AbortController[] = [];
  await add("AbortController alone", 20000, () => kept.push(new AbortController()) > 1e6 && kept.splice(0));
  await add("new Headers(node headers) (5 headers)", 20000, () => new Headers(nodeHeaders));
  await add("new Headers(headers) (a copy)", 20000, () => new Headers(webHeaders));
  await add("new URL(path, base).toString()", 20000, () => new URL(PATH, "http://127.0.0.1:8080").toString());
  await add("an async generator drained (for await)", 20000, async () => {
    for await (const _ of createAsyncIterable([full]));
  });
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      serve: { type: "string" },
      seconds: { type: "string", default: "3" },
      rounds: { type: "string", default: "2" },
      "parts-only": { type: "boolean", default: false },
      only: { type: "string" },
    },
  });
  if (values.serve) return serve(values.serve as Variant);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const w = (s: string, n: number) => s.padStart(n);
  if (!values["parts-only"]) {
    console.log(
      `${w("variant", 18)} ${w("req/s", 8)} ${w("CPU µs/req", 11)}  (median of ${rounds}; ${seconds} s each)`,
    );
    const only = values.only?.split(",");
    for (const v of VARIANTS.filter((x) => !only || only.includes(x.id))) {
      const runs: { rps: number; cpuUs: number }[] = [];
      for (let r = 0; r < rounds; r++) runs.push(await measure(v, seconds));
      const mid = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
      const rps = mid(runs.map((x) => x.rps));
      const cpu = mid(runs.map((x) => x.cpuUs));
      console.log(`${w(v.id, 18)} ${w(rps.toFixed(0), 8)} ${w(cpu.toFixed(0), 11)}  ${v.what}`);
    }
  }
  console.log("\nin-process, CPU µs per call:");
  for (const p of await parts()) console.log(`${w(p.us.toFixed(2), 8)}  ${p.name}`);
}

await main();
