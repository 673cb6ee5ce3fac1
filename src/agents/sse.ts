/** One server-sent event: its `data:` lines joined by newlines (other fields are not needed here). */
export interface SseEvent {
  data: string;
}

const MAX_EVENT_CHARS = 1024 * 1024;

/**
 * Splits a byte stream of server-sent events into events (WHATWG EventSource parsing, data field only):
 * lines end with \n, \r\n or \r; a blank line ends an event; lines starting with ":" are comments.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let size = 0;
  const line = function* (text: string): Generator<SseEvent> {
    if (text === "") {
      if (data.length > 0) yield { data: data.join("\n") };
      data = [];
      size = 0;
      return;
    }
    if (text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field !== "data") return;
    size += value.length;
    // A misbehaving upstream must not grow one event without bound.
    if (size > MAX_EVENT_CHARS) throw new Error("upstream event too large");
    data.push(value);
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let m: RegExpExecArray | null;
    const eol = /\r\n|\r|\n/g;
    let start = 0;
    while ((m = eol.exec(buffer)) !== null) {
      // A lone \r at the very end may be the first half of \r\n: wait for the next chunk.
      if (m[0] === "\r" && m.index === buffer.length - 1) break;
      yield* line(buffer.slice(start, m.index));
      start = m.index + m[0].length;
    }
    buffer = buffer.slice(start);
    if (buffer.length > MAX_EVENT_CHARS) throw new Error("upstream line too long");
  }
  buffer += decoder.decode();
  if (buffer !== "") yield* line(buffer.replace(/\r$/, ""));
  yield* line("");
}
