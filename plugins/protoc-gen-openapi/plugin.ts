import {
  create,
  createFileRegistry,
  type DescExtension,
  type DescService,
  getOption,
  hasOption,
} from "@bufbuild/protobuf";
import {
  type CodeGeneratorRequest,
  CodeGeneratorResponse_Feature,
  CodeGeneratorResponseSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import type { Plugin } from "@bufbuild/protoplugin";
import { commentOf } from "./comments.js";
import { errorComponents } from "./errors.js";
import { type HttpBinding, operationOf } from "./paths.js";
import { type Schema, SchemaBuilder } from "./schemas.js";
import { SECURITY_SCHEMES, securityOf } from "./security.js";

/** The shape of a google.api.HttpRule read reflectively (the plugin cannot import gen/, which buf cleans first). */
interface HttpRule {
  pattern: { case: string | undefined; value?: unknown };
  body: string;
  additionalBindings: HttpRule[];
}

const VERBS = new Set(["get", "post", "put", "patch", "delete"]);

/**
 * protoc-gen-openapi: writes `<package>.openapi.json`, an OpenAPI 3.1 document of the JSON routes that the
 * google.api.http annotations declare, for every package among the files to generate that has such routes.
 */
export const openapiPlugin: Plugin = {
  name: "protoc-gen-openapi",
  version: "v1",
  run(request: CodeGeneratorRequest) {
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: request.protoFile }));
    const httpExt = registry.getExtension("google.api.http");
    const byPackage = new Map<string, DescService[]>();
    for (const name of request.fileToGenerate) {
      const file = registry.getFile(name);
      if (!file) continue;
      for (const s of file.services)
        byPackage.set(file.proto.package, [...(byPackage.get(file.proto.package) ?? []), s]);
    }
    const files = [];
    for (const [pkg, found] of byPackage) {
      // Services that issue credentials first: a reader needs their routes before any other.
      const access = registry.getExtension(`${pkg}.access`);
      const issues = (s: DescService) => s.methods.every((m) => securityOf(m, access).length === 0);
      const services = [...found.filter(issues), ...found.filter((s) => !issues(s))];
      const bindings = httpExt ? services.flatMap((s) => bindingsOf(s, httpExt)) : [];
      if (bindings.length === 0) continue;
      const allowedValues = registry.getExtension(`${pkg}.allowed_values`);
      const textRules = registry.getExtension(`${pkg}.text`);
      files.push({
        name: `${pkg}.openapi.json`,
        content: `${JSON.stringify(documentOf(pkg, services, bindings, allowedValues, access, textRules), null, 2)}\n`,
      });
    }
    return create(CodeGeneratorResponseSchema, {
      supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
      file: files,
    });
  },
};

function bindingsOf(service: DescService, ext: DescExtension): HttpBinding[] {
  const out: HttpBinding[] = [];
  for (const method of service.methods) {
    if (!hasOption(method, ext)) continue;
    const rule = getOption(method, ext) as unknown as HttpRule;
    for (const r of [rule, ...rule.additionalBindings]) {
      const verb = r.pattern.case;
      if (!verb || !VERBS.has(verb)) continue;
      out.push({ verb: verb as HttpBinding["verb"], template: String(r.pattern.value), body: r.body, method });
    }
  }
  return out;
}

function documentOf(
  pkg: string,
  services: DescService[],
  bindings: HttpBinding[],
  allowedValues: DescExtension | undefined,
  access: DescExtension | undefined,
  textRules?: DescExtension,
): Schema {
  const pathBound = new Set(
    bindings.flatMap((b) =>
      [...b.template.matchAll(/\{([a-z0-9_.]+)(?:=[^}]*)?\}/gi)].map((m) => `${b.method.input.typeName}.${m[1]}`),
    ),
  );
  const schemas = new SchemaBuilder(new Set(bindings.map((b) => b.method.input)), allowedValues, pathBound, textRules);
  const errors = errorComponents(schemas);
  const paths: Record<string, Record<string, Schema>> = {};
  for (const b of bindings) {
    const path = b.template.replace(/\{([a-z0-9_.]+)=[^}]*\}/gi, "{$1}");
    (paths[path] ??= {})[b.verb] = operationOf(b, schemas, errors, access);
  }
  const product = pkg.split(".")[0] ?? pkg;
  const version = pkg.split(".").find((p) => /^v\d+/.test(p)) ?? "0";
  return {
    openapi: "3.1.0",
    info: {
      title: `${product} JSON API`,
      version,
      description: [
        `The JSON routes of the \`${pkg}\` services, generated from their protobuf contract (google.api.http annotations and comments).`,
        "Bodies are JSON with the proto field names; every scalar field is always present (empty string, 0 or false when unset); 64-bit integers (epoch milliseconds) are JSON integers. Errors are the Connect error JSON with Connect's HTTP status.",
        "The same methods are served over Connect, gRPC and gRPC-Web on the same port, at `/<package>.<Service>/<Method>`.",
      ].join("\n\n"),
    },
    // Where the routes are. First the service that serves this document (GET /openapi.json, and /docs, whose page may
    // only call its own origin); then an absolute address for a generated client, a local `npm start` by default.
    servers: [
      { url: "/", description: "The service that serves this document." },
      {
        url: "{scheme}://{host}",
        description: "The service at its public address (AIAGENT_BASE_URL) or, locally, AIAGENT_HOST:AIAGENT_PORT.",
        variables: {
          scheme: { default: "http", enum: ["http", "https"], description: "https behind a TLS-terminating proxy." },
          host: { default: "127.0.0.1:8080", description: "Host name or address, and port." },
        },
      },
    ],
    tags: services.map((s) => ({ name: s.name, description: commentOf(s) })),
    paths,
    components: {
      schemas: sortKeys(schemas.components),
      responses: errors.responses,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
