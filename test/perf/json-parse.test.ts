import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors.js";
import { parseJsonWithoutDuplicates, repeatedKey } from "../../src/protocol/rest/json-parse.js";

// The duplicate-key check counts key marks against parsed keys and scans only when they differ. Here JSON texts are
// written from entry lists whose repeated keys are known by construction, and both paths must agree with that.

type Node =
  | { kind: "obj"; entries: [string, Node][] }
  | { kind: "arr"; items: Node[] }
  | { kind: "leaf"; json: string };

// Keys and strings full of the characters that could fool a scan: quotes, backslashes, colons, braces, blanks.
const tricky = fc.string({ unit: fc.constantFrom("a", "b", '"', "\\", ":", "{", "}", "[", "]", ",", " ", "é", "😀") });

const node: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc
      .oneof(tricky, fc.integer(), fc.boolean(), fc.constant(null))
      .map((v) => ({ kind: "leaf" as const, json: JSON.stringify(v) })),
    fc
      .array(fc.tuple(fc.constantFrom("a", "b", "c", 'q"', "s\\", "c:"), tie("node")), { maxLength: 4 })
      .map((entries) => ({
        kind: "obj" as const,
        entries,
      })),
    fc.array(tie("node"), { maxLength: 3 }).map((items) => ({ kind: "arr" as const, items })),
  ),
})).node;

const blank = fc.constantFrom("", " ", "\n", "\t ");

function write(n: Node, pad: string): string {
  if (n.kind === "leaf") return n.json;
  if (n.kind === "arr") return `[${n.items.map((x) => write(x, pad)).join(",")}]`;
  return `{${n.entries.map(([k, v]) => `${JSON.stringify(k)}${pad}:${pad}${write(v, pad)}`).join(",")}}`;
}

function hasRepeat(n: Node): boolean {
  if (n.kind === "leaf") return false;
  if (n.kind === "arr") return n.items.some(hasRepeat);
  const keys = n.entries.map(([k]) => k);
  return new Set(keys).size !== keys.length || n.entries.some(([, v]) => hasRepeat(v));
}

describe("duplicate-key detection", () => {
  it("refuses exactly the texts that repeat a key in some object, whatever the strings hold", () => {
    fc.assert(
      fc.property(node, blank, (n, pad) => {
        const text = write(n, pad);
        expect(repeatedKey(text) !== undefined).toBe(hasRepeat(n));
        let refused = false;
        try {
          expect(parseJsonWithoutDuplicates(text)).toEqual(JSON.parse(text));
        } catch (e) {
          expect(e).toBeInstanceOf(DomainError);
          refused = true;
        }
        expect(refused).toBe(hasRepeat(n));
      }),
      { numRuns: 2000 },
    );
  });

  it("names the repeated key by its path", () => {
    expect(repeatedKey('{"a":1,"a":2}')).toBe("a");
    expect(repeatedKey('{"c":{"e":1,"e":2}}')).toBe("c.e");
    expect(repeatedKey('{"l":[{"x":1},{"x":1,"x":2}]}')).toBe("l[1].x");
    expect(repeatedKey('{"a":"\\":","b":{"a":1}}')).toBeUndefined();
  });
});
