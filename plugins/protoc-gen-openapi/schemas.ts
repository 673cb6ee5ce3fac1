import {
  type DescExtension,
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
  ScalarType,
} from "@bufbuild/protobuf";
import { commentOf, factsOf } from "./comments.js";
import { requiresOneOf, valueFormat, valuePattern, whenRules } from "./declared.js";
import { FIELD_OVERRIDES } from "./overrides.js";
import { type TextRules, textSchema } from "./text-rules.js";

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it) object. */
export type Schema = Record<string, unknown>;

/** Whether a message is read from requests (`input`) or written in responses (`output`): the rules for presence differ. */
export type Role = "input" | "output";

const INT64 = new Set([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.SINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
]);
const INT32 = new Set([
  ScalarType.INT32,
  ScalarType.SINT32,
  ScalarType.SFIXED32,
  ScalarType.UINT32,
  ScalarType.FIXED32,
]);

/**
 * Builds component schemas that describe the service's JSON codec (src/protocol/rest/json-codec.ts):
 * proto field names, every scalar and list always written, 64-bit integers as JSON integers, enums by name,
 * unset sub-messages and oneofs left out.
 */
export class SchemaBuilder {
  readonly components: Record<string, Schema> = {};
  private readonly names = new Map<string, string>();

  /**
   * @param requests the methods' request messages. Only their own fields can be required: the contract's comments
   * speak of what a request must carry, and a nested message (an optional profile, say) is filled as far as known.
   */
  /**
   * @param allowedValues the contract's `aiagent.v1.allowed_values` field option, when the files declare it: a string
   * field's closed value set, which the JSON routes enforce; it wins over values a comment lists.
   */
  /**
   * @param pathBound request fields (`Type.field`) a route's path template fills: its body need not repeat them.
   */
  constructor(
    private readonly requests: ReadonlySet<DescMessage>,
    private readonly allowedValues?: DescExtension,
    private readonly pathBound: ReadonlySet<string> = new Set(),
    /** The contract's `aiagent.v1.text` field option: a request string's length bound and shape, enforced on every protocol. */
    private readonly textRules?: DescExtension,
  ) {}

  /** A `$ref` to the component schema of `desc` in `role`, building it on first use. */
  ref(desc: DescMessage, role: Role): Schema {
    return { $ref: `#/components/schemas/${this.nameOf(desc, role)}` };
  }

  /** The schema of one field's value in `role`, with the facts its comment states. */
  fieldSchema(f: DescField, role: Role): Schema {
    const description = commentOf(f);
    const facts = factsOf(description, f.fieldKind === "scalar" && (INT32.has(f.scalar) || INT64.has(f.scalar)));
    let s: Schema;
    switch (f.fieldKind) {
      case "scalar":
        s = scalarSchema(f.scalar);
        break;
      case "enum":
        s = { type: "string", enum: f.enum.values.map((v) => v.name) };
        break;
      case "message":
        s = this.ref(f.message, role);
        break;
      case "list":
        s = {
          type: "array",
          items:
            f.listKind === "message"
              ? this.ref(f.message, role)
              : f.listKind === "enum"
                ? { type: "string", enum: f.enum.values.map((v) => v.name) }
                : scalarSchema(f.scalar),
        };
        break;
      case "map":
        s = {
          type: "object",
          additionalProperties:
            f.mapKind === "message"
              ? this.ref(f.message, role)
              : f.mapKind === "enum"
                ? { type: "string" }
                : scalarSchema(f.scalar),
        };
        break;
    }
    if (facts.format && s.type === "string") s.format = facts.format;
    if (facts.enum && s.type === "string") s.enum = facts.enum;
    if (this.allowedValues && hasOption(f, this.allowedValues) && s.type === "string")
      s.enum = getOption(f, this.allowedValues) as string[];
    if (role === "input" && this.textRules && hasOption(f, this.textRules)) {
      const target = s.type === "array" ? (s.items as Schema) : s;
      if (target.type === "string") Object.assign(target, textSchema(getOption(f, this.textRules) as TextRules));
    }
    if (role === "input" && s.type === "string") {
      const format = valueFormat(f);
      if (format) s.format = format;
      const pattern = valuePattern(f);
      if (pattern) s.pattern = pattern;
    }
    if (facts.minimum !== undefined) s.minimum = facts.minimum;
    if (facts.maximum !== undefined) s.maximum = facts.maximum;
    if (facts.default !== undefined) s.default = facts.default;
    if (description) s.description = description;
    return s;
  }

  /** Whether a request may leave the field out: proto3 `optional`, or its comment (or the override table) says so. */
  isOptionalInput(f: DescField): boolean {
    return (
      f.proto.proto3Optional ||
      factsOf(commentOf(f), false).optional ||
      FIELD_OVERRIDES[`${f.parent.typeName}.${f.name}`]?.optional === true
    );
  }

  private nameOf(desc: DescMessage, role: Role): string {
    const key = `${role}:${desc.typeName}`;
    let name = this.names.get(key);
    if (name) return name;
    const other = this.names.get(`${role === "input" ? "output" : "input"}:${desc.typeName}`);
    // A message used both ways gets two schemas: what must be sent differs from what is always written.
    name = other === desc.typeName ? `${desc.typeName}.${role === "input" ? "Input" : "Output"}` : desc.typeName;
    this.names.set(key, name);
    this.components[name] = {}; // reserved first, so recursive messages end
    this.components[name] = this.messageSchema(desc, role);
    return name;
  }

  private messageSchema(desc: DescMessage, role: Role): Schema {
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    const oneOfs: Schema[] = [];
    for (const f of desc.fields) {
      properties[f.name] = this.fieldSchema(f, role);
      if (f.oneof) continue;
      const present =
        role === "output"
          ? isAlwaysWritten(f)
          : this.requests.has(desc) && !this.isOptionalInput(f) && !this.pathBound.has(`${desc.typeName}.${f.name}`);
      if (present) {
        required.push(f.name);
        // A required string is refused empty (proto3 cannot tell "" from absent); a closed value set says so already.
        const p = properties[f.name]!;
        if (role === "input" && p.type === "string" && !p.enum) p.minLength = 1;
        // A required list is refused empty, as a required string is.
        if (role === "input" && p.type === "array") p.minItems = 1;
      }
    }
    for (const o of desc.oneofs) {
      if (o.kind !== "oneof") continue;
      // Exactly one member appears (the encoder writes only the chosen case).
      oneOfs.push({ oneOf: o.fields.map((f) => ({ required: [f.name] })) });
    }
    const s: Schema = { type: "object" };
    const description = commentOf(desc);
    if (description) s.description = description;
    s.properties = properties;
    if (required.length) s.required = required;
    const either = role === "input" ? requiresOneOf(desc) : undefined;
    if (either) {
      // Given means non-empty: an empty string is the unset field.
      const alternatives = either.fields.map((name) => ({
        required: [name],
        properties: { [name]: { minLength: 1 } },
      }));
      oneOfs.push(either.exactlyOne ? { oneOf: alternatives } : { anyOf: alternatives });
    }
    if (role === "input")
      for (const w of whenRules(desc))
        oneOfs.push({
          if: { required: [w.field], properties: { [w.field]: { const: w.value } } },
          // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, never awaited
          then: {
            required: w.required,
            properties: Object.fromEntries([
              ...w.required.map((n) => [n, present(properties[n])]),
              ...w.refused.map((n) => [n, absent(properties[n])]),
            ]),
          },
        });
    // The JSON routes refuse a key that names no field, at every level of a request.
    if (role === "input") s.additionalProperties = false;
    if (oneOfs.length === 1) Object.assign(s, oneOfs[0]);
    else if (oneOfs.length > 1) s.allOf = oneOfs;
    return s;
  }
}

/** A constraint that a field holds a given (non-empty) value: an empty one is the unset field. */
function present(s: Schema | undefined): Schema {
  return s?.type === "array" ? { minItems: 1 } : s?.type === "string" ? { minLength: 1 } : { not: { const: 0 } };
}

/** A constraint that a field is left out or empty (its unset value). */
function absent(s: Schema | undefined): Schema {
  return s?.type === "array" ? { maxItems: 0 } : s?.type === "string" ? { maxLength: 0 } : { const: 0 };
}

/** The codec writes every scalar, enum, list and map; sub-messages unless unset, which their comment announces as "absent". */
function isAlwaysWritten(f: DescField): boolean {
  if (f.proto.proto3Optional) return false;
  if (f.fieldKind === "message") return !factsOf(commentOf(f), false).mayBeAbsent;
  return true;
}

function scalarSchema(t: ScalarType): Schema {
  if (INT64.has(t)) return { type: "integer", format: "int64" };
  if (INT32.has(t))
    return { type: "integer", format: t === ScalarType.UINT32 || t === ScalarType.FIXED32 ? "uint32" : "int32" };
  switch (t) {
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return { type: "number" };
    default:
      return { type: "string" };
  }
}
