import { isUtf8 } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { create, type DescMessage, type DescMethod, type DescService, getOption } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { no_content as noContent } from "../../../gen/aiagent/v1/field_options_pb.js";
import { DomainError, invalidArgument } from "../../domain/errors.js";
import { takeNow, whenReady } from "../../domain/streams.js";
import type { Logger } from "../../log.js";
import type { Outcome, RpcObserver } from "../../observability/rpc.js";
import type { AnyHandler, Call } from "../call.js";
import { type AnswerEncoder, EncodedAnswer } from "../encoded-answer.js";
import { toConnectError } from "../errors.js";
import type { Heartbeats } from "../heartbeats.js";
import { answerFailure } from "../http/boundary.js";
import { sharedValues } from "../shared-values.js";
import { errorResponse } from "./error-body.js";
import { compileTemplate, type HttpRoute, httpRoutes, type PathMatcher } from "./http-rules.js";
import { fieldsOf, flatZero, fromDocumentedJson, fromQuery, toDocumentedJson } from "./json-codec.js";
import { parseJsonWithoutDuplicates } from "./json-parse.js";
import { percentDecode } from "./percent.js";
import { parseQuery } from "./query.js";

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

/** A service and the handlers that implement it. */
export interface ServiceBinding {
  desc: DescService;
  handlers: Record<string, AnyHandler>;
}

/** Limits of the JSON routes. */
export interface TranscoderOptions {
  maxBodyBytes: number;
  /** A larger body limit for the methods named (an upload's), by method. */
  largeBodies?: ReadonlyMap<DescMethod, number>;
  log: Logger;
  /** Counts, times and traces each call (the metrics and traces). */
  observer?: RpcObserver;
  /** A streamed answer's bounds for a slow reader (configuration: AIAGENT_STREAM_BUFFER_BYTES, _STALL_MS). */
  stream?: StreamBounds;
}

/** How much a streamed answer holds for a reader that does not keep up, and for how long. */
export interface StreamBounds {
  /** Bytes written and not yet taken by the client before the stream stops producing and waits. */
  bufferBytes: number;
  /** Waiting that long for the client to take them ends the stream, its last line naming the resume cursor. */
  stallMs: number;
  /**
   * The streams' one heartbeat timer: the transport writes each beat itself (a line kept per stream, made again only
   * when its cursor changed; an SSE comment), and the handlers yield none (Call.transportBeats).
   */
  heartbeats?: Heartbeats;
}

const STREAM_BOUNDS: StreamBounds = { bufferBytes: 256 * 1024, stallMs: 10_000 };

interface Route extends HttpRoute {
  matcher: PathMatcher;
  handler: AnyHandler;
  /** The route's answers as the documented JSON; one function per route, so handlers may key kept encodings by it. */
  encode: AnswerEncoder;
  /** The response message is declared `no_content`: 204 and no body. */
  noContent: boolean;
}

const QUERY_CREDENTIAL = "access_token";
/** Every route carries an account's or a customer's data (or a credential): never stored by a cache. */
const CACHE_CONTROL = "no-store";
/** A literal route's path variables: none (shared, never written). */
const NO_VARS: Record<string, string> = Object.freeze({});
const SKIP = new Set([QUERY_CREDENTIAL]);

/**
 * The JSON-over-HTTP face of the services, built from their google.api.http annotations: one generic
 * transcoder, no per-endpoint code. It calls the very handlers the Connect routes call, so authentication,
 * validation and errors are the same on every protocol. Returns false for a path no annotation names.
 */
export function createTranscoder(
  bindings: readonly ServiceBinding[],
  opts: TranscoderOptions,
): (req: Req, res: Res) => boolean {
  const literal = new Map<string, Route[]>();
  // Templated routes by their first path segment, so a path no route starts with (every RPC path) tries none.
  const templated = new Map<string, Route[]>();
  for (const r of httpRoutes(bindings.map((b) => b.desc))) {
    const binding = bindings.find((b) => b.desc === r.method.parent)!;
    const handler = binding.handlers[r.method.localName];
    if (!handler) throw new Error(`no handler for ${r.method.parent.typeName}.${r.method.name}`);
    const output = r.method.output;
    const route: Route = {
      ...r,
      matcher: compileTemplate(r.template),
      handler,
      encode: (answer) => Buffer.from(JSON.stringify(toDocumentedJson(output, answer))),
      noContent: getOption(output, noContent),
    };
    if (route.matcher.literal) {
      const list = literal.get(r.template) ?? [];
      list.push(route);
      literal.set(r.template, list);
    } else {
      const head = headOf(r.template);
      if (head.startsWith("{")) throw new Error(`${r.template}: a JSON route must start with a literal segment`);
      templated.set(head, [...(templated.get(head) ?? []), route]);
    }
  }

  return (req, res) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    let candidates = literal.get(path);
    let vars: Record<string, string> = NO_VARS;
    if (!candidates) {
      for (const r of templated.get(headOf(path)) ?? []) {
        const m = r.matcher.match(path);
        if (m) {
          candidates = [...(candidates ?? []), r];
          vars = m;
        }
      }
      if (!candidates) return false;
    }
    const route = candidates.find((r) => r.verb === req.method);
    if (!route) {
      const allow = candidates.map((r) => r.verb).join(", ");
      const err = new ConnectError(`${req.method} is not allowed on ${path}; use ${allow}`, Code.Unimplemented);
      const e = errorResponse(err, false);
      res.writeHead(405, { ...e.headers, allow });
      res.end(e.body);
      return true;
    }
    const query = q < 0 ? "" : url.slice(q + 1);
    const { observer } = opts;
    if (!observer) {
      // serve answers its own failures (it never rejects): no reaction on its promise.
      void serve(route, req, res, query, vars, opts);
      return true;
    }
    observer
      .observe(
        route.method,
        "json",
        (n) => headerOf(req, n),
        (o) => serve(route, req, res, query, vars, opts, o),
      )
      .catch((e: unknown) => answerFailure(req, res, e, opts.log));
    return true;
  };
}

/** A request header by lower-case name (repeated ones joined). */
function headerOf(req: Req, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}

/** The first segment of a path ("/v1/account/keys" → "v1"). */
function headOf(path: string): string {
  const end = path.indexOf("/", 1);
  return end < 0 ? path.slice(1) : path.slice(1, end);
}

async function serve(
  route: Route,
  req: Req,
  res: Res,
  query: string,
  vars: Record<string, string>,
  opts: TranscoderOptions,
  outcome?: Outcome,
): Promise<void> {
  const responseHeaders: Record<string, string> = { "cache-control": CACHE_CONTROL };
  let presentedToken = false;
  try {
    const params = parseQuery(query);
    let queryAccessToken: string | undefined;
    for (const [name, value] of params) {
      if (name !== QUERY_CREDENTIAL) continue;
      if (queryAccessToken !== undefined) throw invalidArgument(QUERY_CREDENTIAL, "is given more than once");
      queryAccessToken = value;
    }
    presentedToken = queryAccessToken !== undefined || req.headers.authorization !== undefined;
    const streaming = route.method.methodKind === "server_streaming";
    const sse = streaming && wantsEventStream(req.headers.accept);
    if (sse) eventStreamInput(route, req, params, queryAccessToken);
    // A route without a body (every GET) is decoded without a promise: its input is all in the URL.
    const input =
      route.body === "" ? queryInput(route, params, vars) : await decodeInput(route, req, params, vars, opts);
    const bounds = opts.stream ?? STREAM_BOUNDS;
    const call = new RestCall(
      req,
      res,
      queryAccessToken,
      responseHeaders,
      route.encode,
      bounds.heartbeats !== undefined,
    );
    const out = route.handler(input as never, call);
    if (streaming) {
      await streamOut(route.method, out as AsyncIterable<object>, res, responseHeaders, opts.log, bounds, sse);
      return;
    }
    const answer = (await out) as object;
    // An answer declared no_content says nothing but its status (the console's sign-in and sign-out: their cookie).
    if (route.noContent) {
      res.writeHead(204, responseHeaders);
      res.end();
      return;
    }
    const body =
      answer instanceof EncodedAnswer ? answer.bytes : JSON.stringify(toDocumentedJson(route.method.output, answer));
    // With its length, the answer goes out in one piece: without it, Node frames it chunked (a length line, the
    // body, a last empty chunk), one write of several buffers per answer.
    const length = typeof body === "string" ? Buffer.byteLength(body) : body.length;
    res.writeHead(
      200,
      // The usual answer's headers in one literal; a spread would add each of its properties at run time.
      call.headersAdded
        ? { "content-type": "application/json", "content-length": String(length), ...responseHeaders }
        : { "content-type": "application/json", "content-length": String(length), "cache-control": CACHE_CONTROL },
    );
    res.end(body);
  } catch (e) {
    try {
      if (e instanceof ClientGone) {
        outcome?.fail(Code.Canceled);
        // The network's doing, not the service's: nobody is left to answer.
        opts.log.info("client closed the connection before its request was read", {
          method: req.method,
          path: route.template,
        });
        res.destroy?.();
        return;
      }
      outcome?.fail(e);
      writeError(res, toConnectError(e, opts.log), presentedToken, e instanceof BodyTooLarge ? req : undefined);
    } catch (failed) {
      // Answering the failure failed: the request boundary's last resort.
      answerFailure(req, res, failed, opts.log);
    }
  }
}

async function decodeInput(
  route: Route,
  req: Req,
  params: readonly (readonly [string, string])[],
  vars: Record<string, string>,
  opts: TranscoderOptions,
): Promise<unknown> {
  const desc = route.method.input;
  const maxBodyBytes = opts.largeBodies?.get(route.method) ?? opts.maxBodyBytes;
  let init: Record<string, unknown>;
  if (route.body === "*") {
    for (const [key] of params)
      if (!SKIP.has(key)) throw invalidArgument(key, "is not a known parameter; send fields in the JSON body");
    init = fromDocumentedJson(desc, await readJson(req, maxBodyBytes));
  } else {
    init = fromQuery(desc, params, SKIP);
    const f = fieldsOf(desc).byName.get(route.body);
    if (f?.fieldKind === "message")
      init[f.localName] = fromDocumentedJson(f.message, await readJson(req, maxBodyBytes), f.name);
  }
  return withPathVars(route, init, vars);
}

/** The input of a route without a body: the query's fields and the path's. */
function queryInput(
  route: Route,
  params: readonly (readonly [string, string])[],
  vars: Record<string, string>,
): unknown {
  const desc = route.method.input;
  // A message of scalars only, named by no path variable (nearly every GET, the frame's read among them): the query's
  // fields are set on a copy of its zero message, the message itself, not on an init object protobuf's `create`
  // would copy again.
  const zero = vars === NO_VARS ? flatZero(desc) : null;
  if (zero) return fromQuery(desc, params, SKIP, { ...zero });
  return withPathVars(route, fromQuery(desc, params, SKIP), vars);
}

/** The message from `init` and the path's variables (a body naming another object than the path is refused). */
function withPathVars(route: Route, init: Record<string, unknown>, vars: Record<string, string>): unknown {
  const desc = route.method.input;
  if (vars === NO_VARS) return create(desc, init as never);
  for (const [name, value] of Object.entries(vars)) {
    const f = fieldsOf(desc).byName.get(name);
    if (!f) continue;
    const fromPath = percentDecode(value, name);
    // The path names the object: a body that names another is refused, never silently overruled.
    const fromBody = init[f.localName];
    if (fromBody !== undefined && fromBody !== fromPath)
      throw invalidArgument(name, "in the body differs from the one in the path: leave it out of the body");
    init[f.localName] = fromPath;
  }
  return create(desc, init as never);
}

/** Reads a JSON request body: the right content type, within the size limit, UTF-8, well-formed, no repeated key. */
async function readJson(req: Req, maxBytes: number): Promise<unknown> {
  checkContentType(req.headers["content-type"] ?? "");
  const length = req.headers["content-length"];
  if (Number(length ?? "0") > maxBytes) throw tooLarge(maxBytes);
  // HTTP/1.1 frames a body with a Content-Length to exactly that many bytes: it cannot grow past the cap. One without
  // (chunked, or HTTP/2) is refused as soon as it passes the cap.
  const bytes = await readBody(req, maxBytes);
  // toString would silently turn invalid bytes into U+FFFD.
  if (!isUtf8(bytes)) throw invalidArgument("body", "is not valid UTF-8");
  const text = bytes.toString("utf8");
  if (text.trim() === "") throw invalidArgument("body", "is required: send a JSON object");
  return parseJsonWithoutDuplicates(text);
}

/**
 * A request body, read with listeners: a stream's async iterator costs more than reading a small body does (3–4% of a
 * token call's CPU), and leaving one destroys the request, where a body over the cap must stay readable (the 413's
 * lingering close discards the rest of it).
 */
function readBody(req: Req, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err: Error | undefined) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      // With a declared length not expected (it was checked, and the parser holds the body to it).
      if (size > maxBytes) {
        req.pause();
        settle(tooLarge(maxBytes));
      }
    };
    const onEnd = () => settle(undefined);
    // An error or a close before the body's end: the client went away (reset, or its half of the connection closed).
    const onError = (e: Error) => settle(new ClientGone(e));
    const onClose = () => settle(new ClientGone());
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

/** application/json, in UTF-8 (RFC 8259 §8.1): a charset parameter, if any, must say utf-8. */
function checkContentType(header: string): void {
  // What nearly every client sends: nothing to split.
  if (header === "application/json") return;
  const [type, ...params] = header.split(";");
  if (type!.trim().toLowerCase() !== "application/json")
    throw invalidArgument("content-type", "must be application/json");
  for (const p of params) {
    const eq = p.indexOf("=");
    if (eq < 0 || p.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    const charset = p
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .toLowerCase();
    if (charset !== "utf-8") throw invalidArgument("content-type", "charset must be utf-8 (or left out)");
  }
}

/** A request body over the size limit (answered 413). */
class BodyTooLarge extends DomainError {}

/** The client closed or reset its connection before its request body was read: nobody to answer. */
class ClientGone extends Error {
  constructor(cause?: Error) {
    super("the client closed the connection before the request body was read", cause ? { cause } : undefined);
    this.name = "ClientGone";
  }
}

/**
 * How long, and how much of the rest of an oversized body, the server reads and discards after its 413 before it
 * closes (a lingering close, as Apache and nginx do): closing with the body still arriving makes the client's kernel
 * answer a reset, which can destroy the 413 before a client that writes its whole request before reading reads it.
 */
const LINGER_MS = 5_000;
const LINGER_BYTES = 16 * 1024 * 1024;

function tooLarge(maxBytes: number): DomainError {
  return new BodyTooLarge("resource_exhausted", `body: must be at most ${maxBytes} bytes`, { field: "body" });
}

/**
 * A JSON route's call. A class rather than an object literal with a getter, which V8 keeps as a dictionary (about
 * 0.5 KB with its closures, for a stream's whole life) and builds in its runtime on every request (0.7 µs); a class's
 * instances share one shape, and the signal's getter sits on the prototype.
 */
class RestCall implements Call {
  private controller: AbortController | undefined;
  readonly peer: string;
  /** A handler added or changed a response header (else the answer's headers are the usual ones). */
  headersAdded = false;

  constructor(
    private readonly req: Req,
    private readonly res: Res,
    readonly queryAccessToken: string | undefined,
    private readonly responseHeaders: Record<string, string>,
    readonly encoder: AnswerEncoder,
    readonly transportBeats: boolean,
  ) {
    this.peer = req.socket?.remoteAddress ?? "";
  }

  header(name: string): string | undefined {
    return headerOf(this.req, name);
  }

  /** Made only when a handler asks: most requests never need one, and each costs. */
  get signal(): AbortSignal {
    if (!this.controller) {
      const c = new AbortController();
      this.controller = c;
      const res = this.res;
      res.once("close", () => {
        if (!res.writableFinished) c.abort();
      });
    }
    return this.controller.signal;
  }

  setResponseHeader(name: string, value: string): void {
    this.headersAdded = true;
    this.responseHeaders[name] = value;
  }

  /** On the response's close, as `signal` is (a closed response whose answer was not finished: the client went). */
  onClientGone(listener: () => void): void {
    this.res.on("close", listener);
  }

  offClientGone(listener: () => void): void {
    this.res.removeListener("close", listener);
  }
}

/**
 * The JSON of an event, without its cursor, by the event's object: an entry of an account's log handed to many
 * streams (the shared reader, and the handlers' one conversion per record) is encoded once, not once per stream.
 */
const encodedEvents = new WeakMap<DescMessage, WeakMap<object, string>>();

const cursorFields = new WeakMap<DescMessage, boolean>();
/** The response type has a plain string field `cursor`, written as "cursor" in JSON. */
function hasCursor(output: DescMessage): boolean {
  let has = cursorFields.get(output);
  if (has === undefined) {
    const f = output.fields.find((x) => x.localName === "cursor");
    has = f !== undefined && f.name === "cursor" && f.oneof === undefined && f.fieldKind === "scalar";
    cursorFields.set(output, has);
  }
  return has;
}

/** One line of a JSON stream: `{"result":…}`. */
function streamLine(output: DescMessage, item: object): string {
  const { event, cursor, ...rest } = item as { event?: { case?: string; value?: unknown }; cursor?: unknown };
  // A heartbeat (an item with only its cursor): the line is known without the codec.
  if (event === undefined && typeof cursor === "string" && Object.keys(rest).length === 0 && hasCursor(output))
    return `{"result":{"cursor":${JSON.stringify(cursor)}}}\n`;
  const value = event?.value;
  if (
    !event?.case ||
    typeof value !== "object" ||
    value === null ||
    !sharedValues.has(value) ||
    typeof cursor !== "string" ||
    Object.keys(rest).length > 0
  )
    return `${JSON.stringify({ result: toDocumentedJson(output, item) })}\n`;
  let byValue = encodedEvents.get(output);
  if (!byValue) encodedEvents.set(output, (byValue = new WeakMap()));
  let body = byValue.get(value);
  if (body === undefined) {
    const json = toDocumentedJson(output, { event });
    delete json.cursor;
    body = JSON.stringify(json).slice(1, -1);
    byValue.set(value, body);
  }
  return `{"result":{${body}${body === "" ? "" : ","}"cursor":${JSON.stringify(cursor)}}}\n`;
}

/**
 * The NDJSON line of an event, as bytes, by the event's object: every stream of a conversation is sent the same event
 * with the same cursor (its message_order), so the line is made and encoded once and each stream writes the same
 * bytes (they live outside the JavaScript heap). Kept with the last cursor it was made for, and with its HTTP/1.1
 * chunk (`chunk`, the line framed: its length in hex, CRLF, the line, CRLF), made at the first stream that writes it.
 */
export interface SharedLine {
  cursor: string;
  bytes: Buffer;
  chunk: Buffer | undefined;
}

const encodedLines = new WeakMap<DescMessage, WeakMap<object, SharedLine>>();

function ndjsonLine(output: DescMessage, item: object): string | SharedLine {
  const { event, cursor } = item as { event?: { case?: string; value?: unknown }; cursor?: unknown };
  const value = event?.value;
  if (
    !event?.case ||
    typeof cursor !== "string" ||
    typeof value !== "object" ||
    value === null ||
    !sharedValues.has(value) ||
    Object.keys(item).length !== 2
  )
    return streamLine(output, item);
  let byValue = encodedLines.get(output);
  if (!byValue) encodedLines.set(output, (byValue = new WeakMap()));
  const kept = byValue.get(value);
  if (kept?.cursor === cursor) return kept;
  const line: SharedLine = { cursor, bytes: Buffer.from(streamLine(output, item)), chunk: undefined };
  byValue.set(value, line);
  return line;
}

const CRLF = Buffer.from("\r\n", "latin1");

/** What a ServerResponse keeps of its own that says whether its socket may be written to directly. */
interface OwnState {
  _headerSent?: boolean;
  outputData?: unknown[];
}

/**
 * Writes a shared line to an HTTP/1.1 chunked answer's socket as one chunk made once for every stream (one buffer, one
 * `write`), when the answer's own write would do the same: its head is sent, nothing of it is queued, the socket is
 * its own and open. `res.write` makes the chunk again for each stream (the length in hex, then four writes corked and
 * uncorked on the next tick, one `writev`): under fan-out that is the same work once per stream per event.
 * False when it did not write (HTTP/2, no chunking, the head not sent yet, a socket not assigned or closing): the
 * caller writes through the answer.
 */
export function writeChunk(w: ServerResponse, line: SharedLine): boolean {
  const own = w as ServerResponse & OwnState;
  const socket = w.socket as (ServerResponse["socket"] & { _httpMessage?: unknown }) | null;
  if (
    !w.chunkedEncoding ||
    own._headerSent !== true ||
    // A corked answer keeps its chunks in its own buffer until uncorked (Node 20.2+): written through it, in order.
    w.writableCorked !== 0 ||
    own.outputData?.length !== 0 ||
    w.writableEnded ||
    !socket ||
    socket._httpMessage !== w ||
    !socket.writable ||
    socket.destroyed
  )
    return false;
  line.chunk ??= Buffer.concat([Buffer.from(`${line.bytes.length.toString(16)}\r\n`, "latin1"), line.bytes, CRLF]);
  socket.write(line.chunk);
  return true;
}

async function streamOut(
  method: DescMethod,
  items: AsyncIterable<object>,
  res: Res,
  headers: Record<string, string>,
  log: Logger,
  bounds: StreamBounds,
  sse: boolean,
): Promise<void> {
  let started = false;
  let cursor: string | undefined;
  const w = res as ServerResponse;
  // Whether a chunk went to the socket itself (writeChunk).
  let direct = false;
  const contentType = sse ? "text/event-stream" : "application/x-ndjson";
  // An item as written: an NDJSON line, or an SSE event whose id is the cursor (the browser's Last-Event-ID).
  const frame = (line: string, c: string | undefined) =>
    sse ? `${c ? `id: ${c}\n` : ""}data: ${line.slice(0, -1)}\n\n` : line;
  const errorFrame = (body: unknown) => {
    const json = JSON.stringify({ error: body });
    return sse ? `event: error\ndata: ${json}\n\n` : `${json}\n`;
  };
  // Heartbeats on the one timer, written here: the line is made once per cursor, and not at all while the client has
  // not taken what was written (that stream is not idle; the loop below waits for it).
  let beatFor: string | undefined;
  let beatLine = SSE_BEAT;
  const beat = () => {
    if (w.writableLength > 0 || w.writableEnded || w.destroyed) return;
    if (!sse && beatFor !== (cursor ?? "")) {
      beatFor = cursor ?? "";
      beatLine = `{"result":{"cursor":${JSON.stringify(beatFor)}}}\n`;
    }
    try {
      w.write(beatLine);
    } catch {
      // An HTTP/2 stream closed meanwhile throws on a write: the stream is gone, and so are its beats.
      leaveBeats?.();
    }
  };
  let leaveBeats: (() => void) | undefined;
  const it = items[Symbol.asyncIterator]();
  // The stream ended or failed by itself (else it is ended here, as `for await` would).
  let over = false;
  try {
    for (;;) {
      let step: IteratorResult<object> | undefined;
      try {
        if (started) {
          // Caught up, its events come by the stream's callback, taken at once through every layer, with no promise
          // of their own; else (catching up, a layer that must wait) by `next` (domain/streams.ts).
          step = takeNow<object>(it);
          // Twice at most: an event may wait for its clearance, then for the disk. A stream that cannot hand its
          // events at once (catching up, a generator) is read by `next`.
          for (let i = 0; i < 2 && !step; i++) {
            await new Promise<void>((r) => whenReady(it, r));
            step = takeNow<object>(it);
          }
        }
        step ??= await it.next();
      } catch (e) {
        over = true;
        throw e;
      }
      if (step.done) {
        over = true;
        break;
      }
      const item = step.value;
      if (!started) {
        res.writeHead(200, {
          "content-type": contentType,
          "x-content-type-options": "nosniff",
          ...headers,
        });
        started = true;
        // The beats start after the first item: once the stream has checked its caller may read it.
        if (bounds.heartbeats && hasCursor(method.output)) {
          leaveBeats = bounds.heartbeats.join(beat);
          // Gone with the connection at once, not only once the stream's generators have wound down.
          w.once("close", leaveBeats);
        }
      }
      const c = (item as { cursor?: unknown }).cursor;
      if (typeof c === "string" && c !== "") cursor = c;
      if (sse) w.write(frame(streamLine(method.output, item), typeof c === "string" ? c : undefined));
      else {
        const line = ndjsonLine(method.output, item);
        if (typeof line === "string") w.write(line);
        else if (writeChunk(w, line)) direct = true;
        else w.write(line.bytes);
      }
      // Backpressure: a reader that does not take what was written stops the stream's reads (bounded memory), and
      // one that stays behind is let go with the cursor to resume from; it catches up from storage, in pages.
      if (w.writableLength > bounds.bufferBytes && !(await drained(w, bounds.stallMs, direct ? w.socket : null))) {
        leaveBeats?.();
        if (!w.destroyed) {
          const message = `the client fell too far behind: watch again with after_cursor=${cursor ?? ""} to resume`;
          w.write(errorFrame({ code: "resource_exhausted", message, cursor: cursor ?? "" }));
          w.end();
          // What stays unread is not kept for long.
          setTimeout(() => w.destroy(), Math.max(bounds.stallMs, 5000)).unref();
        }
        return;
      }
    }
  } catch (e) {
    if (!started) throw e;
    // Once streaming has begun the status is sent: the error travels as the last line (SSE: an `error` event).
    const err = errorResponse(toConnectError(e, log), false);
    (res as ServerResponse).write(errorFrame(JSON.parse(err.body) as unknown));
  } finally {
    leaveBeats?.();
    if (!over) await it.return?.()?.catch(() => undefined);
  }
  if (!started) res.writeHead(200, { "content-type": contentType, ...headers });
  res.end();
}

/** An SSE heartbeat: a comment line, which EventSource and fetch-based readers skip. */
const SSE_BEAT = ":\n\n";

/** Whether the client asks for server-sent events (Accept: text/event-stream) rather than NDJSON. */
function wantsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept);
}

/**
 * A server-sent events request: the access token never in the URL (a URL is logged, kept in history, sent as
 * Referer), and the browser's resume cursor, Last-Event-ID, as `after_cursor` (it wins over the URL's, which is the
 * one the stream was first opened with).
 */
function eventStreamInput(
  route: Route,
  req: Req,
  params: [string, string][],
  queryAccessToken: string | undefined,
): void {
  if (queryAccessToken !== undefined)
    throw invalidArgument(
      QUERY_CREDENTIAL,
      "must not be in the URL of an event stream: send the token in the Authorization header (Bearer)",
    );
  const last = req.headers["last-event-id"];
  if (last === undefined || !fieldsOf(route.method.input).byName.has("after_cursor")) return;
  if (typeof last !== "string" || !/^\d{1,10}$/.test(last))
    throw invalidArgument("Last-Event-ID", "must be an event id this stream sent (digits)");
  for (let i = params.length - 1; i >= 0; i--) if (params[i]![0] === "after_cursor") params.splice(i, 1);
  params.push(["after_cursor", last]);
}

/** Writes an error; `oversized` is the request whose body was too large (413, then a lingering close). */
function writeError(res: Res, err: ConnectError, presentedToken: boolean, oversized?: Req): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const e = errorResponse(err, presentedToken);
  if (oversized) {
    // Retrying the same body cannot help: 413, not 429 with Retry-After.
    e.status = 413;
    delete e.headers["retry-after"];
    if (oversized.httpVersionMajor === 1) {
      lingeringClose(oversized, res as ServerResponse, e.status, e.headers, e.body);
      return;
    }
  }
  res.writeHead(e.status, e.headers);
  res.end(e.body);
}

/** Waits until the response's buffer drained (true), it closed or `ms` passed (false). */
function drained(w: ServerResponse, ms: number, socket?: ServerResponse["socket"]): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      w.off("drain", onDrain);
      socket?.off("drain", onDrain);
      w.off("close", onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    // Chunks written to the socket itself (writeChunk) leave the answer not waiting for a drain: the socket's says so.
    w.on("drain", onDrain);
    socket?.on("drain", onDrain);
    w.on("close", onClose);
  });
}

/**
 * HTTP/1.1's answer to an oversized body: the whole 413 is sent at once (with its length, so the client can read it
 * while it is still writing), then the rest of the body is read and discarded until it ends, LINGER_BYTES have been
 * discarded or LINGER_MS have passed; only then does the response end and the connection close. A client cannot make
 * the server read an endless body: past either bound the connection is cut.
 */
function lingeringClose(
  req: Req,
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: string,
): void {
  res.writeHead(status, { ...headers, connection: "close", "content-length": String(Buffer.byteLength(body)) });
  res.write(body);
  let discarded = 0;
  const done = (cut: boolean) => {
    clearTimeout(timer);
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("close", onEnd);
    req.off("error", onEnd);
    res.end();
    if (cut) req.socket?.destroy();
  };
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) done(true);
  };
  const onEnd = () => done(false);
  const timer = setTimeout(() => done(true), LINGER_MS);
  timer.unref();
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("close", onEnd);
  req.on("error", onEnd);
  req.resume();
}
