import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  AccountService as AccountServiceDesc,
  ApiKeySchema,
  ChatbotSchema,
  InvitationSchema,
  MemberSchema,
} from "../../../gen/aiagent/v1/account_service_pb.js";
import type { AccountService } from "../../domain/account/account-service.js";
import { type ApiKeyView, MAX_API_KEY_GRACE_SECONDS } from "../../domain/account/api-keys.js";
import { type ChatbotPictures, chatbotPictureUrl } from "../../domain/account/chatbot-picture.js";
import type { OperatorPictures } from "../../domain/account/operator-picture.js";
import type { OperatorProfiles } from "../../domain/account/operator-profile.js";
import type { ChatbotRecord } from "../../domain/account/repository.js";
import type { IssuedInvitation, MemberView, TeamService } from "../../domain/account/team-service.js";
import type { AccountCaller } from "../../domain/caller.js";
import { invalidArgument } from "../../domain/errors.js";
import { requireUuid } from "../../domain/ids.js";
import type { IssuedLink } from "../../domain/mail/invitation-mail.js";
import type { OperatorReports } from "../../domain/report/operators.js";
import type { Reports } from "../../domain/report/report.js";
import { isoTime } from "../../domain/time.js";
import type { TokenService } from "../../domain/token/token-service.js";
import { auditedCaller } from "../audited.js";
import { accountCaller } from "../auth.js";
import type { Handlers } from "../call.js";
import { appearanceIn, appearanceOut } from "./appearance-mapping.js";
import type { knowledgeHandlers } from "./knowledge-handlers.js";
import type { mentionHandlers } from "./mention-handlers.js";
import type { privacyHandlers } from "./privacy-handlers.js";
import type { savedReplyHandlers } from "./saved-reply-handlers.js";
import type { teamHandlers } from "./team-handlers.js";

const iso = (t: number | null): string => (t === null ? "" : isoTime(t));

function apiKey(k: ApiKeyView): MessageInitShape<typeof ApiKeySchema> {
  return {
    apiKeyId: k.apiKeyId,
    prefix: k.prefix,
    name: k.name,
    createdAt: iso(k.createdAt),
    lastUsedAt: iso(k.lastUsedAt),
    expiresAt: iso(k.expiresAt),
    revokedAt: iso(k.revokedAt),
    status: k.status,
  };
}

/** A chatbot as answered: the agent endpoint's API key is never read back, only whether one is stored. */
function chatbot(c: ChatbotRecord): MessageInitShape<typeof ChatbotSchema> {
  const a = c.agent;
  return {
    chatbotId: c.chatbotId,
    name: c.name,
    allowedOrigins: c.allowedOrigins,
    knowledge: c.knowledge,
    agent:
      a.kind === "built_in"
        ? { kind: "built_in", followsServiceDefault: !a.explicit }
        : { kind: a.kind, baseUrl: a.baseUrl, model: a.model, hasApiKey: a.apiKeySealed !== null },
    active: c.active,
    createdAt: isoTime(c.createdAt),
    appearance: appearanceOut(c.appearance),
    pictureUrl: chatbotPictureUrl(c),
    firstResponseSlaMinutes: c.firstResponseSlaMinutes ?? 0,
  };
}

function member(m: MemberView): MessageInitShape<typeof MemberSchema> {
  return { ...m, createdAt: isoTime(m.createdAt) };
}

/** An invitation (or a password reset link, accepted the same way) as answered. */
function invitationOf(consoleUrl: string, inv: IssuedInvitation): MessageInitShape<typeof InvitationSchema> {
  return {
    member: member(inv.member),
    invitationCode: inv.invitationCode,
    // In the fragment: a browser sends it to no server, so it stays out of access logs and Referer headers.
    invitationUrl: `${consoleUrl}/invitation#code=${encodeURIComponent(inv.invitationCode)}`,
    invitationExpiresAt: isoTime(inv.expiresAt),
  };
}

/** The AccountService methods, on the account's caller the gate admitted (ID token, with the declared role). */
export function accountHandlers(d: {
  accounts: AccountService;
  team: TeamService;
  tokens: TokenService;
  /** Where invitation links point: the console's whole address under {app_url} (known once the server listens). */
  consoleUrl: () => string;
  /** The people's display names and pictures. */
  profiles: OperatorProfiles;
  /** The people's uploaded pictures. */
  pictures: OperatorPictures;
  /** The chatbots' agent pictures. */
  chatbotPictures: ChatbotPictures;
  /** The older keys' grace period when a rotation names none (AIAGENT_API_KEY_GRACE, as the command line's). */
  defaultGraceSeconds: number;
  /** Erasure, export and the audit log. */
  privacy: ReturnType<typeof privacyHandlers>;
  /** The account's canned answers. */
  savedReplies: ReturnType<typeof savedReplyHandlers>;
  mentions: ReturnType<typeof mentionHandlers>;
  /** The account's teams. */
  teams: ReturnType<typeof teamHandlers>;
  /** Each chatbot's figures over a period. */
  reports: Reports;
  /** Each operator's and team's figures over a period. */
  operatorReports: OperatorReports;
  /** The chatbots' knowledge sources. */
  knowledge: ReturnType<typeof knowledgeHandlers>;
  /**
   * E-mails an invitation or password link to its person when a relay is configured (queued: the answer never
   * waits for the relay, and a failure to queue is the outbox's, logged, not the caller's).
   */
  mailLink?: ((link: IssuedLink) => Promise<void>) | undefined;
}): Handlers<typeof AccountServiceDesc> {
  const { accounts, team } = d;
  const invitation = (inv: IssuedInvitation) => invitationOf(d.consoleUrl(), inv);
  const mailed = async (caller: AccountCaller, inv: IssuedInvitation, purpose: IssuedLink["purpose"]) => {
    const answer = invitation(inv);
    await d.mailLink?.({
      accountId: caller.accountId,
      email: inv.member.email,
      url: answer.invitationUrl ?? "",
      purpose,
      expiresAt: inv.expiresAt,
      invitedBy: caller.email,
    });
    return answer;
  };
  const accountInfo = async (caller: AccountCaller) => {
    const [a, p, picture, alerts] = await Promise.all([
      accounts.account(caller),
      d.profiles.get(caller),
      d.pictures.pathOf(caller),
      d.profiles.alerts(caller),
    ]);
    return {
      accountId: a.accountId,
      email: a.email,
      createdAt: isoTime(a.createdAt),
      callerEmail: caller.email,
      callerRole: caller.role,
      callerDisplayName: p.displayName,
      callerAvatarUrl: p.avatarUrl,
      callerPictureUrl: picture,
      callerSlaBreachEmail: alerts.slaBreachEmail,
    };
  };
  const keyOf = async (caller: Parameters<AccountService["listApiKeys"]>[0], id: string) =>
    (await accounts.listApiKeys(caller)).find((k) => k.apiKeyId === id);
  return {
    ...d.privacy,
    ...d.savedReplies,
    ...d.mentions,
    ...d.teams,
    ...d.knowledge,
    async getReport(req, call) {
      const r = await d.reports.get(accountCaller(call.auth), {
        chatbotId: req.chatbotId,
        from: req.from,
        to: req.to,
        timeZone: req.timeZone,
      });
      return { data: { ...r, slaHits: r.sla.hits, slaBreaches: r.sla.breaches } };
    },
    async getOperatorReport(req, call) {
      const r = await d.operatorReports.get(accountCaller(call.auth), {
        from: req.from,
        to: req.to,
        timeZone: req.timeZone,
      });
      return { data: r };
    },
    async getAccount(_req, call) {
      return { data: await accountInfo(accountCaller(call.auth)) };
    },
    async updateMyProfile(req, call) {
      const caller = accountCaller(call.auth);
      await d.profiles.update(caller, { displayName: req.displayName, avatarUrl: req.avatarUrl });
      return { data: await accountInfo(caller) };
    },
    async setMyAlerts(req, call) {
      const caller = accountCaller(call.auth);
      await d.profiles.setAlerts(caller, { slaBreachEmail: req.slaBreachEmail });
      return { data: await accountInfo(caller) };
    },
    async setMyPicture(req, call) {
      const caller = accountCaller(call.auth);
      await d.pictures.set(caller, req.image);
      return { data: await accountInfo(caller) };
    },
    async changePassword(req, call) {
      // Every other ID token of a password is revoked; the session that made the change (cookie or bearer) is kept.
      await team.changePassword(accountCaller(call.auth), req.currentPassword, req.newPassword, call.auth.idClaims);
      return {};
    },
    async createApiKey(req, call) {
      const caller = auditedCaller(call);
      const k = await accounts.createApiKey(caller, req.name);
      return { data: { apiKey: apiKey(k.view), clientApiKey: k.clientApiKey } };
    },
    async listApiKeys(_req, call) {
      return { data: { apiKeys: (await accounts.listApiKeys(accountCaller(call.auth))).map(apiKey) } };
    },
    async rotateApiKeys(req, call) {
      const caller = auditedCaller(call);
      // Named as the contract spells the field (the domain's check, shared with the command line, says "grace").
      const grace = req.graceSeconds;
      if (grace !== undefined && (grace < 0 || grace > MAX_API_KEY_GRACE_SECONDS))
        throw invalidArgument(
          "grace_seconds",
          `must be a whole number of seconds from 0 to ${MAX_API_KEY_GRACE_SECONDS}`,
        );
      const r = await accounts.rotateApiKey(caller, {
        graceSeconds: req.graceSeconds ?? d.defaultGraceSeconds,
        name: req.name,
      });
      // The older keys as they now stand (expiring), read back after the rotation.
      const older = new Set(r.olderKeys.map((k) => k.apiKeyId));
      const keys = await accounts.listApiKeys(caller);
      return {
        data: {
          created: { apiKey: apiKey(r.view), clientApiKey: r.clientApiKey },
          olderKeys: keys.filter((k) => older.has(k.apiKeyId)).map(apiKey),
        },
      };
    },
    async revokeApiKey(req, call) {
      const caller = auditedCaller(call);
      // "all" is the command line's; the API revokes one key by its id.
      if (req.apiKeyId === "all") throw invalidArgument("api_key_id", "must be one key's id");
      // Checked here, named as the route names it (the command line's --id is checked by the service).
      await accounts.revokeApiKey(caller, requireUuid("api_key_id", req.apiKeyId));
      const view = await keyOf(caller, req.apiKeyId);
      return { data: view && apiKey(view) };
    },
    async createChatbot(req, call) {
      const c = await accounts.createChatbot(
        accountCaller(call.auth),
        req.name,
        req.allowedOrigins,
        req.knowledge.map((k) => ({ title: k.title, url: k.url, snippet: k.snippet })),
        req.agent,
        appearanceIn(req.appearance),
        req.firstResponseSlaMinutes ?? 0,
      );
      return { data: chatbot(c) };
    },
    async getChatbot(req, call) {
      return { data: chatbot(await accounts.chatbot(accountCaller(call.auth), req.chatbotId)) };
    },
    async listChatbots(_req, call) {
      return { data: { chatbots: (await accounts.listChatbots(accountCaller(call.auth))).map(chatbot) } };
    },
    async updateChatbot(req, call) {
      const c = await accounts.updateChatbot(auditedCaller(call), req.chatbotId, {
        name: req.name,
        allowedOrigins: req.allowedOrigins.length > 0 ? req.allowedOrigins : undefined,
        knowledge: req.knowledge?.snippets.map((k) => ({ title: k.title, url: k.url, snippet: k.snippet })),
        agent: req.agent,
        appearance: appearanceIn(req.appearance),
        firstResponseSlaMinutes: req.firstResponseSlaMinutes,
      });
      return { data: chatbot(c) };
    },
    async disableChatbot(req, call) {
      return {
        data: chatbot(await accounts.updateChatbot(auditedCaller(call), req.chatbotId, { active: false })),
      };
    },
    async setChatbotPicture(req, call) {
      return { data: chatbot(await d.chatbotPictures.set(accountCaller(call.auth), req.chatbotId, req.image)) };
    },
    async inviteMember(req, call) {
      const caller = auditedCaller(call);
      return { data: await mailed(caller, await team.invite(caller, req.email, req.role), "invitation") };
    },
    async resetMemberPassword(req, call) {
      const caller = auditedCaller(call);
      return { data: await mailed(caller, await team.issuePasswordReset(caller, req.memberId), "password_reset") };
    },
    async listMembers(_req, call) {
      return { data: { members: (await team.list(accountCaller(call.auth))).map(member) } };
    },
    async updateMember(req, call) {
      return { data: member(await team.setRole(auditedCaller(call), req.memberId, req.role)) };
    },
    async removeMember(req, call) {
      await team.remove(auditedCaller(call), req.memberId);
      return {};
    },
    async acceptInvitation(req) {
      return { data: member(await team.accept(req.invitationCode, req.password)) };
    },
    async revokeSessions(req, call) {
      const caller = auditedCaller(call);
      if (!req.chatbotId && !req.userId) throw invalidArgument("chatbot_id", "give a chatbot_id, a user_id or both");
      if (req.chatbotId) await accounts.chatbot(caller, req.chatbotId);
      const revoked = await d.tokens.revocations.revoke(
        {
          accountId: caller.accountId,
          ...(req.chatbotId ? { chatbotId: req.chatbotId } : {}),
          ...(req.userId ? { userId: req.userId } : {}),
        },
        caller,
      );
      return { data: { revoked } };
    },
  };
}
