import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

const RETRIES = 2;

/**
 * Every write that takes an idempotency key gets one (a fresh UUID per action) and is sent again with the same key
 * when its answer is lost (network cut, service unavailable): the service then answers the first answer and writes
 * nothing twice. Reads and streams pass through.
 */
export const idempotentWrites: Interceptor = (next) => async (req) => {
  const message = req.message as { idempotencyKey?: unknown };
  if (req.stream || typeof message.idempotencyKey !== "string") return next(req);
  if (message.idempotencyKey === "") message.idempotencyKey = crypto.randomUUID();
  for (let attempt = 0; ; attempt++) {
    try {
      return await next(req);
    } catch (e) {
      const lost = !(e instanceof ConnectError) || e.code === Code.Unavailable || e.code === Code.Unknown;
      if (!lost || attempt >= RETRIES || req.signal.aborted) throw e;
      await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
    }
  }
};
