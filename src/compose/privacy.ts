import type { AuditLog } from "../domain/audit/audit-log.js";
import type { ConversationService } from "../domain/conversation/conversation-service.js";
import type { EventLog } from "../domain/log/event-log.js";
import { PrivacyService } from "../domain/privacy/privacy-service.js";
import { RetentionSchedule } from "../domain/privacy/retention-schedule.js";
import type { Repositories } from "../domain/store.js";
import { type Base, warnOn } from "./base.js";

export interface PrivacyDeps {
  eventLog: EventLog;
  audit: AuditLog<Repositories>;
  conversations: ConversationService;
}

export interface PrivacyParts {
  /** Erasure, export and retention of customers' data. */
  privacy: PrivacyService;
  /** Applies retention periods on an interval (started by listen()). */
  retention: RetentionSchedule;
  /** Stops following other instances' erasures. */
  stopErasureWatch: () => void;
}

/** Erasure, export and the retention schedule, and the caches they empty. */
export async function composePrivacy(b: Base, d: PrivacyDeps): Promise<PrivacyParts> {
  const { store, audit } = { ...b, ...d };
  const forget = (ids: readonly string[] | undefined) => d.conversations.forget(ids);
  const privacy = new PrivacyService({
    store,
    transaction: b.transaction,
    clock: b.clock,
    log: d.eventLog,
    audit,
    forget,
  });
  const retention = new RetentionSchedule({
    privacy,
    audit,
    intervalMs: b.config.retentionIntervalSeconds * 1000,
    exclusive: (name, fn) => store.exclusive(name, fn),
    onError: warnOn(b.log, "retention run"),
  });
  // Conversations erased or expired through another instance leave this one's caches too.
  const stopErasureWatch = await store.onConversationsErased(forget);
  return { privacy, retention, stopErasureWatch };
}
