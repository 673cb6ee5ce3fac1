import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback stand-in for an OpenAI-compatible /v1/embeddings endpoint: deterministic vectors, a bag of the
 * concepts a text holds (each concept known by its words in English, German, French and Spanish, so that a question
 * in one language is near a passage in another, as a multilingual model makes it), normalised.
 */
export interface EmbeddingsServer {
  /** Base URL to configure (AIAGENT_EMBEDDINGS_BASE_URL), ending in /v1. */
  url: string;
  /** The requests' authorization headers and their number of texts, in order. */
  requests: { authorization: string; model: string; texts: number }[];
  /** When set, every request is answered with this HTTP status (an endpoint that is down). */
  failWith: number | undefined;
  /** When set, the JSON body answered instead of the vectors (a misbehaving endpoint). */
  answer: ((texts: string[]) => unknown) | undefined;
  close(): Promise<void>;
}

const CONCEPTS: string[][] = [
  ["refund", "refunds", "money", "rückerstattung", "geld", "remboursement", "rembourser", "reembolso", "dinero"],
  ["delivery", "shipping", "parcel", "lieferung", "paket", "livraison", "colis", "envío", "paquete"],
  ["days", "day", "tage", "tagen", "jours", "días"],
  ["card", "karte", "carte", "tarjeta"],
  ["warehouse", "lager", "entrepôt", "almacén"],
];

export function conceptVector(text: string): number[] {
  const v = new Array(CONCEPTS.length).fill(0) as number[];
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])
    CONCEPTS.forEach((c, i) => {
      if (c.includes(w)) v[i]! += 1;
    });
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}

export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const state = {
    requests: [] as EmbeddingsServer["requests"],
    failWith: undefined as number | undefined,
    answer: undefined as EmbeddingsServer["answer"],
  };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/embeddings") {
        res.writeHead(404).end();
        return;
      }
      const { model, input } = JSON.parse(body) as { model: string; input: string[] };
      state.requests.push({ authorization: req.headers.authorization ?? "", model, texts: input.length });
      if (state.failWith) {
        res.writeHead(state.failWith, { "content-type": "application/json" }).end('{"error":{"message":"down"}}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      if (state.answer) {
        res.end(JSON.stringify(state.answer(input)));
        return;
      }
      res.end(
        JSON.stringify({
          object: "list",
          model,
          data: input.map((t, index) => ({ object: "embedding", index, embedding: conceptVector(t) })),
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const out: EmbeddingsServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    get requests() {
      return state.requests;
    },
    get failWith() {
      return state.failWith;
    },
    set failWith(v) {
      state.failWith = v;
    },
    get answer() {
      return state.answer;
    },
    set answer(v) {
      state.answer = v;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return out;
}
