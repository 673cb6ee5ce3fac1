import type { AuditLog } from "../audit/audit-log.js";
import type { PrivacyService } from "./privacy-service.js";

/**
 * Applies the chatbots' retention periods and the audit log's on an interval. With several instances on one
 * store, `exclusive` lets one run at a time (PostgreSQL: an advisory lock; SQLite is one process): the others
 * skip that round.
 */
export class RetentionSchedule {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly d: {
      privacy: PrivacyService;
      audit: AuditLog;
      intervalMs: number;
      /** Runs fn only while no other instance runs it; undefined when another holds it. */
      exclusive: <T>(name: string, fn: () => Promise<T>) => Promise<T | undefined>;
      onError(e: unknown): void;
    },
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.d.intervalMs);
    this.timer.unref();
  }

  /** One round now (tests, and the schedule's ticks); a round still running is not started again. */
  runOnce(): Promise<void> {
    this.running ??= this.round().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async round(): Promise<void> {
    const work = async () => {
      await this.d.privacy.runRetention();
      await this.d.audit.prune();
    };
    try {
      await this.d.exclusive("retention", work);
    } catch (e) {
      this.d.onError(e);
    }
  }
}
