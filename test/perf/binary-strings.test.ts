import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { configureTextEncoding, getTextEncoding } from "@bufbuild/protobuf/wire";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GetMessagesForConversationResponseSchema } from "../../gen/aiagent/v1/conversation_service_pb.js";
import { poolBinaryStrings } from "../../src/protocol/binary-strings.js";

// Strings whose UTF-8 is easy to get wrong: empty, NUL, accents, an astral emoji, lone surrogates of both kinds.
const TRICKY = [
  "",
  "\u0000",
  "plain ascii",
  "Ünïcødé",
  "👋🏽 hello",
  "\ud800",
  "\udc00x",
  "a\ud83dz",
  "x".repeat(10_000),
];

function page(texts: readonly string[]) {
  return create(GetMessagesForConversationResponseSchema, {
    messages: texts.map((t, i) => ({ messageId: `m${i}`, content: t, role: "user", messageOrder: i + 1 })),
    hasMore: true,
  });
}

describe("binary string fields written from Node's pooled buffers", () => {
  const stock = new TextEncoder();

  it("encode every string as TextEncoder does, lone surrogates included", () => {
    poolBinaryStrings();
    const encode = getTextEncoding().encodeUtf8;
    for (const t of TRICKY) expect(Buffer.from(encode(t)).equals(Buffer.from(stock.encode(t)))).toBe(true);
    fc.assert(
      fc.property(
        fc.string({ unit: "binary" }),
        fc.string({ unit: fc.integer({ min: 0xd7f0, max: 0xe010 }).map((c) => String.fromCharCode(c)) }),
        (a, b) => {
          for (const t of [a, b, a + b]) expect(Buffer.from(encode(t)).equals(Buffer.from(stock.encode(t)))).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it("leave toBinary's bytes as they were, and its answers independent of each other", () => {
    const msg = page(TRICKY);
    // The bytes protobuf-es writes with TextEncoder, its default.
    const decoder = new TextDecoder();
    configureTextEncoding({
      encodeUtf8: (t) => stock.encode(t),
      decodeUtf8: (b) => decoder.decode(b),
      checkUtf8: () => true,
    });
    const before = toBinary(GetMessagesForConversationResponseSchema, msg);
    poolBinaryStrings();
    expect(getTextEncoding().encodeUtf8("é")).toBeInstanceOf(Buffer);
    const after = toBinary(GetMessagesForConversationResponseSchema, msg);
    expect(Buffer.from(after).equals(Buffer.from(before))).toBe(true);
    expect(fromBinary(GetMessagesForConversationResponseSchema, after).messages.map((m) => m.content)).toEqual(
      TRICKY.map((t) => Buffer.from(stock.encode(t)).toString("utf8")),
    );
    // Two answers made from the same pooled slab share no bytes: changing one leaves the other as it was.
    const one = toBinary(GetMessagesForConversationResponseSchema, page(["first answer"]));
    const two = toBinary(GetMessagesForConversationResponseSchema, page(["second answer"]));
    const twoCopy = Buffer.from(two);
    one.fill(0);
    expect(Buffer.from(two).equals(twoCopy)).toBe(true);
  });
});
