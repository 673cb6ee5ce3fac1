import {
  type DescField,
  type DescFile,
  type DescMessage,
  type DescMethod,
  getOption,
  hasOption,
} from "@bufbuild/protobuf";

/**
 * The value of the contract's own option `name` on a field, message or method, read from the registry (the plugin
 * cannot import gen/, which buf cleans first); undefined when the element does not declare it.
 */
export function declared<T>(desc: DescField | DescMessage | DescMethod, name: string): T | undefined {
  const file: DescFile = desc.kind === "message" ? desc.file : desc.parent.file;
  for (const f of [file, ...file.dependencies]) {
    const ext = f.extensions.find((e) => e.name === name && e.typeName.startsWith(`${file.proto.package}.`));
    if (ext) return hasOption(desc, ext) ? (getOption(desc, ext) as T) : undefined;
  }
  return undefined;
}

// aiagent.v1.ValueFormat values.
const FORMATS: Record<number, string> = { 1: "email", 2: "date" };

/** The JSON Schema `format` of a request string's declared `(value_format)`, if any. */
export function valueFormat(f: DescField): string | undefined {
  const v = declared<number>(f, "value_format");
  return v === undefined ? undefined : FORMATS[v];
}

/** The regular expression a request string must match: its declared `(value_pattern)`, if any. */
export function valuePattern(f: DescField): string | undefined {
  return declared<string>(f, "value_pattern") || undefined;
}

/** A request message's declared `(requires_one_of)`: fields of which one (or exactly one) must be given. */
export function requiresOneOf(m: DescMessage): { fields: string[]; exactlyOne: boolean } | undefined {
  const v = declared<{ fields: string[]; exactlyOne: boolean }>(m, "requires_one_of");
  return v && v.fields.length > 0 ? { fields: [...v.fields], exactlyOne: v.exactlyOne } : undefined;
}

/** A request message's declared `(when)` rules: what one value of a field requires or refuses of the others. */
export function whenRules(m: DescMessage): { field: string; value: string; required: string[]; refused: string[] }[] {
  const v = declared<{ field: string; value: string; required: string[]; refused: string[] }[]>(m, "when") ?? [];
  return v.map((w) => ({ field: w.field, value: w.value, required: [...w.required], refused: [...w.refused] }));
}

/** When a method answers already_exists, in words: its declared `(conflict)`, or a reused idempotency key. */
export function conflictOf(m: DescMethod): string | undefined {
  const declaredText = declared<string>(m, "conflict");
  if (declaredText) return declaredText;
  if (m.input.fields.some((f) => f.name === "idempotency_key"))
    return "the idempotency key (field or Idempotency-Key header) was used for a different request";
  return undefined;
}
