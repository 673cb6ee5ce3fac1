import { generateKeyPairSync, sign, webcrypto } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

// The signature every token issue and refresh makes, alone: one ES256 (ECDSA P-256, SHA-256) signature over a token's
// signing input, made the three ways Node offers, with no service code. S4 (get_access_token) and S5 (refresh_token)
// make one each, as oidc-provider's client_credentials and refresh grants (P4, P5) do, through jose and WebCrypto.
// For each way: the event loop's CPU per signature (what stops the loop from serving other requests) and the
// process's (every thread's: the pool threads that compute a signature off the loop included), with 16 signatures
// in flight as the bench's 32 connections keep about that many requests waiting on one.
//
//   node --import tsx bench/repro/es256-sign.ts [--count 20000] [--rounds 3]
//
// The process's CPU per signature is the floor both sides of S4 ÷ P4 pay; what the callback form moves off the loop is
// still spent on the machine's two cores, beside the load generator.
const { values: opt } = parseArgs({
  options: { count: { type: "string", default: "20000" }, rounds: { type: "string", default: "3" } },
});
const count = Number(opt.count);
const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
const webKey = await webcrypto.subtle.importKey(
  "jwk",
  privateKey.export({ format: "jwk" }),
  { name: "ECDSA", namedCurve: "P-256" },
  false,
  ["sign"],
);
// A token's signing input: header and claims, base64url (the size of the service's access token's).
const input = Buffer.from(`${"e".repeat(100)}.${"p".repeat(260)}`, "latin1");

/** The main thread's CPU so far, µs (Linux: its /proc stat, in clock ticks of 10 ms). */
function loopMicros(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10_000;
}

/** Runs `one` count times with `inFlight` at once; the loop's CPU (this thread) and the process's, µs per call. */
async function timed(one: () => Promise<unknown>, inFlight = 16): Promise<{ loop: number; process: number }> {
  const t0 = loopMicros();
  const p0 = process.cpuUsage();
  let next = 0;
  const worker = async () => {
    while (next++ < count) await one();
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const p = process.cpuUsage(p0);
  return { loop: (loopMicros() - t0) / count, process: (p.user + p.system) / count };
}

const ways: Record<string, () => Promise<unknown>> = {
  "node:crypto sign, callback (the thread pool; the service's)": () =>
    new Promise((resolve, reject) =>
      sign("sha256", input, { key: privateKey, dsaEncoding: "ieee-p1363" }, (e, s) => (e ? reject(e) : resolve(s))),
    ),
  "node:crypto sign, synchronous (on the loop)": async () =>
    sign("sha256", input, { key: privateKey, dsaEncoding: "ieee-p1363" }),
  "WebCrypto subtle.sign (the thread pool; jose's, so oidc-provider's)": () =>
    webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, webKey, input),
};
for (let round = 1; round <= Number(opt.rounds); round++)
  for (const [name, one] of Object.entries(ways)) {
    const r = await timed(one);
    console.log(
      `round ${round}: ${name}: loop ${r.loop.toFixed(1)} µs, process ${r.process.toFixed(1)} µs per signature`,
    );
  }
