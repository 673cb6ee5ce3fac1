// What observing one RPC adds, in isolation: the observer wrapped around a handler that does nothing, against the
// bare handler, with traces off (the RPC series only). Usage: node --import tsx bench/observer-cost.ts [calls]
import { ConversationService } from "../gen/aiagent/v1/conversation_service_pb.js";
import { Metrics } from "../src/observability/metrics.js";
import { RpcObserver } from "../src/observability/rpc.js";

const calls = Number(process.argv[2] ?? 2_000_000);
const metrics = new Metrics({
  storeStats: () => ({}) as never,
  pageCache: () => ({}) as never,
  listCache: () => ({}) as never,
  processDefaults: false,
});
const observer = new RpcObserver(metrics, undefined);
const method = ConversationService.methods[0]!;
const handler = async () => 1;
const header = () => undefined;

async function bare(): Promise<void> {
  for (let i = 0; i < calls; i++) await handler();
}
async function observed(): Promise<void> {
  for (let i = 0; i < calls; i++) await observer.observe(method, "json", header, () => handler());
}
const perCall = async (f: () => Promise<void>) => {
  const t = performance.now();
  await f();
  return ((performance.now() - t) * 1000) / calls;
};
for (let round = 0; round < 3; round++) {
  const a = await perCall(bare);
  const b = await perCall(observed);
  console.log(
    `bare ${a.toFixed(3)} µs, observed ${b.toFixed(3)} µs per call: the observer adds ${(b - a).toFixed(3)} µs`,
  );
}
