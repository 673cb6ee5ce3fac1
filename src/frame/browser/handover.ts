import type { ChatMessage, ConversationState } from "./api.js";
import { f, T } from "./strings.js";
import type { ChatView } from "./view.js";

const AI_AGENT = "ai_agent";

/**
 * Who answers the customer, shown as it changes: the header names the person who took the conversation over,
 * the log says when they join and leave, when the conversation closes or reopens, and, while nobody has
 * answered yet, that a person will reply.
 */
export class Handover {
  private current: ConversationState | undefined;
  private last = 0;
  /** The person holding the conversation has written since taking it over. */
  private answered = false;
  private toldWaiting = false;

  constructor(
    private readonly view: ChatView,
    private readonly chatbotName: string,
    /** The service's address of a path it answered (its pictures). */
    private readonly pictureUrl: (path: string) => string,
    /** The assistant's name in the header (the chatbot's unless its appearance names it). */
    private readonly agentName = chatbotName,
  ) {}

  /** Told when the conversation closes while shown, unrated (the rating prompt follows the closing line). */
  onClosed: ((conversationId: string, afterOrder: number) => void) | undefined;

  /** A message is shown (for where the next line goes). */
  seen(order: number): void {
    if (order > this.last) this.last = order;
  }

  /** A message arrived live. */
  message(m: ChatMessage): void {
    this.seen(m.message_order);
    if (m.role === "operator") this.answered = true;
  }

  /** The conversation's state, first as loaded (`initial`: no lines about changes), then as it changes. */
  state(c: ConversationState, initial = false): void {
    const prev = this.current;
    this.current = c;
    const person = this.person(c);
    const pic = c.operator_picture_url ? this.pictureUrl(c.operator_picture_url) : "";
    if (person) this.view.setAnswerer(person, f(T.teamOf, { bot: this.chatbotName }), { name: person, picture: pic });
    else this.view.setAnswerer(this.agentName, T.aiAssistant);
    // The composer writes to whoever answers (never still "Message to <the assistant>" once a person took over).
    this.view.setRecipient(person ? c.operator_name || T.supportTeam : this.agentName);
    if (initial || !prev || prev.conversation_id !== c.conversation_id) return;

    const before = this.person(prev);
    if (person && (before !== person || prev.assigned_to !== c.assigned_to)) {
      this.answered = false;
      this.toldWaiting = false;
      this.view.addEvent(f(T.joined, { person, bot: this.chatbotName }), this.last, pic);
    } else if (!person && before) {
      this.view.addEvent(f(T.left, { person: before }), this.last);
    }
    if (prev.status === "live" && c.status === "closed") {
      this.view.addEvent(T.closed, this.last);
      if (!c.rating) this.onClosed?.(c.conversation_id, this.last);
    } else if (prev.status === "closed" && c.status === "live") this.view.addEvent(T.reopened, this.last);
  }

  /** The customer's message (at `order`) got no AI reply: a person holds the conversation. Says so, once, until they answer. */
  waiting(order: number): void {
    this.seen(order);
    if (this.answered || this.toldWaiting) return;
    this.toldWaiting = true;
    const person = this.current ? this.person(this.current) : undefined;
    this.view.addEvent(person ? f(T.willReply, { person, bot: this.chatbotName }) : T.personWillReply, order);
  }

  private person(c: ConversationState): string | undefined {
    if (c.assigned_to === AI_AGENT || c.assigned_to === "") return undefined;
    return c.operator_name || T.aPerson;
  }
}
