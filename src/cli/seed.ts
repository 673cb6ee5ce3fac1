import { randomUUID } from "node:crypto";
import type { App } from "../app.js";
import type { KnowledgeSnippet } from "../domain/account/repository.js";
import type { BulkContact, BulkConversation, BulkLoader } from "../domain/bulk.js";
import { UsageError } from "./args.js";

/** How much data one seeded account gets. */
export interface SeedSize {
  contacts: number;
  conversations: number;
  messages: number;
  /** Messages of the one long conversation (part of `messages`; 0 for none). */
  longConversation: number;
  /** Conversations of SAMPLE_LENGTH messages, one per sample user, for reading pages (part of `messages`). */
  samples: number;
  /** Further accounts of SMALL_ACCOUNT_CONTACTS contacts each, so the account is not alone in the file. */
  smallAccounts: number;
}

/** The sizes `--scale` names. */
export const SCALES: Record<string, SeedSize> = {
  "1k": {
    contacts: 1_000,
    conversations: 2_000,
    messages: 10_000,
    longConversation: 2_020,
    samples: 32,
    smallAccounts: 1,
  },
  "10k": {
    contacts: 10_000,
    conversations: 20_000,
    messages: 100_000,
    longConversation: 10_020,
    samples: 64,
    smallAccounts: 2,
  },
  "100k": {
    contacts: 100_000,
    conversations: 200_000,
    messages: 1_000_000,
    longConversation: 100_020,
    samples: 64,
    smallAccounts: 3,
  },
  // The growth point: as many contacts again tenfold, lighter per contact so it builds in well under a minute.
  "1m": {
    contacts: 1_000_000,
    conversations: 1_000_000,
    messages: 1_200_000,
    longConversation: 0,
    samples: 16,
    smallAccounts: 0,
  },
};

/**
 * The size from the command line: --scale picks a preset (default 100k); --contacts, --conversations and
 * --messages override its numbers (conversations default to twice the contacts, messages to ten times).
 */
export function seedSize(values: {
  scale?: string | undefined;
  contacts?: string | undefined;
  conversations?: string | undefined;
  messages?: string | undefined;
}): SeedSize {
  const scale = (values.scale ?? "100k").toLowerCase();
  const preset = SCALES[scale];
  if (!preset) throw new UsageError(`--scale must be one of ${Object.keys(SCALES).join(", ")}`);
  const whole = (name: string, v: string | undefined, fallback: number) => {
    if (v === undefined) return fallback;
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`--${name} must be a whole number, at least 1`);
    return Number(v);
  };
  const contacts = whole("contacts", values.contacts, preset.contacts);
  const custom = values.contacts !== undefined;
  const conversations = whole("conversations", values.conversations, custom ? contacts * 2 : preset.conversations);
  const longConversation = custom
    ? Math.min(preset.longConversation, Math.floor(conversations / 2))
    : preset.longConversation;
  const samples = Math.min(preset.samples, Math.max(0, contacts - 1));
  const messages = whole(
    "messages",
    values.messages,
    custom ? Math.max(contacts * 10, conversations + longConversation + samples * SAMPLE_LENGTH) : preset.messages,
  );
  return { ...preset, contacts, conversations, messages, longConversation, samples };
}

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

const FIRST = [
  "maria",
  "john",
  "james",
  "mary",
  "robert",
  "patricia",
  "michael",
  "jennifer",
  "william",
  "linda",
  "david",
  "elizabeth",
  "richard",
  "barbara",
  "joseph",
  "susan",
  "thomas",
  "jessica",
  "charles",
  "sarah",
  "chris",
  "karen",
  "daniel",
  "nancy",
  "matthew",
  "lisa",
  "anthony",
  "betty",
  "mark",
  "sandra",
  "ahmed",
  "fatima",
  "wei",
  "yuki",
  "olga",
  "ivan",
  "pierre",
  "sofia",
  "lucas",
  "emma",
  "amara",
  "kenji",
  "noor",
  "mateo",
  "ingrid",
  "ravi",
  "chloe",
  "tomasz",
  "aisha",
  "leon",
];
const LAST = [
  "garcia",
  "smith",
  "johnson",
  "williams",
  "brown",
  "jones",
  "miller",
  "davis",
  "rodriguez",
  "martinez",
  "hernandez",
  "lopez",
  "gonzalez",
  "wilson",
  "anderson",
  "thomas",
  "taylor",
  "moore",
  "jackson",
  "martin",
  "lee",
  "perez",
  "thompson",
  "white",
  "harris",
  "sanchez",
  "clark",
  "ramirez",
  "lewis",
  "robinson",
  "walker",
  "young",
  "allen",
  "king",
  "wright",
  "scott",
  "torres",
  "nguyen",
  "hill",
  "flores",
  "green",
  "adams",
  "nelson",
  "baker",
  "hall",
  "rivera",
  "campbell",
  "mitchell",
  "carter",
  "roberts",
  "kowalski",
  "novak",
  "schmidt",
  "muller",
  "rossi",
  "dubois",
  "tanaka",
  "kim",
  "chen",
  "singh",
  "okafor",
  "haddad",
  "larsen",
  "ivanova",
  "silva",
  "costa",
  "yilmaz",
  "nakamura",
  "fischer",
  "moreau",
];
const DOMAINS = [
  "gmail.com",
  "yahoo.com",
  "outlook.com",
  "example.com",
  "proton.me",
  "icloud.com",
  "acme.co",
  "mail.de",
  "web.fr",
  "shop.io",
];
const USER_LINES = [
  "Hi, I ordered last week and the parcel has not arrived yet. Can you check?",
  "How do I change the delivery address on my order?",
  "Do you ship to Canada, and how long does it take?",
  "My discount code is not accepted at checkout.",
  "Can I return an item that I already opened?",
  "What are your opening hours on weekends?",
  "I was charged twice for the same order, please help.",
  "Is the blue model available in size M?",
];
const AGENT_LINES = [
  "Thanks for reaching out! Orders usually arrive within 3 to 5 business days; I can see yours is on its way.",
  "You can change the address from your account page until the order ships. (Source: Shipping FAQ)",
  "We ship to Canada; delivery takes 5 to 8 business days and duties are included. (Source: International shipping)",
  "Codes apply to full-price items only and cannot be combined with other offers. (Source: Promotions)",
  "Opened items can be returned within 30 days if they are unused and in their original packaging. (Source: Returns)",
  "Our support team answers every day from 8:00 to 20:00; this assistant is available around the clock.",
];
/** The (made-up) site the seeded chatbots may be embedded by. */
const SHOP_ORIGIN = "https://shop.example";
const KNOWLEDGE: KnowledgeSnippet[] = [
  {
    title: "Shipping FAQ",
    url: "https://shop.example/help/shipping",
    snippet:
      "Orders ship within one business day and arrive in 3 to 5 business days; the address can be changed until the order ships.",
  },
  {
    title: "Returns",
    url: "https://shop.example/help/returns",
    snippet:
      "Items can be returned within 30 days if unused and in their original packaging; refunds take 5 business days.",
  },
  {
    title: "Promotions",
    url: "https://shop.example/help/promotions",
    snippet: "Discount codes apply to full-price items only and cannot be combined with other offers.",
  },
];

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
  const loader = app.store.bulkLoader();
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
    fill(loader, { accountId: account.accountId, chatbotId: chatbot.chatbotId, size, now, rnd }, result);
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
        { accountId: small.accountId, chatbotId: smallBot.chatbotId, size: smallSize, now, rnd },
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
}

type Counts = Pick<SeedResult, "contacts" | "conversations" | "messages" | "samples" | "long">;

function fill(loader: BulkLoader, x: FillContext, out: Counts): void {
  const { size, rnd, now } = x;
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
    messageOrder: order,
    role: user ? "user" : "assistant",
    content: lines[Math.floor(rnd() * lines.length)]!,
    createdAt: v.lastMessageAt - (v.messageCount - order) * 20_000,
  });
}
