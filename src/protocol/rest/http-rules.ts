import { type DescMethod, type DescService, getOption, hasOption } from "@bufbuild/protobuf";
import { http } from "../../../gen/google/api/annotations_pb.js";

/** One JSON route, read from a method's google.api.http annotation. */
export interface HttpRoute {
  verb: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The path template, e.g. /get_messages_for_conversation or /v1/things/{thing_id}. */
  template: string;
  /** "*" (the whole body is the request), "" (no body) or the name of the field the body fills. */
  body: string;
  method: DescMethod;
}

/** Every JSON route the services' annotations declare. The contract is the only source of paths and verbs. */
export function httpRoutes(services: readonly DescService[]): HttpRoute[] {
  const routes: HttpRoute[] = [];
  for (const service of services) {
    for (const method of service.methods) {
      if (!hasOption(method, http)) continue;
      const rule = getOption(method, http);
      const bindings = [rule, ...rule.additionalBindings];
      for (const b of bindings) {
        const p = b.pattern;
        if (p.case === undefined || p.case === "custom") continue;
        routes.push({ verb: p.case.toUpperCase() as HttpRoute["verb"], template: p.value, body: b.body, method });
      }
    }
  }
  return routes;
}

/** A compiled path template: literal segments and {field} variables. */
export interface PathMatcher {
  /**
   * The field values the path binds, still percent-encoded (see percentDecode), or undefined when it does not match.
   */
  match(path: string): Record<string, string> | undefined;
  readonly literal: boolean;
}

/** Compiles a path template ("/a/{id}/b") into a matcher. */
export function compileTemplate(template: string): PathMatcher {
  const segments = template.split("/").slice(1);
  const vars = segments.map((s) => /^\{([a-z0-9_.]+)(=\*)?\}$/i.exec(s)?.[1]);
  if (vars.every((v) => v === undefined)) return { literal: true, match: (p) => (p === template ? {} : undefined) };
  return {
    literal: false,
    match(path) {
      const parts = path.split("/").slice(1);
      if (parts.length !== segments.length) return undefined;
      const out: Record<string, string> = {};
      for (let i = 0; i < parts.length; i++) {
        const v = vars[i];
        if (v) {
          if (parts[i] === "") return undefined;
          out[v] = parts[i]!;
        } else if (parts[i] !== segments[i]) return undefined;
      }
      return out;
    },
  };
}
