import * as http from "node:http";
import * as https from "node:https";
import type { Embedder } from "../domain/knowledge/source.js";
import { isPublicAddress } from "../webhooks/addresses.js";
import { guardedLookup } from "../webhooks/http-sender.js";

/** An OpenAI-compatible embeddings endpoint (AIAGENT_EMBEDDINGS_*). */
export interface EmbeddingsSettings {
  /** Base URL without the trailing slash, e.g. https://api.openai.com/v1; `/embeddings` is appended. */
  baseUrl: string;
  apiKey: string;
  model: string;
}

/** Texts sent in one request. */
const BATCH = 64;
/** Characters of one text sent (a passage is at most 1,500; a question is cut here too). */
const MAX_TEXT_CHARS = 8000;
/** Largest answer read, bytes (64 vectors of 3,072 numbers as JSON fit with room). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Most numbers in one vector. */
const MAX_DIMENSIONS = 8192;

/** Why the endpoint gave no vectors (for the log; never holds the key). */
export class EmbeddingsError extends Error {
  override readonly name = "EmbeddingsError";
}

/**
 * The embeddings endpoint's client: requests go through the SSRF guard (outside development only public addresses,
 * checked at the connection itself), each bounded in time and in the size of its answer; the key is sent only to
 * the endpoint, as a bearer token, and never logged.
 */
export function openAiEmbedder(s: EmbeddingsSettings, o: { development: boolean; timeoutMs?: number }): Embedder {
  const lookup = guardedLookup(o.development);
  const url = new URL(`${s.baseUrl}/embeddings`);
  const timeoutMs = o.timeoutMs ?? 30_000;
  const post = (body: string, signal: AbortSignal) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const host = url.hostname.replace(/^\[|\]$/g, "");
      if (!o.development && (/^[\d.]+$/.test(host) || host.includes(":")) && !isPublicAddress(host))
        return reject(new EmbeddingsError(`${url.origin} is not a public address`));
      const headers: Record<string, string> = {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
      };
      if (s.apiKey) headers.authorization = `Bearer ${s.apiKey}`;
      const req = (url.protocol === "https:" ? https : http).request(
        url,
        { method: "POST", lookup, agent: false, signal, headers },
        (res) => {
          const chunks: Buffer[] = [];
          let read = 0;
          res.on("data", (c: Buffer) => {
            read += c.length;
            if (read > MAX_ANSWER_BYTES) {
              res.destroy();
              reject(new EmbeddingsError(`the embeddings answer is larger than ${MAX_ANSWER_BYTES} bytes`));
            } else chunks.push(c);
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
          res.on("error", reject);
        },
      );
      req.on("error", (e: NodeJS.ErrnoException) =>
        reject(
          e.name === "AbortError"
            ? e
            : new EmbeddingsError(
                `${url.origin} could not be reached (${e.code === "EADDRNOTPUBLIC" ? "not a public address" : (e.code ?? e.message)})`,
              ),
        ),
      );
      req.end(body);
    });
  const batch = async (texts: string[], outer: AbortSignal): Promise<Float32Array[]> => {
    const timeout = AbortSignal.timeout(timeoutMs);
    let r: { status: number; text: string };
    try {
      r = await post(
        JSON.stringify({ model: s.model, input: texts.map((t) => t.slice(0, MAX_TEXT_CHARS)) }),
        AbortSignal.any([outer, timeout]),
      );
    } catch (e) {
      if (timeout.aborted && !outer.aborted)
        throw new EmbeddingsError(`the embeddings endpoint did not answer within ${Math.round(timeoutMs / 1000)} s`);
      throw e;
    }
    if (r.status !== 200) throw new EmbeddingsError(`the embeddings endpoint answered HTTP ${r.status}`);
    let data: unknown;
    try {
      data = (JSON.parse(r.text) as { data?: unknown }).data;
    } catch {
      throw new EmbeddingsError("the embeddings endpoint answered something that is not JSON");
    }
    if (!Array.isArray(data) || data.length !== texts.length)
      throw new EmbeddingsError(
        `the embeddings endpoint answered ${Array.isArray(data) ? data.length : "no"} vectors for ${texts.length} texts`,
      );
    const out: Float32Array[] = new Array(texts.length);
    for (const [i, d] of (data as { embedding?: unknown; index?: unknown }[]).entries()) {
      const at = typeof d?.index === "number" && Number.isInteger(d.index) ? d.index : i;
      const v = d?.embedding;
      if (
        at < 0 ||
        at >= texts.length ||
        !Array.isArray(v) ||
        v.length === 0 ||
        v.length > MAX_DIMENSIONS ||
        !v.every((x) => typeof x === "number" && Number.isFinite(x))
      )
        throw new EmbeddingsError("the embeddings endpoint answered a vector that is not a list of numbers");
      out[at] = Float32Array.from(v as number[]);
    }
    if (out.some((v) => v === undefined || v.length !== out[0]!.length))
      throw new EmbeddingsError("the embeddings endpoint answered vectors of different lengths");
    return out;
  };
  return {
    id: s.model,
    async embed(texts, signal) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += BATCH) out.push(...(await batch(texts.slice(i, i + BATCH), signal)));
      return out;
    },
  };
}
