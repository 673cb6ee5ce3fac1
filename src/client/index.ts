/**
 * The typed client of the service for Node servers, imported as `aiagent/client`: the generated service
 * descriptors and messages, createAiAgentClient, which speaks Connect, gRPC or gRPC-Web, and the embedding helpers
 * createEmbedSession and refreshAccessToken, and verifyWebhook for the service's webhook deliveries.
 */
import {
  type CallOptions,
  type Client,
  ConnectError,
  createClient,
  type Interceptor,
  type Transport,
} from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
  Http2SessionManager,
} from "@connectrpc/connect-node";
import { AccountService } from "../../gen/aiagent/v1/account_service_pb.js";
import { ConversationService } from "../../gen/aiagent/v1/conversation_service_pb.js";
import { TokenService } from "../../gen/aiagent/v1/token_service_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";

export * from "../../gen/aiagent/v1/access_pb.js";
export * from "../../gen/aiagent/v1/account_service_pb.js";
export * from "../../gen/aiagent/v1/conversation_service_pb.js";
export * from "../../gen/aiagent/v1/token_service_pb.js";
export * from "../../gen/aiagent/v1/webhook_service_pb.js";
export { type ErrorInfo, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
export * from "./embed.js";
export * from "./webhooks.js";

/** The wire protocols the service speaks on its one port. */
export type Protocol = "connect" | "grpc" | "grpc-web";

/** How createAiAgentClient connects. */
export interface AiAgentClientOptions {
  /** Connect (the default), gRPC or gRPC-Web. */
  protocol?: Protocol;
  /**
   * HTTP version for Connect and gRPC-Web ("1.1" by default); gRPC always uses HTTP/2 (cleartext for http://
   * addresses).
   */
  httpVersion?: "1.1" | "2";
  /** Protobuf binary instead of JSON on the wire (gRPC is always binary). */
  useBinaryFormat?: boolean;
  /** A deadline for every call, in milliseconds. */
  defaultTimeoutMs?: number;
  interceptors?: Interceptor[];
}

/** Clients of every service over one transport. */
export interface AiAgentClient {
  /** GetAccessToken, RefreshToken, GetIdToken: call them from your server only. */
  tokens: Client<typeof TokenService>;
  /** Contacts, messages, the frame's calls and the operators' actions. */
  conversations: Client<typeof ConversationService>;
  /** The account's own administration: API keys, chatbots, team, sessions (an ID token, see withBearer). */
  accounts: Client<typeof AccountService>;
  transport: Transport;
  /** Closes the HTTP/2 connection, if one was opened, so the process can exit. */
  close(): void;
}

/**
 * Creates clients of TokenService, ConversationService and AccountService for the service at `baseUrl` (e.g.
 * http://localhost:8080).
 */
export function createAiAgentClient(baseUrl: string, opts: AiAgentClientOptions = {}): AiAgentClient {
  const protocol = opts.protocol ?? "connect";
  const httpVersion = protocol === "grpc" ? "2" : (opts.httpVersion ?? "1.1");
  const common = {
    baseUrl,
    ...(opts.useBinaryFormat !== undefined ? { useBinaryFormat: opts.useBinaryFormat } : {}),
    ...(opts.defaultTimeoutMs !== undefined ? { defaultTimeoutMs: opts.defaultTimeoutMs } : {}),
    ...(opts.interceptors ? { interceptors: opts.interceptors } : {}),
  };
  const sessionManager = httpVersion === "2" ? new Http2SessionManager(baseUrl) : undefined;
  let transport: Transport;
  if (protocol === "grpc") transport = createGrpcTransport({ ...common, sessionManager: sessionManager! });
  else if (sessionManager)
    transport = (protocol === "grpc-web" ? createGrpcWebTransport : createConnectTransport)({
      ...common,
      httpVersion: "2",
      sessionManager,
    });
  else
    transport = (protocol === "grpc-web" ? createGrpcWebTransport : createConnectTransport)({
      ...common,
      httpVersion: "1.1",
    });
  return {
    tokens: createClient(TokenService, transport),
    conversations: createClient(ConversationService, transport),
    accounts: createClient(AccountService, transport),
    transport,
    close: () => sessionManager?.abort(),
  };
}

/**
 * Call options that send a token as `Authorization: Bearer` (an ID token for the account API, an access token for the
 * frame's calls).
 */
export function withBearer(token: string, options: CallOptions = {}): CallOptions {
  const headers = new Headers(options.headers ?? {});
  headers.set("authorization", `Bearer ${token}`);
  return { ...options, headers };
}

/**
 * The machine-readable reason of a failed call: TokenExpiredError (refresh and retry), TokenInvalidError, InvalidField…
 */
export function errorReason(err: unknown): string | undefined {
  return ConnectError.from(err).findDetails(ErrorInfoSchema)[0]?.reason;
}
