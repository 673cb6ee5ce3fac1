/** A JSON response: status, headers and the parsed body. */
export interface JsonResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

async function parse<T>(r: Response): Promise<JsonResponse<T>> {
  const text = await r.text();
  let body: unknown = text;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  return { status: r.status, headers: r.headers, body: body as T };
}

/** POST a JSON body. */
export async function postJson<T = any>(
  base: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  return parse<T>(
    await fetch(base + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

/** GET with query parameters. */
export async function getJson<T = any>(
  base: string,
  path: string,
  query: Record<string, string | number> = {},
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  return parse<T>(await fetch(base + path + (qs ? `?${qs}` : ""), { headers }));
}

/** The ErrorInfo reason of a JSON-route error body. */
export function reasonOf(body: { details?: { debug?: { reason?: string } }[] }): string | undefined {
  return body.details?.find((d) => d.debug?.reason)?.debug?.reason;
}

/** Any method, with a JSON body when one is given (PATCH and DELETE routes of the account API). */
export async function requestJson<T = any>(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<JsonResponse<T>> {
  return parse<T>(
    await fetch(base + path, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
}
