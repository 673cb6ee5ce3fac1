import { describe, expect, it } from "vitest";
import { GetContactConversationsResponseSchema } from "../../gen/aiagent/v1/conversation_service_pb.js";
import type { ContactView } from "../../src/domain/conversation/repository.js";
import { toDocumentedJson } from "../../src/protocol/rest/json-codec.js";
import { contact, contactPageJson } from "../../src/protocol/services/contact-list-forms.js";

// The contact list's JSON is written straight from the page (contact-list-forms.ts); it must be, byte for byte,
// what the JSON routes' generic encoder writes for the same answer.

const generic = (contacts: ContactView[], hasMore: boolean) =>
  JSON.stringify(
    toDocumentedJson(GetContactConversationsResponseSchema, {
      data: { data: { contacts: contacts.map(contact), hasMore } },
    }),
  );

// Quotes, backslashes, control characters, lone surrogates, non-BMP characters, HTML-ish text.
const NASTY = ['"', "\\", "\n", "\u0000", "\u001f", "\u2028", "\ud800", "😀", "</script>", "é", "ü", "'", "\t"];

function text(seed: number, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) {
    const k = (seed * 31 + i * 17) % 40;
    s += k < NASTY.length ? NASTY[k] : String.fromCharCode(32 + ((seed + i * 7) % 95));
  }
  return s;
}

function someContact(i: number): ContactView {
  return {
    contactId: `6f1c7c52-2a63-4d2c-9d1e-${String(i).padStart(12, "0")}`,
    userId: text(i, i % 13),
    contactName: text(i + 1, i % 29),
    phoneNumber: i % 3 === 0 ? "" : `+44 20 ${i}`,
    email: i % 4 === 0 ? "" : `user${i}@mail.example`,
    assignedTo: i % 2 === 0 ? "ai_agent" : text(i + 2, 9),
    unreadCount: (i * 7919) % 1000,
    latestMessageAt: 1_700_000_000_000 + i * 86_399_999,
    channels: i % 5 === 0 ? [] : i % 5 === 1 ? ["web"] : ["web", text(i, 3)],
    latestConversationId: i % 6 === 0 ? "" : `conv-${i}`,
    conversationStatus: i % 2 === 0 ? "live" : "closed",
    chatbotId: i % 6 === 0 ? "" : `bot-${i % 3}`,
    chatbotName: i % 6 === 0 ? "" : text(i + 4, i % 17),
    latestMessagePreview: i % 6 === 0 ? "" : text(i + 3, i % 40),
    latestMessageRole: i % 6 === 0 ? "" : i % 2 === 0 ? "user" : "assistant",
    snoozedUntil: i % 4 === 0 ? 1_700_000_000_000 + i * 1000 : null,
    firstResponseDueAt: i % 3 === 0 ? 1_700_000_000_000 + i * 60_000 : null,
    firstResponseStatus: i % 3 === 0 ? (["pending", "met", "breached", "cancelled"] as const)[i % 4]! : "none",
    priority: (["none", "low", "medium", "high", "urgent"] as const)[i % 5]!,
  };
}

describe("the contact list's JSON", () => {
  it("is the generic encoder's, byte for byte", () => {
    expect(contactPageJson({ contacts: [], hasMore: false })).toBe(generic([], false));
    for (let n = 1; n <= 60; n++) {
      const contacts = Array.from({ length: n % 12 }, (_, i) => someContact(n * 12 + i));
      expect(contactPageJson({ contacts, hasMore: n % 2 === 0 })).toBe(generic(contacts, n % 2 === 0));
    }
  });
});
