import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { KnowledgeFailure } from "../domain/knowledge/knowledge-service.js";
import type { ExtractJob, ExtractResult } from "./extract.js";

/** Bounds of one extraction. */
export interface ExtractLimits {
  /** Longest one document may take, ms (default 60,000). */
  timeoutMs?: number;
  /** The worker's heap, MB (default 384): a document needing more (a ZIP bomb as DOCX) fails with a reason. */
  memoryMb?: number;
}

/** Registers tsx in the worker, then loads the TypeScript worker (only when running from source). */
const TS_BOOT = `
const { workerData } = require("node:worker_threads");
import(workerData.tsx).then((api) => { api.register(); return import(workerData.entry); });
`;

interface Pending {
  resolve(r: ExtractResult): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * Reads documents in one worker thread, off the event loop that serves requests, one at a time. A document that
 * runs out of the worker's memory or time ends the worker (a new one starts for the next) and fails with a reason.
 */
export class ExtractWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly limits: ExtractLimits = {}) {}

  /** Reads one document (queued behind the one being read). */
  extract(job: ExtractJob): Promise<ExtractResult> {
    const run = this.queue.then(() => this.run(job));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Ends the worker. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }

  private spawn(): Worker {
    // Compiled, the worker is the .js beside this file; from source (the test runner, tsx), the .ts one, loaded
    // after registering tsx's loader in the worker.
    const ts = import.meta.url.endsWith(".ts");
    const resourceLimits = { maxOldGenerationSizeMb: this.limits.memoryMb ?? 384, stackSizeMb: 8 };
    const w = ts
      ? new Worker(TS_BOOT, {
          eval: true,
          workerData: {
            tsx: pathToFileURL(
              join(dirname(createRequire(import.meta.url).resolve("tsx/package.json")), "dist/esm/api/index.mjs"),
            ).href,
            entry: new URL("./extract-worker.ts", import.meta.url).href,
          },
          resourceLimits,
        })
      : new Worker(new URL("./extract-worker.js", import.meta.url), { resourceLimits });
    w.unref();
    w.on("message", (m: { id: number; result?: ExtractResult; failure?: boolean; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.result) p.resolve(m.result);
      else if (m.failure) p.reject(new KnowledgeFailure(m.error ?? "the document cannot be read"));
      else p.reject(new Error(m.error));
    });
    const fail = (e: Error) => {
      if (this.worker === w) this.worker = undefined;
      const memory = (e as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY";
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        clearTimeout(p.timer);
        p.reject(
          memory
            ? new KnowledgeFailure(
                "reading the document needed more memory than allowed (a compressed file that unpacks to a huge size?); it is not indexed",
              )
            : e,
        );
      }
    };
    w.on("error", fail);
    w.on("exit", (code) => fail(new Error(`the extraction worker stopped (exit code ${code})`)));
    return w;
  }

  private run(job: ExtractJob): Promise<ExtractResult> {
    this.worker ??= this.spawn();
    const w = this.worker;
    const id = this.next++;
    const timeoutMs = this.limits.timeoutMs ?? 60_000;
    return new Promise<ExtractResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        if (this.worker === w) this.worker = undefined;
        void w.terminate();
        reject(
          new KnowledgeFailure(
            `reading the document took longer than ${Math.round(timeoutMs / 1000)} s; split it into smaller files`,
          ),
        );
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      // The bytes are copied to the worker (the caller keeps its own).
      w.postMessage({ id, job });
    });
  }
}
