/**
 * A small JSON Schema checker for the subset the generated OpenAPI document uses ($ref, type, properties,
 * required, items, additionalProperties, enum, const, format, minimum/maximum, oneOf/anyOf/allOf).
 * Strict: an object property the schema does not list is an error, so a schema that omits a field the server
 * writes fails as surely as one that promises a field the server leaves out.
 */
type Schema = Record<string, any>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Problems of `value` against `schema` (resolved within `doc`); empty when it conforms. */
export function schemaErrors(doc: Schema, schema: Schema, value: unknown, path = "$"): string[] {
  if (schema.$ref) {
    const target = resolve(doc, schema.$ref);
    const { $ref: _, description: __, ...rest } = schema;
    return [
      ...schemaErrors(doc, target, value, path),
      ...(Object.keys(rest).length ? schemaErrors(doc, rest, value, path) : []),
    ];
  }
  const errors: string[] = [];
  if (schema.type !== undefined && !hasType(value, schema.type))
    return [`${path}: expected ${schema.type}, got ${JSON.stringify(value)}`];
  if (schema.enum && !schema.enum.includes(value))
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${schema.enum.join(", ")}`);
  if ("const" in schema && value !== schema.const) errors.push(`${path}: expected ${JSON.stringify(schema.const)}`);
  if (typeof value === "string") {
    if (schema.format === "uuid" && !UUID.test(value)) errors.push(`${path}: not a uuid: ${value}`);
    if (schema.format === "date-time" && !(DATE_TIME.test(value) && !Number.isNaN(Date.parse(value))))
      errors.push(`${path}: not a date-time: ${value}`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${path}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${path}: above ${schema.maximum}`);
    if (schema.format === "int32" && (value < -(2 ** 31) || value >= 2 ** 31)) errors.push(`${path}: not an int32`);
  }
  if (Array.isArray(value) && schema.items)
    for (const [i, v] of value.entries()) errors.push(...schemaErrors(doc, schema.items, v, `${path}[${i}]`));
  if (isObject(value)) {
    for (const r of schema.required ?? []) if (!(r in value)) errors.push(`${path}: missing required ${r}`);
    for (const [k, v] of Object.entries(value)) {
      const p = schema.properties?.[k];
      if (p) errors.push(...schemaErrors(doc, p, v, `${path}.${k}`));
      else if (isObject(schema.additionalProperties))
        errors.push(...schemaErrors(doc, schema.additionalProperties, v, `${path}.${k}`));
      else if (schema.properties || schema.additionalProperties === false)
        errors.push(`${path}: ${k} is not in the schema`);
    }
  }
  for (const s of schema.allOf ?? []) errors.push(...schemaErrors(doc, s, value, path));
  if (schema.anyOf && !schema.anyOf.some((s: Schema) => schemaErrors(doc, s, value, path).length === 0))
    errors.push(`${path}: matches none of anyOf`);
  if (schema.oneOf) {
    const results = schema.oneOf.map((s: Schema) => schemaErrors(doc, s, value, path));
    const matching = results.filter((r: string[]) => r.length === 0).length;
    if (matching !== 1)
      errors.push(`${path}: matches ${matching} of oneOf (${results.map((r: string[]) => r[0] ?? "ok").join(" | ")})`);
  }
  return errors;
}

/** Follows a local `#/a/b` reference. */
export function resolve(doc: Schema, ref: string): Schema {
  if (!ref.startsWith("#/")) throw new Error(`only local references are supported: ${ref}`);
  let node: any = doc;
  for (const part of ref.slice(2).split("/")) {
    node = node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (node === undefined) throw new Error(`unresolved reference ${ref}`);
  }
  return node;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function hasType(v: unknown, type: string | string[]): boolean {
  const types = Array.isArray(type) ? type : [type];
  return types.some((t) => {
    switch (t) {
      case "string":
        return typeof v === "string";
      case "integer":
        return typeof v === "number" && Number.isInteger(v);
      case "number":
        return typeof v === "number";
      case "boolean":
        return typeof v === "boolean";
      case "array":
        return Array.isArray(v);
      case "object":
        return isObject(v);
      case "null":
        return v === null;
      default:
        throw new Error(`unknown type ${t}`);
    }
  });
}
