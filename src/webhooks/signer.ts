import { Webhook } from "standardwebhooks";
import type { Sign } from "../domain/webhook/dispatcher.js";

/** Signs with the standardwebhooks package: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`. */
export const standardSign: Sign = (secret, id, timestampMs, body) =>
  new Webhook(secret).sign(id, new Date(timestampMs), body);
