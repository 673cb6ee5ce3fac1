import { readFileSync } from "node:fs";
import { createContextValues } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  ConversationService,
  GetMessagesForConversationResponseSchema,
} from "../../gen/aiagent/v1/conversation_service_pb.js";
import { MAX_BODY_BYTES } from "../../src/app.js";
import { createLogger } from "../../src/log.js";
import type { AnyHandler } from "../../src/protocol/call.js";
import { createConnectRoutes, peerKey } from "../../src/protocol/connect-routes.js";
import { listen } from "../../src/protocol/http/server.js";
import { fromDocumentedJson } from "../../src/protocol/rest/json-codec.js";

// The floor of the RPC protocols: the service's own Connect wiring (adapter options, handler wrapping, the
// HTTP/1.1 + HTTP/2 listener) around a handler that answers a fixed GetMessagesForConversation response, the
// same messages the frame read returns, without auth or storage. Usage: node connect-echo.js <response.json>.
const canned = fromDocumentedJson(
  GetMessagesForConversationResponseSchema,
  JSON.parse(readFileSync(process.argv[2]!, "utf8")),
);
const handlers: Record<string, AnyHandler> = {
  getMessagesForConversation: (async () => canned) as AnyHandler,
};
const log = createLogger("warn", (l) => process.stderr.write(l));
const connect = connectNodeAdapter({
  routes: createConnectRoutes([{ desc: ConversationService, handlers }], log),
  readMaxBytes: MAX_BODY_BYTES,
  contextValues: (req) => createContextValues().set(peerKey, req.socket?.remoteAddress ?? ""),
});
const server = await listen((req, res) => connect(req as never, res as never), 0, "127.0.0.1");
process.stdout.write(`ready ${server.url}\n`);
process.on("SIGTERM", () => void server.close(500).then(() => process.exit(0)));
