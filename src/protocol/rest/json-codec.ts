import {
  create,
  type DescField,
  type DescMessage,
  type DescOneof,
  getOption,
  hasOption,
  ScalarType,
} from "@bufbuild/protobuf";
import { allowed_values, TextFormat } from "../../../gen/aiagent/v1/field_options_pb.js";
import { invalidArgument } from "../../domain/errors.js";
import { textRules } from "./field-rules.js";

/**
 * The documented JSON form of messages: proto field names (snake_case), every field present,
 * 64-bit integers as JSON numbers (epoch milliseconds fit exactly). protobuf-es's toJson would
 * write camelCase names and int64 as strings, which the documented contract does not allow.
 */
type Encoder = (m: Record<string, unknown>) => Record<string, unknown>;
const encoders = new WeakMap<DescMessage, Encoder>();

/** The 64-bit integer scalar types (JSON: a number when safe, else a string). */
export const INT64 = new Set([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.SINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
]);
/** The 32-bit integer scalar types. */
export const INT32 = new Set([
  ScalarType.INT32,
  ScalarType.SINT32,
  ScalarType.SFIXED32,
  ScalarType.UINT32,
  ScalarType.FIXED32,
]);

function int64ToJson(v: unknown): number | string {
  const n = Number(v as bigint);
  return Number.isSafeInteger(n) ? n : String(v);
}

function scalarToJson(t: ScalarType, v: unknown): unknown {
  if (INT64.has(t)) return int64ToJson(v);
  if (t === ScalarType.BYTES) return Buffer.from(v as Uint8Array).toString("base64");
  return v;
}

/** Encodes a message (or message init) of `desc` into its documented JSON object. */
export function toDocumentedJson(desc: DescMessage, m: object): Record<string, unknown> {
  return encoderFor(desc)(m as Record<string, unknown>);
}

function encoderFor(desc: DescMessage): Encoder {
  let enc = encoders.get(desc);
  if (enc) return enc;
  const steps: ((m: Record<string, unknown>, out: Record<string, unknown>) => void)[] = [];
  const seenOneofs = new Set<DescOneof>();
  for (const f of desc.fields) {
    if (f.oneof) {
      const o = f.oneof;
      if (seenOneofs.has(o)) continue;
      seenOneofs.add(o);
      steps.push((m, out) => {
        const sel = m[o.localName] as { case?: string; value?: unknown } | undefined;
        if (!sel?.case) return;
        const member = o.fields.find((x) => x.localName === sel.case);
        if (member) out[member.name] = valueToJson(member, sel.value);
      });
      continue;
    }
    const name = f.name;
    const local = f.localName;
    const convert = converterFor(f);
    // Unset sub-messages and unset proto3-optional fields are left out; plain scalars always appear.
    const omitUnset = f.fieldKind === "message" || f.proto.proto3Optional;
    const fallback = omitUnset ? undefined : defaultJson(f);
    steps.push((m, out) => {
      const v = m[local];
      if (v === undefined) {
        if (!omitUnset)
          out[name] = Array.isArray(fallback) ? [] : fallback !== null && typeof fallback === "object" ? {} : fallback;
        return;
      }
      out[name] = convert(v);
    });
  }
  enc = (m) => {
    const out: Record<string, unknown> = {};
    for (const s of steps) s(m, out);
    return out;
  };
  encoders.set(desc, enc);
  return enc;
}

function defaultJson(f: DescField): unknown {
  switch (f.fieldKind) {
    case "list":
      return [];
    case "map":
      return {};
    case "enum":
      return f.enum.values[0]?.name ?? 0;
    case "scalar":
      if (f.scalar === ScalarType.STRING || f.scalar === ScalarType.BYTES) return "";
      if (f.scalar === ScalarType.BOOL) return false;
      return 0;
    default:
      return null;
  }
}

const identity = (v: unknown) => v;

/** The JSON conversion of one field's set value, chosen once per field instead of on every value. */
function converterFor(f: DescField): (v: unknown) => unknown {
  switch (f.fieldKind) {
    case "scalar":
      return INT64.has(f.scalar) || f.scalar === ScalarType.BYTES ? (v) => scalarToJson(f.scalar, v) : identity;
    case "list":
      if (f.listKind === "message") {
        const message = f.message;
        return (v) => {
          const enc = encoderFor(message);
          const list = v as Record<string, unknown>[];
          const out = new Array<unknown>(list.length);
          for (let i = 0; i < list.length; i++) out[i] = enc(list[i]!);
          return out;
        };
      }
      if (f.listKind === "scalar" && (INT64.has(f.scalar) || f.scalar === ScalarType.BYTES))
        return (v) => (v as unknown[]).map((x) => scalarToJson(f.scalar, x));
      return f.listKind === "scalar" ? (v) => (v as unknown[]).slice() : identity;
    default:
      return (v) => valueToJson(f, v);
  }
}

function valueToJson(f: DescField, v: unknown): unknown {
  switch (f.fieldKind) {
    case "scalar":
      return scalarToJson(f.scalar, v);
    case "enum":
      return f.enum.values.find((e) => e.number === v)?.name ?? v;
    case "message":
      return encoderFor(f.message)(v as Record<string, unknown>);
    case "list":
      if (f.listKind === "message")
        return (v as object[]).map((x) => encoderFor(f.message)(x as Record<string, unknown>));
      if (f.listKind === "scalar") return (v as unknown[]).map((x) => scalarToJson(f.scalar, x));
      return v;
    case "map":
      return v;
  }
}

/** A message's fields by proto name (the only names the JSON routes take), and by protobuf JSON name (for hints). */
interface FieldIndex {
  byName: Map<string, DescField>;
  byJsonName: Map<string, DescField>;
}
const fieldIndexes = new WeakMap<DescMessage, FieldIndex>();

/** Field lookups by name, built once per message type instead of a search of its fields per key. */
export function fieldsOf(desc: DescMessage): FieldIndex {
  let index = fieldIndexes.get(desc);
  if (!index) {
    const byName = new Map<string, DescField>();
    const byJsonName = new Map<string, DescField>();
    for (const f of desc.fields) byName.set(f.name, f);
    for (const f of desc.fields) if (!byName.has(f.jsonName)) byJsonName.set(f.jsonName, f);
    index = { byName, byJsonName };
    fieldIndexes.set(desc, index);
  }
  return index;
}

/** The refusal of a key that names no field, with the documented name when the key is its protobuf JSON alias. */
function unknownField(desc: DescMessage, key: string, name: string, what: string) {
  const alias = fieldsOf(desc).byJsonName.get(key);
  return invalidArgument(name, alias ? `is not a known ${what}; the name is ${alias.name}` : `is not a known ${what}`);
}

const allowed = new WeakMap<DescField, readonly string[] | null>();

/** The values a string field is limited to by its (aiagent.v1.allowed_values) option; null when any string goes. */
function allowedValues(f: DescField): readonly string[] | null {
  let v = allowed.get(f);
  if (v === undefined) {
    v = hasOption(f, allowed_values) ? getOption(f, allowed_values) : null;
    allowed.set(f, v);
  }
  return v;
}

function checkAllowed(f: DescField, value: string, name: string): string {
  const values = allowedValues(f);
  if (values && !values.includes(value)) throw invalidArgument(name, `must be one of ${values.join(", ")}`);
  return value;
}

/** Most levels of nesting accepted in a JSON body. */
export const MAX_JSON_DEPTH = 16;

/** Decodes a parsed JSON body into a message init of `desc`, strictly: unknown fields and wrong types name the field. */
export function fromDocumentedJson(desc: DescMessage, json: unknown, path = "", depth = 0): Record<string, unknown> {
  if (depth > MAX_JSON_DEPTH) throw invalidArgument(path || "body", "is nested too deeply");
  if (json === null || typeof json !== "object" || Array.isArray(json))
    throw invalidArgument(path || "body", "must be a JSON object");
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json as Record<string, unknown>)) {
    const f = fieldsOf(desc).byName.get(key);
    const name = path ? `${path}.${key}` : key;
    // An empty key names no field: refused naming where it stands (the body, or the object it is in).
    if (key === "") throw invalidArgument(path || "body", 'has an empty key ("")');
    if (!f) throw unknownField(desc, key, name, "field");
    // null is not a value of any documented field, and never stands for "absent" or "default": leave the field out.
    if (value === null) throw invalidArgument(name, "must not be null: leave the field out for its default");
    const v = fieldFromJson(f, value, name, depth);
    if (f.oneof) {
      const taken = out[f.oneof.localName] as { case: string } | undefined;
      if (taken)
        throw invalidArgument(
          name,
          `cannot be given together with ${f.oneof.fields.find((x) => x.localName === taken.case)?.name}`,
        );
      out[f.oneof.localName] = { case: f.localName, value: v };
    } else {
      out[f.localName] = v;
    }
  }
  return out;
}

function fieldFromJson(f: DescField, value: unknown, name: string, depth: number): unknown {
  switch (f.fieldKind) {
    case "scalar":
      return f.scalar === ScalarType.STRING
        ? checkAllowed(f, scalarFromJson(f.scalar, value, name) as string, name)
        : scalarFromJson(f.scalar, value, name);
    case "message":
      return fromDocumentedJson(f.message, value, name, depth + 1);
    case "list":
      if (!Array.isArray(value)) throw invalidArgument(name, "must be an array");
      return value.map((x, i) =>
        f.listKind === "message"
          ? fromDocumentedJson(f.message, x, `${name}[${i}]`, depth + 1)
          : f.listKind === "scalar"
            ? scalarFromJson(f.scalar, x, `${name}[${i}]`)
            : x,
      );
    default:
      throw invalidArgument(name, "is not supported in JSON");
  }
}

function scalarFromJson(t: ScalarType, v: unknown, name: string): unknown {
  if (t === ScalarType.STRING) {
    if (typeof v !== "string") throw invalidArgument(name, "must be a string");
    return v;
  }
  if (t === ScalarType.BOOL) {
    if (typeof v !== "boolean") throw invalidArgument(name, "must be true or false");
    return v;
  }
  if (INT32.has(t) || INT64.has(t)) {
    const n = typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : v;
    if (typeof n !== "number" || !Number.isSafeInteger(n)) throw invalidArgument(name, "must be an integer");
    if (INT32.has(t) && (n > 2147483647 || n < -2147483648)) throw invalidArgument(name, "is out of range");
    return INT64.has(t) ? BigInt(n) : n;
  }
  if (t === ScalarType.DOUBLE || t === ScalarType.FLOAT) {
    if (typeof v !== "number") throw invalidArgument(name, "must be a number");
    return v;
  }
  // Bytes as proto3 JSON has them: base64, standard or URL-safe, padded or not.
  if (t === ScalarType.BYTES) {
    if (typeof v !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(v)) throw invalidArgument(name, "must be base64");
    return new Uint8Array(Buffer.from(v, "base64"));
  }
  throw invalidArgument(name, "is not supported in JSON");
}

/**
 * Decodes query parameters (already strictly decoded, see query.ts) into a message init of `desc`; every parameter
 * must name a scalar field, once. An empty value is a value: refused for integers, booleans and closed value sets.
 */
export function fromQuery(
  desc: DescMessage,
  params: readonly (readonly [string, string])[],
  skip: ReadonlySet<string>,
  out: Record<string, unknown> = {},
): Record<string, unknown> {
  const { byName } = fieldsOf(desc);
  for (let i = 0; i < params.length; i++) {
    const [key, raw] = params[i]!;
    const f = byName.get(key);
    if (!f) {
      if (skip.has(key)) continue;
      throw unknownField(desc, key, key, "parameter");
    }
    if (f.fieldKind === "list" && f.listKind === "scalar") {
      ((out[f.localName] ??= []) as unknown[]).push(queryScalar(f.scalar, raw, key));
      continue;
    }
    // Each name is one field's: a field given before has its name among the earlier parameters (read from the
    // parameters, not from `out`, which may be a zero message whose unset fields hold their zero values).
    if (givenBefore(params, i, key)) throw invalidArgument(key, "is given more than once");
    if (f.fieldKind !== "scalar") throw invalidArgument(key, "cannot be given as a query parameter");
    // An empty value is a value, refused wherever "" is not one (an integer, a closed set, an id): only free text
    // (search=) takes it, as the empty text. Leave a parameter out for its default.
    if (raw === "" && f.scalar === ScalarType.STRING && textRules(f)?.format === TextFormat.UUID)
      throw invalidArgument(key, "is empty: leave the parameter out for its default");
    out[f.localName] = f.scalar === ScalarType.STRING ? checkAllowed(f, raw, key) : queryScalar(f.scalar, raw, key);
  }
  return out;
}

/** Whether a parameter before the i-th has its name (a query names a few fields: a scan, no Set per request). */
function givenBefore(params: readonly (readonly [string, string])[], i: number, key: string): boolean {
  for (let j = 0; j < i; j++) if (params[j]![0] === key) return true;
  return false;
}

const zeros = new WeakMap<DescMessage, Record<string, unknown> | null>();

/**
 * The zero message of `desc`, to be copied, when each of its fields is a scalar outside any oneof and the message is
 * a plain object (proto3: no prototype holding defaults): every value in it is then immutable, so a copy is a new
 * zero message, the one protobuf's `create` makes, without its walk over the fields. Null for any other message.
 */
export function flatZero(desc: DescMessage): Readonly<Record<string, unknown>> | null {
  let z = zeros.get(desc);
  if (z === undefined) {
    const m = create(desc) as unknown as Record<string, unknown>;
    z =
      desc.oneofs.length === 0 &&
      desc.fields.every((f) => f.fieldKind === "scalar") &&
      Object.getPrototypeOf(m) === Object.prototype
        ? m
        : null;
    zeros.set(desc, z);
  }
  return z;
}

function queryScalar(t: ScalarType, raw: string, name: string): unknown {
  if (t === ScalarType.STRING) return raw;
  if (t === ScalarType.BOOL) {
    if (raw !== "true" && raw !== "false") throw invalidArgument(name, "must be true or false");
    return raw === "true";
  }
  if (INT32.has(t) || INT64.has(t)) {
    if (!/^-?\d{1,16}$/.test(raw)) throw invalidArgument(name, "must be an integer");
    return scalarFromJson(t, Number(raw), name);
  }
  return scalarFromJson(t, Number(raw), name);
}
