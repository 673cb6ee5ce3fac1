/** POSTs `body` as JSON to `base` + `path` and answers the JSON of a 200 (anything else throws, with the body). */
export async function postJson(base: string, path: string, body: unknown): Promise<{ data: any }> {
  const r = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { data: any };
}
