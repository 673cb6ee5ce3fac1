import { describe, expect, test } from "vitest";
import { schemaProblem } from "../../src/console/browser/pages/tool-schema.js";

// The console's check of a tool's parameters before they are sent (the service's Ajv has the last word).

describe("a tool's parameters, checked in the console", () => {
  test("empty, and object schemas the service takes, pass", () => {
    expect(schemaProblem("")).toBe("");
    expect(schemaProblem("  \n")).toBe("");
    expect(schemaProblem('{"type":"object"}')).toBe("");
    expect(
      schemaProblem(
        '{"type":"object","properties":{"id":{"type":["string","null"]},"n":{"type":"array","items":{"type":"integer"}},"any":true},"required":["id"]}',
      ),
    ).toBe("");
  });

  test.each([
    ["{type: object}", "not JSON"],
    ["[]", "must be a JSON Schema object"],
    ['"object"', "must be a JSON Schema object"],
    ['{"properties":{}}', '"type" must be "object" (it is null)'],
    ['{"type":"string"}', '"type" must be "object" (it is "string")'],
    ['{"type":"object","properties":[]}', "parameters.properties must be an object"],
    ['{"type":"object","properties":{"id":"string"}}', "parameters.properties.id must be a schema"],
    ['{"type":"object","properties":{"id":{"type":"text"}}}', 'parameters.properties.id has the type "text"'],
    ['{"type":"object","properties":{"id":{"type":"string"}},"required":"id"}', "must be a list of argument names"],
    ['{"type":"object","properties":{"id":{"type":"string"}},"required":["od"]}', 'names "od", which is not one'],
    ['{"type":"object","properties":{"l":{"type":"array","items":{"type":"date"}}}}', "parameters.properties.l.items"],
  ])("%s is refused: %s", (text, problem) => {
    expect(schemaProblem(text)).toContain(problem);
  });
});
