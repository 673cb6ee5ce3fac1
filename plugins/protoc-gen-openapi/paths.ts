import {
  type DescExtension,
  type DescField,
  type DescMessage,
  type DescMethod,
  getOption,
  hasOption,
} from "@bufbuild/protobuf";
import { commentOf, firstSentence } from "./comments.js";
import { conflictOf, requiresOneOf } from "./declared.js";
import { ERROR_SCHEMA } from "./errors.js";
import { exampleOf } from "./examples.js";
import type { Schema, SchemaBuilder } from "./schemas.js";
import { securityOf } from "./security.js";

/** One google.api.http binding of a method. */
export interface HttpBinding {
  verb: "get" | "post" | "put" | "patch" | "delete";
  template: string;
  body: string;
  method: DescMethod;
}

/** The OpenAPI operation of one binding: parameters, body, responses and security, all from the contract. */
export function operationOf(
  b: HttpBinding,
  schemas: SchemaBuilder,
  errors: { refs: Record<string, Schema>; bodyOnly: ReadonlySet<string>; conflictStatus: string },
  access: DescExtension | undefined,
): Schema {
  const { method } = b;
  const input = method.input;
  const security = securityOf(method, access);
  const queryToken = security.some((s) => "accessToken" in s);
  const pathVars = [...b.template.matchAll(/\{([a-z0-9_.]+)(?:=[^}]*)?\}/gi)].map((m) => m[1]!);
  const parameters: Schema[] = pathVars.map((name) => {
    const f = input.fields.find((x) => x.name === name);
    if (!f)
      throw new Error(
        `${method.parent.typeName}.${method.name}: path variable {${name}} names no field of ${input.typeName}`,
      );
    return {
      name,
      in: "path",
      required: true,
      schema: withoutDescription(schemas.fieldSchema(f, "input")),
      ...described(f),
    };
  });
  let requestBody: Schema | undefined;
  if (b.body === "*") {
    requestBody = { required: true, content: { "application/json": { schema: schemas.ref(input, "input") } } };
  } else {
    const bodyField = b.body === "" ? undefined : input.fields.find((f) => f.name === b.body);
    if (b.body !== "" && bodyField?.fieldKind !== "message")
      throw new Error(`${method.name}: body "${b.body}" must name a message field`);
    if (bodyField?.fieldKind === "message")
      requestBody = {
        required: true,
        content: { "application/json": { schema: schemas.ref(bodyField.message, "input") } },
      };
    for (const f of input.fields) {
      if (f === bodyField || pathVars.includes(f.name)) continue;
      // The access token in the query is a security scheme, not a parameter to document twice.
      if (f.name === "access_token" && queryToken) continue;
      if (!(f.fieldKind === "scalar" || f.fieldKind === "enum" || (f.fieldKind === "list" && f.listKind !== "message")))
        continue;
      const required = !schemas.isOptionalInput(f);
      const schema = withoutDescription(schemas.fieldSchema(f, "input"));
      // A required string is refused empty (`name=` is the unset field); a closed value set says so already.
      if (required && schema.type === "string" && !schema.enum) schema.minLength = 1;
      parameters.push({ name: f.name, in: "query", required, schema, ...described(f) });
    }
  }
  const rpcPath = `/${method.parent.typeName}/${method.name}`;
  // Either-or query parameters: OpenAPI cannot tie parameters together, so the rule is stated in words and as
  // `x-requires-one-of` (the contract test reads it).
  const either = requestBody ? undefined : requiresOneOf(input);
  const eitherText = either
    ? `Give ${either.exactlyOne ? "exactly one" : "at least one"} of ${either.fields.map((f) => `\`${f}\``).join(", ")}.`
    : "";
  const description = [
    commentOf(method),
    eitherText,
    `Also served as the RPC \`${rpcPath}\` over Connect, gRPC and gRPC-Web.`,
  ]
    .filter((s) => s)
    .join("\n\n");
  const op: Schema = {
    tags: [method.parent.name],
    operationId: `${method.parent.name}_${method.name}`,
    summary: summaryOf(method),
    description,
    security,
  };
  if (either) op["x-requires-one-of"] = either;
  if (parameters.length) op.parameters = parameters;
  if (requestBody) op.requestBody = requestBody;
  // One example per operation: the least request the document allows, generated from its schemas.
  const example = exampleOf(schemas.components, {
    parameters,
    body: requestBody
      ? (requestBody.content as Record<string, { schema: Schema }>)["application/json"]!.schema
      : undefined,
    either,
  });
  for (const p of parameters) {
    const name = p.name as string;
    if (name in example.parameters) p.example = example.parameters[name];
  }
  if (requestBody) (requestBody.content as Record<string, Schema>)["application/json"]!.example = example.body;
  const conflict = conflictOf(method);
  const errorRefs = Object.entries(errors.refs).filter(
    ([status]) =>
      (requestBody || !errors.bodyOnly.has(status)) && (status !== errors.conflictStatus || conflict !== undefined),
  );
  const success = noContent(method.output)
    ? { "204": { description: "No Content: the answer is its headers alone." } }
    : { "200": successResponse(method, schemas) };
  const responses: Record<string, Schema> = Object.fromEntries(
    Object.entries({ ...success, ...Object.fromEntries(errorRefs) }).sort(([a], [b]) => Number(a) - Number(b)),
  );
  if (conflict)
    responses[errors.conflictStatus] = {
      ...responses[errors.conflictStatus],
      description: `Conflict: ${conflict}. Nothing was changed. Connect code: already_exists.`,
    };
  op.responses = responses;
  return op;
}

function successResponse(method: DescMethod, schemas: SchemaBuilder): Schema {
  const out = schemas.ref(method.output, "output");
  if (method.methodKind === "server_streaming") {
    return {
      description:
        'Newline-delimited JSON: one object per line, `{"result": …}` for each event in order. If the call fails after the first line, the last line is `{"error": …}` (the Connect error JSON) and the status stays 200.',
      content: {
        "application/x-ndjson": {
          schema: {
            description: "The schema of one line.",
            oneOf: [
              { type: "object", required: ["result"], properties: { result: out } },
              {
                type: "object",
                required: ["error"],
                properties: { error: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } },
              },
            ],
          },
        },
        "text/event-stream": {
          schema: {
            type: "string",
            description:
              "Server-sent events, when asked with `Accept: text/event-stream`: each event's `data` is one line as above and its `id` the line's cursor; an error after the first event is an `error` event; heartbeats are comment lines. A reconnect's `Last-Event-ID` header resumes right after that event (it stands for `after_cursor`). The access token must be sent in the Authorization header: one in the URL is refused (400).",
          },
        },
      },
    };
  }
  return { description: "OK", content: { "application/json": { schema: out } } };
}

/** "GetX lists the things." → "Lists the things". */
function summaryOf(method: DescMethod): string {
  const s = firstSentence(commentOf(method)).replace(new RegExp(`^${method.name} `), "");
  return s ? s[0]!.toUpperCase() + s.slice(1) : method.name;
}

function described(f: DescField): { description?: string } {
  const d = commentOf(f);
  return d ? { description: d } : {};
}

function withoutDescription(s: Schema): Schema {
  const { description: _, ...rest } = s;
  return rest;
}

/** Whether a response message is declared `(no_content) = true` (its JSON route answers 204 with no body). */
function noContent(m: DescMessage): boolean {
  for (const file of [m.file, ...m.file.dependencies]) {
    const ext = file.extensions.find(
      (e) => e.name === "no_content" && e.extendee.typeName === "google.protobuf.MessageOptions",
    );
    if (ext) return hasOption(m, ext) && getOption(m, ext) === true;
  }
  return false;
}
