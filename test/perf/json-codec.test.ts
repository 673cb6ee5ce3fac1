import { create, type DescField, type DescMessage, type DescOneof, ScalarType } from "@bufbuild/protobuf";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConversationService } from "../../gen/aiagent/v1/conversation_service_pb.js";
import { TokenService } from "../../gen/aiagent/v1/token_service_pb.js";
import { fieldsOf, toDocumentedJson } from "../../src/protocol/rest/json-codec.js";

// The encoder was rewritten for speed (converters chosen once per field). This is the straightforward version it
// replaced, kept as the reference: for any message the two must write the same JSON.
const INT64 = new Set([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.SINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
]);
function refScalar(t: ScalarType, v: unknown): unknown {
  if (INT64.has(t)) {
    const n = Number(v as bigint);
    return Number.isSafeInteger(n) ? n : String(v);
  }
  if (t === ScalarType.BYTES) return Buffer.from(v as Uint8Array).toString("base64");
  return v;
}
function refDefault(f: DescField): unknown {
  if (f.fieldKind === "list") return [];
  if (f.fieldKind === "map") return {};
  if (f.fieldKind === "enum") return f.enum.values[0]?.name ?? 0;
  if (f.fieldKind === "scalar")
    return f.scalar === ScalarType.STRING || f.scalar === ScalarType.BYTES
      ? ""
      : f.scalar === ScalarType.BOOL
        ? false
        : 0;
  return null;
}
function refValue(f: DescField, v: unknown): unknown {
  switch (f.fieldKind) {
    case "scalar":
      return refScalar(f.scalar, v);
    case "enum":
      return f.enum.values.find((e) => e.number === v)?.name ?? v;
    case "message":
      return reference(f.message, v as Record<string, unknown>);
    case "list":
      if (f.listKind === "message")
        return (v as object[]).map((x) => reference(f.message, x as Record<string, unknown>));
      if (f.listKind === "scalar") return (v as unknown[]).map((x) => refScalar(f.scalar, x));
      return v;
    case "map":
      return v;
  }
}
function reference(desc: DescMessage, m: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const seen = new Set<DescOneof>();
  for (const f of desc.fields) {
    if (f.oneof) {
      if (seen.has(f.oneof)) continue;
      seen.add(f.oneof);
      const sel = m[f.oneof.localName] as { case?: string; value?: unknown } | undefined;
      const member = sel?.case ? f.oneof.fields.find((x) => x.localName === sel.case) : undefined;
      if (member) out[member.name] = refValue(member, sel!.value);
      continue;
    }
    const v = m[f.localName];
    if (v === undefined) {
      if (f.fieldKind !== "message" && !f.proto.proto3Optional) out[f.name] = refDefault(f);
      continue;
    }
    out[f.name] = refValue(f, v);
  }
  return out;
}

/** Random message inits of a type: every field maybe set, with values of its kind. */
function arbitraryInit(desc: DescMessage, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const scalar = (t: ScalarType): fc.Arbitrary<unknown> => {
    if (t === ScalarType.STRING) return fc.string({ unit: "grapheme", maxLength: 20 });
    if (t === ScalarType.BOOL) return fc.boolean();
    if (INT64.has(t)) return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    if (t === ScalarType.BYTES) return fc.uint8Array({ maxLength: 8 });
    if (t === ScalarType.DOUBLE || t === ScalarType.FLOAT) return fc.double({ noNaN: true });
    return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
  };
  const entries: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of desc.fields) {
    if (f.oneof) continue;
    let arb: fc.Arbitrary<unknown> | undefined;
    if (f.fieldKind === "scalar") arb = scalar(f.scalar);
    else if (f.fieldKind === "enum") arb = fc.constantFrom(...f.enum.values.map((v) => v.number));
    else if (f.fieldKind === "message" && depth < 3) arb = arbitraryInit(f.message, depth + 1);
    else if (f.fieldKind === "list" && f.listKind === "scalar") arb = fc.array(scalar(f.scalar), { maxLength: 3 });
    else if (f.fieldKind === "list" && f.listKind === "message" && depth < 3)
      arb = fc.array(arbitraryInit(f.message, depth + 1), { maxLength: 3 });
    if (arb) entries[f.localName] = arb;
  }
  for (const o of desc.oneofs) {
    const members = o.fields.filter((f) => f.fieldKind === "scalar" || (f.fieldKind === "message" && depth < 3));
    if (members.length === 0) continue;
    entries[o.localName] = fc.oneof(
      ...members.map((f) =>
        (f.fieldKind === "scalar" ? scalar(f.scalar) : arbitraryInit(f.message!, depth + 1)).map((value) => ({
          case: f.localName,
          value,
        })),
      ),
    );
  }
  return fc.record(entries, { requiredKeys: [] });
}

const messages = [ConversationService, TokenService].flatMap((s) => s.methods.flatMap((m) => [m.input, m.output]));

describe("documented JSON encoder", () => {
  it.each(messages.map((d) => [d.typeName, d] as const))(
    "writes %s exactly as the reference encoder does",
    (_name, desc) => {
      fc.assert(
        fc.property(arbitraryInit(desc), (init) => {
          const m = create(desc, init as never) as unknown as Record<string, unknown>;
          expect(JSON.stringify(toDocumentedJson(desc, m))).toBe(JSON.stringify(reference(desc, m)));
          // Handlers return plain inits, not messages: the same rules apply to them.
          expect(JSON.stringify(toDocumentedJson(desc, init))).toBe(JSON.stringify(reference(desc, init)));
        }),
        { numRuns: 150 },
      );
    },
  );

  it("finds fields by proto name only; a camelCase JSON name is kept apart, for hints", () => {
    for (const desc of messages) {
      const idx = fieldsOf(desc);
      for (const f of desc.fields) {
        expect(idx.byName.get(f.name)).toBe(f);
        if (f.jsonName !== f.name) {
          expect(idx.byName.get(f.jsonName)).toBeUndefined();
          expect(idx.byJsonName.get(f.jsonName)).toBe(f);
        }
      }
    }
  });
});
