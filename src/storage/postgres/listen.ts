import pg from "pg";

/**
 * A dedicated connection LISTENing on one channel, opened again after it drops (the server restarted, the
 * connection was terminated); `onChange` runs for every notification and once after each reconnect, since
 * notifications sent while away are lost.
 */
export class PgListener {
  private client: pg.Client | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly onChange: (payload: string | undefined) => void,
  ) {}

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on("notification", (n) => {
      if (n.channel === this.channel) this.onChange(n.payload);
    });
    client.on("error", () => this.reconnect());
    client.on("end", () => this.reconnect());
    await client.connect();
    await client.query(`LISTEN ${this.channel}`);
    this.client = client;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    void this.client?.end().catch(() => undefined);
  }

  private reconnect(): void {
    if (this.closed || this.retry) return;
    this.client = undefined;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.start()
        .then(() => this.onChange(undefined))
        .catch(() => this.reconnect());
    }, 1000);
  }
}
