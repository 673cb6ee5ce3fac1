import type { ApiKeyRecord } from "./repository.js";

/** How long a rotated-out API key keeps working by default: a day, time to deploy the new one everywhere. */
export const DEFAULT_API_KEY_GRACE_SECONDS = 24 * 3600;
/** Longest grace period a rotation may give: 30 days. */
export const MAX_API_KEY_GRACE_SECONDS = 30 * 24 * 3600;
/** A key's last use is recorded to this resolution, so a busy key costs one write a minute, not one per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** Where a key stands: `expiring` still works until its grace period ends. */
export type ApiKeyStatus = "active" | "expiring" | "expired" | "revoked";

/** The state of a key at `now`. */
export function apiKeyStatus(k: Pick<ApiKeyRecord, "revokedAt" | "expiresAt">, now: number): ApiKeyStatus {
  if (k.revokedAt !== null) return "revoked";
  if (k.expiresAt === null) return "active";
  return k.expiresAt > now ? "expiring" : "expired";
}

/** True while the key is accepted. */
export function apiKeyUsable(k: Pick<ApiKeyRecord, "revokedAt" | "expiresAt">, now: number): boolean {
  const s = apiKeyStatus(k, now);
  return s === "active" || s === "expiring";
}

/** What listing a key shows: never the key or its hash. */
export interface ApiKeyView {
  apiKeyId: string;
  /** The key's first characters, to recognise it by. */
  prefix: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  expiresAt: number | null;
  revokedAt: number | null;
  status: ApiKeyStatus;
}

/** The listing of a stored key. */
export function apiKeyView(k: ApiKeyRecord, now: number): ApiKeyView {
  return {
    apiKeyId: k.apiKeyId,
    prefix: k.hint,
    name: k.name,
    createdAt: k.createdAt,
    lastUsedAt: k.lastUsedAt,
    expiresAt: k.expiresAt,
    revokedAt: k.revokedAt,
    status: apiKeyStatus(k, now),
  };
}
