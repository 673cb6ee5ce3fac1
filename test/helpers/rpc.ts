import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { AccountService } from "../../gen/aiagent/v1/account_service_pb.js";
import { AgentService } from "../../gen/aiagent/v1/agent_service_pb.js";
import { ConversationService } from "../../gen/aiagent/v1/conversation_service_pb.js";
import { SessionService } from "../../gen/aiagent/v1/session_service_pb.js";
import { TokenService } from "../../gen/aiagent/v1/token_service_pb.js";

/** The protocols a generated client can speak to the service. */
export type RpcProtocol = "connect-json" | "connect-binary" | "grpc" | "grpc-web";

/** A transport of one protocol to the service. */
export function transport(baseUrl: string, protocol: RpcProtocol) {
  switch (protocol) {
    case "connect-json":
      return createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false });
    case "connect-binary":
      return createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true });
    case "grpc":
      // gRPC needs HTTP/2: cleartext (h2c) on the same port as HTTP/1.1.
      return createGrpcTransport({ baseUrl });
    case "grpc-web":
      return createGrpcWebTransport({ baseUrl, httpVersion: "1.1" });
  }
}

/** Generated clients of the services over one protocol. */
export function rpcClients(
  baseUrl: string,
  protocol: RpcProtocol,
): {
  tokens: Client<typeof TokenService>;
  conversations: Client<typeof ConversationService>;
  accounts: Client<typeof AccountService>;
  sessions: Client<typeof SessionService>;
  agents: Client<typeof AgentService>;
} {
  const t = transport(baseUrl, protocol);
  return {
    tokens: createClient(TokenService, t),
    conversations: createClient(ConversationService, t),
    accounts: createClient(AccountService, t),
    sessions: createClient(SessionService, t),
    agents: createClient(AgentService, t),
  };
}
