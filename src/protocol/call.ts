import type {
  DescMessage,
  DescMethodServerStreaming,
  DescMethodUnary,
  DescService,
  MessageInitShape,
  MessageShape,
} from "@bufbuild/protobuf";
import type { Caller } from "../domain/caller.js";
import type { IdClaims } from "../domain/token/jwt-strategy.js";
import type { AnswerEncoder, EncodedAnswer } from "./encoded-answer.js";

/** What a handler may know of the request it serves, the same for every protocol. */
export interface Call {
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
  /** The `access_token` query parameter of a JSON route (the frame's way to send its token). */
  readonly queryAccessToken: string | undefined;
  /** The client's address, for rate limits and logs. */
  readonly peer: string;
  /** Aborted when the client goes away or the deadline passes. */
  readonly signal: AbortSignal;
  /** Adds a response header (for example Cache-Control). */
  setResponseHeader(name: string, value: string): void;
  /**
   * On a JSON route, how it encodes answers: a unary handler may then return an `EncodedAnswer` made with it.
   * Undefined on the Connect, gRPC and gRPC-Web routes.
   */
  readonly encoder: AnswerEncoder | undefined;
  /**
   * The transport writes a stream's heartbeats itself (the JSON routes: a pre-encoded line or comment on the one
   * timer of all streams, past every layer of the stream): the handler yields none. Unset on Connect and gRPC.
   */
  readonly transportBeats?: boolean;
  /**
   * Where the transport can say the client went without an AbortSignal (a JSON route: its response closed), a
   * stream's guard listens here rather than on `signal`: each AbortSignal kept while a stream is open costs about
   * 0.8 KB of heap (docs/live-updates.md, session 23). `listener` runs when the client goes before the answer ends.
   */
  onClientGone?(listener: () => void): void;
  /** Takes back a listener `onClientGone` added. */
  offClientGone?(listener: () => void): void;
}

/**
 * A call that answers as another does: the gate's admitted call and the re-check's call each change one member of
 * it. A class, so that an open stream keeps one object of a shared shape (docs/live-updates.md, session 22).
 */
export class ForwardedCall implements Call {
  constructor(protected readonly call: Call) {}
  header(name: string): string | undefined {
    return this.call.header(name);
  }
  get queryAccessToken(): string | undefined {
    return this.call.queryAccessToken;
  }
  get peer(): string {
    return this.call.peer;
  }
  get signal(): AbortSignal {
    return this.call.signal;
  }
  setResponseHeader(name: string, value: string): void {
    this.call.setResponseHeader(name, value);
  }
  get encoder(): AnswerEncoder | undefined {
    return this.call.encoder;
  }
  get transportBeats(): boolean | undefined {
    return this.call.transportBeats;
  }
}

/** A call that says the client went without a signal (see Call.onClientGone). */
export type ClientGone = Required<Pick<Call, "onClientGone" | "offClientGone">>;

/** Who the gate found calling, by the RPC's declared access. */
export interface Authorized {
  /** The frame's or the account's caller; undefined for RPCs that exchange a credential in the body, or PUBLIC. */
  caller: Caller | undefined;
  /** When the presented token expires (streams end then); infinite without a token. */
  expiresAt: number;
  /** Tells one token's streams from another's (a hash: the token is not kept); "" without a token. */
  tokenKey: string;
  /** What the ID token says (its session, its parents), when the caller presented one. */
  idClaims?: IdClaims | undefined;
}

/** A call the gate has admitted. */
export interface AuthorizedCall extends Call {
  readonly auth: Authorized;
  /**
   * A guarded stream's: the controller of its `signal` (which aborts when the client goes or the credential dies).
   * Aborting it ends the stream's work as the client's leaving would (a watch whose token expired), with no signal
   * of the handler's own (each costs about 0.8 KB of heap for the stream's life). Undefined on any other call.
   */
  readonly stop?: AbortController | undefined;
}

/** Answers an init or a message; an `EncodedAnswer` only on a call with an encoder (a JSON route). */
type UnaryHandler<I extends DescMessage, O extends DescMessage> = (
  req: MessageShape<I>,
  call: AuthorizedCall,
) => Promise<MessageInitShape<O> | EncodedAnswer>;
type StreamHandler<I extends DescMessage, O extends DescMessage> = (
  req: MessageShape<I>,
  call: AuthorizedCall,
) => AsyncIterable<MessageInitShape<O>>;

/** The implementation of one service's methods, shared by the Connect/gRPC routes and the JSON routes. */
export type Handlers<S extends DescService> = {
  [K in keyof S["method"]]: S["method"][K] extends DescMethodUnary<infer I, infer O>
    ? UnaryHandler<I, O>
    : S["method"][K] extends DescMethodServerStreaming<infer I, infer O>
      ? StreamHandler<I, O>
      : never;
};

/** Any method handler, for code that dispatches by descriptor. */
export type AnyHandler = (req: never, call: Call) => Promise<unknown> | AsyncIterable<unknown>;
