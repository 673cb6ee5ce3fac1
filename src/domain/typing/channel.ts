import type { EventTopic } from "../log/events.js";

/**
 * Who types: the customer in the frame, or an operator in the console; or the AI agent, whose only signal is that it
 * is looking something up (its tool calls run) for a reply no send stream carries (after a decision on an approval).
 */
export type TypingSide = "user" | "operator" | "ai_agent";
/** A person of the account opening ("viewing") or closing ("left") a conversation in the console. */
export type ViewingSide = "viewing" | "left";

/** An ephemeral "is typing" signal: never stored, never a webhook; lost signals cost nothing but an indicator. */
export interface TypingSignal {
  accountId: string;
  conversationId: string;
  from: TypingSide | ViewingSide;
  /** The operator's display name; "" for the customer. */
  name: string;
  /** A viewing signal's person (their e-mail); else absent. */
  email?: string;
  /** The conversation's chatbot (who may see it: an operator's teams); absent on the AI agent's signal. */
  chatbotId?: string;
}

/**
 * The typing port: the domain publishes signals, watch streams subscribe. In-process for one instance; over
 * PostgreSQL NOTIFY for several (the storage back end decides, as for the conversation events).
 */
export interface TypingChannel {
  publish(signal: TypingSignal): void;
  /** Starts telling `listener` of its topic's signals; the returned function stops it. */
  subscribe(topic: EventTopic, listener: (signal: TypingSignal) => void): () => void;
}
