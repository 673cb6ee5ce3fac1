import { randomUUID } from "node:crypto";
import type { App } from "../../src/app.js";
import type { BulkContact, BulkConversation, BulkLoader } from "../../src/domain/bulk.js";
import type { SeedSize } from "./sizes.js";
import { AGENT_LINES, DOMAINS, FIRST, KNOWLEDGE, LAST, SHOP_ORIGIN, USER_LINES } from "./words.js";

/** Messages in each sample conversation. */
export const SAMPLE_LENGTH = 30;
const SMALL_ACCOUNT_CONTACTS = 200;
const DAY = 86_400_000;

/** What a seed run made, with what a benchmark needs to drive it. */
export interface SeedResult {
  account_id: string;
  email: string;
  chatbot_id: string;
  client_api_key: string;
  contacts: number;
  conversations: number;
  messages: number;
  small_accounts: number;
  seconds: number;
  /** Users whose latest conversation has SAMPLE_LENGTH messages. */
  samples: { user_id: string; conversation_id: string }[];
  long: { user_id: string; conversation_id: string; messages: number } | null;
}

/** A small, fast, seeded random number generator (mulberry32): the same seed gives the same data. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

let idCounter = 0;
const idTail = randomUUID().slice(13);
/**
 * Uuid-shaped ids that increase (like UUIDv7): a bulk load then appends to its indexes instead of writing all
 * over them, which is what makes a million rows take seconds, not minutes. The service's own ids stay random.
 */
function seqId(): string {
  const h = (idCounter++).toString(16).padStart(12, "0");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}${idTail}`;
}

/** Splits `total` into `parts` whole shares of at least `min`, varied but summing exactly to total. */
function shares(total: number, parts: number, min: number, rnd: () => number): number[] {
  const out: number[] = [];
  if (parts === 0) return out;
  const base = Math.floor(total / parts);
  let rest = total - base * parts;
  for (let i = 0; i < parts; i++) out.push(base + (rest-- > 0 ? 1 : 0));
  // Move units between neighbours so sizes vary (2..3x spread) while the sum stays the same.
  for (let i = 0; i + 1 < parts; i += 2) {
    const d = Math.floor(rnd() * Math.max(0, out[i + 1]! - min + 1));
    out[i] = out[i]! + d;
    out[i + 1] = out[i + 1]! - d;
  }
  return out;
}

/** Fills one new account with synthetic contacts, conversations and messages through the storage layer's bulk loader. */
export async function seed(
  app: Pick<App, "accounts"> & { store: Pick<App["store"], "bulkLoader"> },
  o: { email: string; size: SeedSize; now?: number; seed?: number },
): Promise<SeedResult> {
  const started = process.hrtime.bigint();
  const { size } = o;
  if (size.conversations < size.contacts)
    throw new Error("--conversations must be at least --contacts (every listed contact has a conversation)");
  const fixed = size.longConversation + size.samples * SAMPLE_LENGTH;
  const ordinary = size.conversations - size.samples - (size.longConversation > 0 ? 1 : 0);
  if (size.messages < fixed + ordinary)
    throw new Error(`--messages must be at least ${fixed + ordinary} for these sizes`);
  if (size.samples > size.contacts - 1) throw new Error("too many sample users for this many contacts");
  const now = o.now ?? Date.now();
  const rnd = random(o.seed ?? 42);

  const account = await app.accounts.createAccount(o.email);
  const chatbot = await app.accounts.createChatbot(o.email, "Benchmark shop assistant", [SHOP_ORIGIN], KNOWLEDGE);
  const key = await app.accounts.createApiKey(o.email);
  const loader = await app.store.bulkLoader();
  try {
    const result: SeedResult = {
      account_id: account.accountId,
      email: account.email,
      chatbot_id: chatbot.chatbotId,
      client_api_key: key.clientApiKey,
      contacts: 0,
      conversations: 0,
      messages: 0,
      small_accounts: 0,
      seconds: 0,
      samples: [],
      long: null,
    };
    const extra = random((o.seed ?? 42) + 1);
    fill(loader, { accountId: account.accountId, chatbotId: chatbot.chatbotId, size, now, rnd, extra }, result);
    for (let i = 1; i <= size.smallAccounts; i++) {
      const email = o.email.replace("@", `+small${i}@`);
      const small = await app.accounts.createAccount(email);
      const smallBot = await app.accounts.createChatbot(email, "Small shop assistant", [SHOP_ORIGIN], KNOWLEDGE);
      const smallSize: SeedSize = {
        contacts: SMALL_ACCOUNT_CONTACTS,
        conversations: SMALL_ACCOUNT_CONTACTS * 2,
        messages: SMALL_ACCOUNT_CONTACTS * 10,
        longConversation: 0,
        samples: 0,
        smallAccounts: 0,
      };
      fill(
        loader,
        { accountId: small.accountId, chatbotId: smallBot.chatbotId, size: smallSize, now, rnd, extra },
        { contacts: 0, conversations: 0, messages: 0, samples: [], long: null },
      );
      result.small_accounts++;
    }
    loader.finish();
    result.seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return result;
  } catch (e) {
    loader.finish();
    throw e;
  }
}

interface FillContext {
  accountId: string;
  chatbotId: string;
  size: SeedSize;
  now: number;
  rnd: () => number;
  /** The report's draws (hand-overs, ratings): a stream of their own, so the rest of the data stays as it was. */
  extra: () => number;
}

type Counts = Pick<SeedResult, "contacts" | "conversations" | "messages" | "samples" | "long">;

function fill(loader: BulkLoader, x: FillContext, out: Counts): void {
  const { size, rnd, now, extra } = x;
  const hasLong = size.longConversation > 0;
  // Contact 0 owns the long conversation (if any); contacts 1..samples own the sample conversations.
  const convsPerContact = shares(size.conversations, size.contacts, 1, rnd);
  const ordinaryConvs = size.conversations - size.samples - (hasLong ? 1 : 0);
  const ordinaryMessages = size.messages - size.samples * SAMPLE_LENGTH - size.longConversation;
  const lengths = shares(ordinaryMessages, ordinaryConvs, 1, rnd);
  let nextLength = 0;
  // Activity skewed to the recent past (about a tenth of the contacts wrote within the last day). Contacts are
  // written newest activity first, so the newest-first indexes grow at their end instead of all over.
  const latestTimes = new Float64Array(size.contacts);
  for (let i = 0; i < size.contacts; i++) latestTimes[i] = now - Math.floor(rnd() * rnd() * 90 * DAY) - 1000;
  latestTimes.sort().reverse();
  loader.loadAccount(x.accountId, () => {
    let longConv: BulkConversation | undefined;
    for (let i = 0; i < size.contacts; i++) {
      const special: "long" | "sample" | undefined =
        i === 0 && hasLong ? "long" : i >= 1 && i <= size.samples ? "sample" : undefined;
      const userId =
        special === "long"
          ? "long-user"
          : special === "sample"
            ? `sample-${String(i).padStart(3, "0")}`
            : `cust_${i.toString(36).padStart(5, "0")}`;
      const first = FIRST[Math.floor(rnd() * FIRST.length)]!;
      const last = LAST[Math.floor(rnd() * LAST.length)]!;
      const contactId = seqId();
      const latest = latestTimes[i]!;
      const k = convsPerContact[i]!;
      const convs: { v: BulkConversation; length: number }[] = [];
      for (let j = 0; j < k; j++) {
        const newest = j === k - 1;
        const length =
          newest && special === "long"
            ? size.longConversation
            : newest && special === "sample"
              ? SAMPLE_LENGTH
              : (lengths[nextLength++] ?? 1);
        const end = newest ? latest : latest - (k - j) * (1 + Math.floor(rnd() * 7)) * DAY;
        const createdAt = end - (length - 1) * 20_000;
        const unread = newest && rnd() < 0.2 && length >= 3;
        const status = newest ? (rnd() < 0.85 ? "live" : "closed") : rnd() < 0.8 ? "closed" : "live";
        // A third of the ordinary conversations of two messages or more are handed over (a person writes the
        // second), and a fifth of the closed ones rated: the report then has every kind of figure to compute.
        const handedOver = special === undefined && length >= 2 && extra() < 0.33;
        const rated = status === "closed" && extra() < 0.2;
        convs.push({
          length,
          v: {
            conversationId: seqId(),
            chatbotId: x.chatbotId,
            contactId,
            channel: "web",
            status,
            assignedTo: rnd() < 0.9 ? "ai_agent" : `agent${1 + Math.floor(rnd() * 5)}@support.example`,
            createdAt,
            lastMessageAt: end,
            messageCount: length,
            readOrder: unread ? length - 2 : length,
            // Odd orders are the user's: after read_order = length - 2 exactly one of the last two is.
            unreadCount: unread ? 1 : 0,
            firstCustomerAt: createdAt,
            firstOperatorAt: handedOver ? createdAt + 20_000 : null,
            ratingScore: rated ? 1 + Math.floor(extra() * 5) : null,
          },
        });
      }
      const newest = convs[convs.length - 1]!.v;
      const live = convs.filter((c) => c.v.status === "live");
      const contact: BulkContact = {
        contactId,
        userId,
        contactName: `${cap(first)} ${cap(last)}`,
        email: `${first}.${last}${Math.floor(rnd() * 1000)}@${DOMAINS[Math.floor(rnd() * DOMAINS.length)]}`,
        phoneNumber: `+1 555 ${String(Math.floor(rnd() * 1e7)).padStart(7, "0")}`,
        createdAt: convs[0]!.v.createdAt,
        latestMessageAt: latest,
        latestConversationId: newest.conversationId,
        latestStatus: newest.status,
        latestAssignedTo: newest.assignedTo,
        latestActivityAt: newest.lastMessageAt,
        unreadCount: convs.reduce((n, c) => n + c.v.unreadCount, 0),
        liveActivityAt: live.length ? Math.max(...live.map((c) => c.v.lastMessageAt)) : null,
        channels: "web",
      };
      loader.addContact(x.accountId, contact);
      out.contacts++;
      for (const { v, length } of convs) {
        loader.addConversation(x.accountId, v);
        out.conversations++;
        // The long conversation is written in its own transactions below.
        if (special === "long" && v === newest) continue;
        for (let m = 1; m <= length; m++) addMessage(loader, v, m, rnd);
        out.messages += length;
      }
      if (special === "sample") out.samples.push({ user_id: userId, conversation_id: newest.conversationId });
      if (special === "long") {
        out.long = { user_id: userId, conversation_id: newest.conversationId, messages: size.longConversation };
        longConv = newest;
      }
    }
    const long = longConv as BulkConversation | undefined;
    if (long) {
      for (let n = 1; n <= long.messageCount; n++) addMessage(loader, long, n, rnd);
      out.messages += long.messageCount;
    }
  });
}

function addMessage(loader: BulkLoader, v: BulkConversation, order: number, rnd: () => number): void {
  const user = order % 2 === 1;
  const lines = user ? USER_LINES : AGENT_LINES;
  loader.addMessage({
    messageId: seqId(),
    conversationId: v.conversationId,
    chatbotId: v.chatbotId,
    conversationCreatedAt: v.createdAt,
    messageOrder: order,
    // The conversation's facts say who wrote the second message (firstOperatorAt is its instant).
    role: user ? "user" : order === 2 && v.firstOperatorAt !== null ? "operator" : "assistant",
    content: lines[Math.floor(rnd() * lines.length)]!,
    createdAt: v.lastMessageAt - (v.messageCount - order) * 20_000,
  });
}
