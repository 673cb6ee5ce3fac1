import type { Schema } from "./schemas.js";

/** A uuid for examples (any uuid: ids of things that do not exist are answered 404, not refused as input). */
const UUID = "3fa85f64-5717-4562-b3fc-2c963f66afa6";

/**
 * The least request the document allows, generated from an operation's schemas: its required parameters and the
 * required fields of its body (and of the first alternative of an either-or), each a value its schema accepts.
 */
export function exampleOf(
  components: Record<string, Schema>,
  op: {
    parameters: Schema[];
    body: Schema | undefined;
    either: { fields: string[] } | undefined;
  },
): { parameters: Record<string, unknown>; body: unknown } {
  const parameters: Record<string, unknown> = {};
  for (const p of op.parameters) {
    const wanted = p.required === true || p.name === op.either?.fields[0];
    if (wanted) parameters[p.name as string] = sampleOf(components, p.schema as Schema, p.name as string, 0);
  }
  return { parameters, body: op.body ? sampleOf(components, op.body, "body", 0) : undefined };
}

function resolve(components: Record<string, Schema>, s: Schema): Schema {
  const ref = s.$ref as string | undefined;
  return ref ? (components[ref.replace("#/components/schemas/", "")] ?? {}) : s;
}

function sampleOf(components: Record<string, Schema>, schema: Schema, name: string, depth: number): unknown {
  const s = resolve(components, schema);
  if (s.enum) return s.default ?? (s.enum as unknown[])[0];
  if (s.default !== undefined) return s.default;
  switch (s.type) {
    case "object": {
      if (s.additionalProperties !== false && !s.properties) return {};
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const alternatives = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
      const names = [
        ...((s.required as string[] | undefined) ?? []),
        ...((alternatives?.[0]?.required as string[]) ?? []),
      ];
      const out: Record<string, unknown> = {};
      if (depth > 4) return out;
      for (const n of names) if (props[n]) out[n] = sampleOf(components, props[n], n, depth + 1);
      // What the chosen values require of the other fields (`if`/`then` rules), with one item for a list.
      for (const rule of (s.allOf ?? []) as Schema[]) {
        const test = (rule.if as Schema | undefined)?.properties as Record<string, Schema> | undefined;
        if (!test || !Object.entries(test).every(([k, c]) => out[k] === c.const)) continue;
        for (const n of ((rule.then as Schema | undefined)?.required ?? []) as string[])
          if (props[n] && !(n in out)) {
            const v = sampleOf(components, props[n], n, depth + 1);
            out[n] =
              Array.isArray(v) && v.length === 0 ? [sampleOf(components, props[n].items as Schema, n, depth + 1)] : v;
          }
      }
      return out;
    }
    case "array":
      return s.minItems ? [sampleOf(components, s.items as Schema, name, depth + 1)] : [];
    case "integer":
    case "number":
      return (s.minimum as number | undefined) ?? 1;
    case "boolean":
      return false;
    case "string":
      return stringOf(s, name);
    default:
      return null;
  }
}

function stringOf(s: Schema, name: string): string {
  if (s.format === "uuid") return UUID;
  if (s.format === "email") return "grace@example.com";
  if (s.format === "date") return "2026-01-31";
  if (s.contentEncoding === "base64") return "aGVsbG8";
  if (s.pattern && /^\^\[A-Za-z0-9_-\]/.test(s.pattern as string)) return `example_${name}`.slice(0, 40);
  if (/url$/.test(name)) return "https://example.com/";
  if (name === "file_name") return "notes.txt";
  if (/origin/.test(name)) return "https://shop.example";
  if (/password/.test(name)) return "correct horse battery";
  return `example ${name}`.slice(0, (s.maxLength as number | undefined) ?? 100);
}
