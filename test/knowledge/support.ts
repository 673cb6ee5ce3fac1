import { getJson, postJson } from "../helpers/http.js";

/** A knowledge source as the JSON routes answer it. */
export interface SourceJson {
  source_id: string;
  kind: string;
  title: string;
  status: string;
  status_reason?: string;
  page_count?: number;
  chunk_count?: number;
  content_hash?: string;
  version?: number;
  media_type?: string;
}

/** Adds a source through the JSON route. */
export async function addSource(url: string, token: string, chatbotId: string, body: Record<string, unknown>) {
  return postJson<{ data: SourceJson }>(url, `/v1/account/chatbots/${chatbotId}/knowledge_sources`, body, {
    authorization: `Bearer ${token}`,
  });
}

/** Waits until the source is indexed or failed (polling the JSON route), and answers it. */
export async function settled(url: string, token: string, chatbotId: string, sourceId: string): Promise<SourceJson> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const r = await getJson<{ data: SourceJson }>(
      url,
      `/v1/account/chatbots/${chatbotId}/knowledge_sources/${sourceId}`,
      {},
      { authorization: `Bearer ${token}` },
    );
    if (r.status !== 200) throw new Error(`get source: ${r.status} ${JSON.stringify(r.body)}`);
    if (r.body.data.status === "indexed" || r.body.data.status === "failed") return r.body.data;
    if (Date.now() > deadline) throw new Error(`source ${sourceId} still ${r.body.data.status}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

export const b64 = (b: Buffer | string) => Buffer.from(b).toString("base64");
