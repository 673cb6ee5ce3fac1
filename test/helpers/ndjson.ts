/** One line of a streamed JSON route: a result or, last, an error. */
export interface StreamLine {
  result?: any;
  error?: { code: string; message: string; details?: { debug?: { reason?: string } }[] };
}

/**
 * Whether a line is a heartbeat of a watch stream: a result with only a cursor, the cursor of the last item sent
 * (docs/live-updates.md, "Heartbeats"). It is no event: a client passes over it.
 */
export const isHeartbeat = (l: StreamLine | null): boolean =>
  l?.result !== undefined && Object.keys(l.result).length === 1 && typeof l.result.cursor === "string";

/** How a stream is read: `heartbeats: true` returns the heartbeats too (for the tests of heartbeats themselves). */
export interface ReadOptions {
  heartbeats?: boolean;
}

/**
 * A newline-delimited JSON response read line by line, as a client of the JSON routes reads it: a heartbeat is passed
 * over (counted in `beats`), as a client passes over it, unless asked for. A heartbeat can come between any two
 * events of a watch (a stream's first one is due at its slice of the shared timer), so a test that counts events must
 * not count it.
 */
export class NdjsonReader {
  private buffer = "";
  private readonly decoder = new TextDecoder();
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  beats = 0;

  constructor(
    readonly response: Response,
    private readonly options: ReadOptions = {},
  ) {
    this.reader = response.body!.getReader();
  }

  /** The next line, or null once the stream has ended. */
  async next(): Promise<StreamLine | null> {
    for (;;) {
      const nl = this.buffer.indexOf("\n");
      if (nl >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        if (!line.trim()) continue;
        const parsed = JSON.parse(line) as StreamLine;
        if (!this.options.heartbeats && isHeartbeat(parsed)) {
          this.beats++;
          continue;
        }
        return parsed;
      }
      const { done, value } = await this.reader.read();
      if (done) return this.buffer.trim() ? (JSON.parse(this.buffer) as StreamLine) : null;
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** Stops reading (the server sees the client go away). */
  cancel(): Promise<void> {
    return this.reader.cancel();
  }
}

/**
 * A server-sent events response (Accept: text/event-stream) read event by event, as a fetch-based reader does: each
 * event's data is the NDJSON line it stands for (an `error` event carries the error), `id` its cursor; the
 * heartbeats (comment lines) are counted, not returned.
 */
export class EventStreamReader {
  private buffer = "";
  private readonly decoder = new TextDecoder();
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  beats = 0;

  constructor(readonly response: Response) {
    this.reader = response.body!.getReader();
  }

  /** The next event (with its id), or null once the stream has ended. */
  async next(): Promise<(StreamLine & { id?: string }) | null> {
    for (;;) {
      const end = this.buffer.indexOf("\n\n");
      if (end >= 0) {
        const block = this.buffer.slice(0, end).split("\n");
        this.buffer = this.buffer.slice(end + 2);
        if (block.every((l) => l.startsWith(":"))) {
          this.beats++;
          continue;
        }
        const field = (name: string) =>
          block.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2) ?? undefined;
        const line = JSON.parse(field("data") ?? "{}") as StreamLine;
        const id = field("id");
        return id === undefined ? line : { ...line, id };
      }
      const { done, value } = await this.reader.read();
      if (done) return null;
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  cancel(): Promise<void> {
    return this.reader.cancel();
  }
}

/** Opens a streamed GET route as server-sent events. */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<EventStreamReader> {
  return new EventStreamReader(await fetch(url, { headers: { accept: "text/event-stream", ...headers } }));
}

/** Opens a streamed GET route. */
export async function openNdjson(
  url: string,
  headers: Record<string, string> = {},
  options: ReadOptions = {},
): Promise<NdjsonReader> {
  return new NdjsonReader(await fetch(url, { headers }), options);
}

/**
 * Reads a stream until it ends: its closing error line (undefined when it ended cleanly) and the lines before it.
 * Rejects when it has not ended within `ms`: how a test says "ends within one second" without timing anything.
 */
export async function streamEnd(
  r: Pick<NdjsonReader, "next">,
  ms = 1000,
): Promise<{ error: StreamLine["error"]; seen: StreamLine[] }> {
  const seen: StreamLine[] = [];
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the stream was still open after ${ms} ms`)), ms);
  });
  const read = (async () => {
    for (let line = await r.next(); line; line = await r.next()) {
      if (line.error) return { error: line.error, seen };
      seen.push(line);
    }
    return { error: undefined, seen };
  })();
  try {
    return await Promise.race([read, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
