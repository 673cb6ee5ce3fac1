/** The `aiagent.v1.TextRules` option as the plugin reads it (the registry's message, not the generated type). */
export interface TextRules {
  maxLength: number;
  format: number;
}

// aiagent.v1.TextFormat values.
const LINE = 1;
const LINES = 2;
const UUID = 3;

/** The JSON Schema keywords that state a string field's declared rules (the server enforces the same). */
export function textSchema(rules: TextRules): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (rules.maxLength > 0) out.maxLength = rules.maxLength;
  if (rules.format === UUID) out.format = "uuid";
  else if (rules.format === LINE) out.pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$";
  else if (rules.format === LINES) out.pattern = "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f]*$";
  // Every string of a request: no NUL, whatever else it declares.
  else out.pattern = "^[^\\u0000]*$";
  return out;
}
