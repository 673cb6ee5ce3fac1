// A tool's parameters checked in the console before they are sent: the service compiles them with Ajv and refuses
// what it cannot (400 naming `parameters`); this tells the usual mistakes beside the field, in words, first.

const TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What is wrong with one (sub)schema at `at` ("" when nothing is). */
function subschemaProblem(s: unknown, at: string, depth: number): string {
  if (depth > 32) return `${at} is nested too deeply.`;
  if (typeof s === "boolean") return "";
  if (!isObject(s)) return `${at} must be a schema: a JSON object such as {"type": "string"}.`;
  const types = Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type];
  for (const t of types)
    if (typeof t !== "string" || !TYPES.has(t))
      return `${at} has the type ${JSON.stringify(t)}: use one of ${[...TYPES].join(", ")}.`;
  if (s.properties !== undefined) {
    if (!isObject(s.properties)) return `${at}.properties must be an object naming each argument's schema.`;
    for (const [k, v] of Object.entries(s.properties)) {
      const p = subschemaProblem(v, `${at}.properties.${k}`, depth + 1);
      if (p) return p;
    }
  }
  if (s.required !== undefined) {
    if (!Array.isArray(s.required) || s.required.some((r) => typeof r !== "string"))
      return `${at}.required must be a list of argument names, e.g. ["order_id"].`;
    const names = isObject(s.properties) ? Object.keys(s.properties) : [];
    const missing = s.required.find((r) => isObject(s.properties) && !names.includes(r as string));
    if (missing !== undefined) return `${at}.required names "${missing}", which is not one of its properties.`;
  }
  if (s.items !== undefined) return subschemaProblem(s.items, `${at}.items`, depth + 1);
  return "";
}

/**
 * What is wrong with a tool's parameters, as a sentence naming the place ("" when they may be sent): JSON text of
 * an object schema, or empty for none.
 */
export function schemaProblem(text: string): string {
  if (!text.trim()) return "";
  let s: unknown;
  try {
    s = JSON.parse(text);
  } catch (e) {
    return `The parameters are not JSON: ${(e as Error).message}.`;
  }
  if (!isObject(s)) return 'The parameters must be a JSON Schema object, e.g. {"type": "object", "properties": {…}}.';
  if (s.type !== "object")
    return `The parameters must be an object schema: "type" must be "object" (it is ${JSON.stringify(s.type ?? null)}).`;
  return subschemaProblem(s, "parameters", 0);
}
