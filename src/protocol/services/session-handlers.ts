import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  SessionPolicySchema,
  SessionSchema,
  SessionService as SessionServiceDesc,
} from "../../../gen/aiagent/v1/session_service_pb.js";
import { isoTime } from "../../domain/time.js";
import type { SessionPolicyRecord } from "../../domain/token/repository.js";
import type { SessionRegistry, SessionView } from "../../domain/token/session-registry.js";
import { auditedCaller } from "../audited.js";
import { accountCaller } from "../auth.js";
import type { Handlers } from "../call.js";

function session(s: SessionView): MessageInitShape<typeof SessionSchema> {
  return {
    sessionId: s.sessionId,
    chatbotId: s.chatbotId,
    userId: s.userId,
    createdAt: isoTime(s.createdAt),
    lastUsedAt: isoTime(s.lastUsedAt),
    lastOrigin: s.lastOrigin,
    userAgent: s.userAgent,
    expiresAt: isoTime(s.expiresAt),
    revokedAt: s.revokedAt === null ? "" : isoTime(s.revokedAt),
    status: s.status,
  };
}

function policy(p: SessionPolicyRecord): MessageInitShape<typeof SessionPolicySchema> {
  return {
    chatbotId: p.chatbotId,
    rotateRefreshTokens: p.rotate,
    reuseGraceSeconds: Math.round(p.reuseGraceMs / 1000),
  };
}

/** The SessionService methods, on the account's admin the gate admitted (ID token, admin role). */
export function sessionHandlers(sessions: SessionRegistry): Handlers<typeof SessionServiceDesc> {
  return {
    async listSessions(req, call) {
      const page = await sessions.list(accountCaller(call.auth), {
        chatbotId: req.chatbotId,
        userId: req.userId,
        limit: req.limit,
        offset: req.offset,
      });
      return { data: { sessions: page.sessions.map(session), hasMore: page.hasMore } };
    },
    async revokeSession(req, call) {
      return { data: session(await sessions.revoke(auditedCaller(call), req.sessionId)) };
    },
    async getSessionPolicy(req, call) {
      return { data: policy(await sessions.policy(accountCaller(call.auth), req.chatbotId)) };
    },
    async setSessionPolicy(req, call) {
      const p = await sessions.setPolicy(
        accountCaller(call.auth),
        req.chatbotId,
        req.policy?.rotateRefreshTokens ?? false,
        req.policy?.reuseGraceSeconds,
      );
      return { data: policy(p) };
    },
  };
}
