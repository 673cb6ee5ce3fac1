import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AccountService as AccountServiceDesc } from "../../../gen/aiagent/v1/account_service_pb.js";
import type { AuditEventSchema, ContactExportSchema } from "../../../gen/aiagent/v1/privacy_pb.js";
import type { AuditLog } from "../../domain/audit/audit-log.js";
import type { AuditEventRecord } from "../../domain/audit/repository.js";
import type { ContactDocument, PrivacyService } from "../../domain/privacy/privacy-service.js";
import { isoTime } from "../../domain/time.js";
import { auditedCaller } from "../audited.js";
import type { Handlers } from "../call.js";

type PrivacyMethods = Pick<
  Handlers<typeof AccountServiceDesc>,
  "eraseContact" | "exportContact" | "listAuditEvents" | "setChatbotRetention"
>;

function auditEvent(e: AuditEventRecord): MessageInitShape<typeof AuditEventSchema> {
  return {
    auditEventId: e.auditEventId,
    kind: e.kind,
    actor: e.actor,
    target: e.target,
    details: e.details,
    address: e.address,
    userAgent: e.userAgent,
    createdAt: isoTime(e.createdAt),
  };
}

export function exportedContact(doc: ContactDocument): MessageInitShape<typeof ContactExportSchema> {
  const c = doc.contact;
  return {
    contact: {
      contactId: c.contactId,
      userId: c.userId,
      contactName: c.contactName,
      email: c.email,
      phoneNumber: c.phoneNumber,
    },
    conversations: doc.conversations.map((v) => ({
      conversationId: v.conversationId,
      chatbotId: v.chatbotId,
      channel: v.channel,
      status: v.status,
      createdAt: isoTime(v.createdAt),
      messages: v.messages.map((m) => ({
        messageId: m.messageId,
        role: m.role,
        content: m.content,
        createdAt: isoTime(m.createdAt),
        attachments: doc.files
          .filter((f) => f.messageId === m.messageId)
          .map((f) => ({ attachmentId: f.attachmentId, name: f.name, contentType: f.contentType, content: f.bytes })),
      })),
    })),
    sessions: doc.sessions.map((s) => ({
      sessionId: s.sessionId,
      chatbotId: s.chatbotId,
      createdAt: isoTime(s.createdAt),
      lastUsedAt: isoTime(s.lastUsedAt),
      lastOrigin: s.lastOrigin,
      userAgent: s.userAgent,
      revokedAt: s.revokedAt === null ? "" : isoTime(s.revokedAt),
    })),
    exportedAt: isoTime(doc.exportedAt),
  };
}

/** Erasure and export of one customer, and the audit log: AccountService methods for admins. */
export function privacyHandlers(d: { privacy: PrivacyService; audit: AuditLog }): PrivacyMethods {
  return {
    async eraseContact(req, call) {
      const r = await d.privacy.erase(auditedCaller(call), { contactId: req.contactId, userId: req.userId });
      return { data: r };
    },
    async exportContact(req, call) {
      const doc = await d.privacy.export(auditedCaller(call), { contactId: req.contactId, userId: req.userId });
      return { data: exportedContact(doc) };
    },
    async setChatbotRetention(req, call) {
      const days = await d.privacy.setRetention(auditedCaller(call), req.chatbotId, req.days);
      return { data: { chatbotId: req.chatbotId.toLowerCase(), days } };
    },
    async listAuditEvents(req, call) {
      const page = await d.audit.list(auditedCaller(call), {
        kinds: req.kinds,
        since: req.since,
        until: req.until,
        limit: req.limit,
        pageToken: req.pageToken,
      });
      return { data: { auditEvents: page.events.map(auditEvent), nextPageToken: page.nextPageToken } };
    },
  };
}
