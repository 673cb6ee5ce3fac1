import { randomUUID } from "node:crypto";
import { type DescMethod, type DescService, getOption } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { access, Credential, Role } from "../../gen/aiagent/v1/access_pb.js";
import type { AccountCaller } from "../../src/domain/caller.js";
import { accessRule } from "../../src/protocol/access.js";
import { storeWaitingCall } from "../helpers/approvals.js";
import { addMember, idToken, issueTokens, ownerOf, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { sourceRecord } from "../helpers/knowledge-source.js";
import { type RpcProtocol, transport } from "../helpers/rpc.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";
import { sqliteDb } from "../helpers/sqlite.js";
import { scaled } from "../helpers/time-scale.js";
import { dbChecksum } from "./support.js";

// Every RPC of the contract × every kind of credential × every role, generated from the contract itself: a new RPC
// joins this matrix the day it is added (and fails it until it has a sample request below).

/** What a call presents: nothing, the frame's access token, or an ID token of an admin or an operator. */
type Presented = "none" | "access" | "admin" | "operator";
const PRESENTED: Presented[] = ["none", "access", "admin", "operator"];

let s: TestServer;
let a: TestAccount;
let access_: string;
let refresh: string;
let conversationId: string;
let contactId: string;
let owner: AccountCaller;
const tokens: Record<Exclude<Presented, "none">, string> = { access: "", admin: "", operator: "" };
const passwords: Record<"admin" | "operator", string> = { admin: "", operator: "" };
let n = 0;
let operatorId = "";
const USER = "matrix-user";

let endpointId: string;
let deliveryId: string;
const hookUrl = "http://127.0.0.1:9/hook";

beforeAll(async () => {
  // No webhook dispatcher: its background writes would blur "a refused call writes nothing".
  s = await startServer({ overrides: { dispatch: false } });
  a = await s.account();
  const t = await issueTokens(s.url, a, USER);
  access_ = t.access_token;
  refresh = t.refresh_token;
  conversationId = (await send(s.url, access_, "Where is my order?")).conversation_id;
  const list = await s.app.conversations.reads.listContacts(ownerOf(a), {
    userEmailId: a.email,
    search: "",
    filter: "",
    limit: 1,
    offset: 0,
  });
  contactId = list.contacts[0]!.contactId;
  owner = ownerOf(a);
  tokens.access = access_;
  tokens.admin = await idToken(s.url, a);
  const op = await addMember(s.url, tokens.admin, "operator@matrix.example", "operator");
  tokens.operator = op.idToken;
  operatorId = op.memberId;
  passwords.admin = a.password;
  passwords.operator = op.password;
  endpointId = (
    await s.app.webhooks.createEndpoint(owner, { url: hookUrl, eventTypes: ["message.created"], description: "" })
  ).endpoint.endpointId;
  await send(s.url, access_, "One for the webhook", conversationId);
  deliveryId = (await s.app.webhooks.listDeliveries(owner, { endpointId, limit: 1, status: "" }))[0]!.deliveryId;
});
afterAll(() => s.close(true));

/** An indexed knowledge source of the account's chatbot, made in the store (answers its id). */
async function source(): Promise<string> {
  const sourceId = randomUUID();
  await s.app.store.knowledge.addSource(
    sourceRecord(a, {
      sourceId,
      kind: "snippets",
      title: "Matrix",
      fileName: "",
      status: "indexed",
      version: 1,
      createdAt: 1,
      updatedAt: 1,
      indexedAt: 1,
    }),
    new TextEncoder().encode("[]"),
  );
  return sourceId;
}

/** A label of the account, made in the store (answers its id). */
async function label(name: string): Promise<string> {
  const labelId = randomUUID();
  await s.app.store.labels.add({ labelId, accountId: a.accountId, name, createdAt: Date.now() }, name);
  return labelId;
}

/** A saved reply of the account, made in the store (answers its id): the operator's own for them, else shared. */
async function savedReply(shortcut: string, who: Presented): Promise<string> {
  const savedReplyId = randomUUID();
  await s.app.store.savedReplies.add({
    savedReplyId,
    accountId: a.accountId,
    ownerId: who === "operator" ? operatorId : "",
    shortcut,
    content: "x",
    createdAt: 1,
    updatedAt: 1,
  });
  return savedReplyId;
}

/** A team of the account, made in the store (answers its id). */
async function team(name: string): Promise<string> {
  const teamId = randomUUID();
  const t = {
    teamId,
    accountId: a.accountId,
    name,
    assignment: "off" as const,
    capacity: 0,
    createdAt: 1,
    updatedAt: 1,
  };
  await s.app.store.teams.add(t, name);
  return teamId;
}

type Sample = (who: Presented) => Record<string, unknown> | Promise<Record<string, unknown>>;

/** A request each RPC would accept from a caller it admits; objects a call destroys are made afresh. */
const samples: Record<string, Sample> = {
  "aiagent.v1.TokenService.GetAccessToken": () => ({ userId: USER, chatbotId: a.chatbotId, clientApiKey: a.apiKey }),
  "aiagent.v1.TokenService.RefreshToken": () => ({ userId: USER, chatbotId: a.chatbotId, refreshToken: refresh }),
  "aiagent.v1.TokenService.GetIdToken": () => ({
    userEmailId: a.email,
    credential: { case: "clientApiKey", value: a.apiKey },
  }),
  "aiagent.v1.ConversationService.GetContactConversations": () => ({ userEmailId: a.email }),
  "aiagent.v1.ConversationService.GetMessagesForConversation": () => ({ conversationId }),
  "aiagent.v1.ConversationService.GetConversationsForContact": () => ({ contactId }),
  "aiagent.v1.ConversationService.WatchConversation": () => ({ conversationId }),
  "aiagent.v1.ConversationService.WatchAccount": () => ({ userEmailId: a.email }),
  "aiagent.v1.ConversationService.ListFrameConversations": () => ({}),
  "aiagent.v1.ConversationService.SendMessage": () => ({ conversationId, content: "And the delivery?" }),
  "aiagent.v1.ConversationService.SendMessageStream": () => ({ conversationId, content: "And returns?" }),
  "aiagent.v1.ConversationService.MarkConversationRead": () => ({ conversationId }),
  "aiagent.v1.ConversationService.MarkConversationUnread": () => ({ conversationId }),
  "aiagent.v1.ConversationService.ListConversationActivity": () => ({ conversationId }),
  "aiagent.v1.ConversationService.SearchConversations": () => ({ query: "hello" }),
  "aiagent.v1.ConversationService.ListLabels": () => ({}),
  "aiagent.v1.ConversationService.CreateLabel": () => ({ name: `matrix ${++n}` }),
  "aiagent.v1.ConversationService.UpdateLabel": async () => ({
    labelId: await label(`upd ${++n}`),
    name: `renamed ${++n}`,
  }),
  "aiagent.v1.ConversationService.DeleteLabel": async () => ({ labelId: await label(`del ${++n}`) }),
  "aiagent.v1.ConversationService.ListConversationLabels": () => ({ conversationId }),
  "aiagent.v1.ConversationService.SetConversationPriority": () => ({
    conversationId,
    priority: ["low", "high"][++n % 2]!,
  }),
  "aiagent.v1.ConversationService.SnoozeConversation": () => ({
    conversationId,
    snoozedUntil: new Date(Date.now() + 3_600_000 + ++n).toISOString(),
  }),
  "aiagent.v1.ConversationService.SetConversationLabels": async () => ({
    conversationId,
    labelIds: [await label(`set ${++n}`)],
  }),
  "aiagent.v1.ConversationService.TakeOverConversation": () => ({ conversationId }),
  "aiagent.v1.ConversationService.ReplyToConversation": () => ({ conversationId, content: "A person here." }),
  "aiagent.v1.ConversationService.ReleaseConversation": () => ({ conversationId }),
  "aiagent.v1.ConversationService.CloseConversation": () => ({ conversationId }),
  // Rated once closed.
  "aiagent.v1.ConversationService.RateConversation": async () => {
    await s.app.conversations.actions.setStatus(owner, conversationId, "closed");
    return { conversationId, score: 4 };
  },
  "aiagent.v1.ConversationService.ReopenConversation": () => ({ conversationId }),
  "aiagent.v1.ConversationService.SendTyping": () => ({ conversationId }),
  "aiagent.v1.ConversationService.SendViewing": () => ({ conversationId }),
  "aiagent.v1.MailService.GetFrameContact": () => ({}),
  "aiagent.v1.MailService.SetFrameContactEmail": () => ({ email: "matrix@customer.example" }),
  "aiagent.v1.MailService.SendTranscript": () => ({ conversationId }),
  "aiagent.v1.MailService.GetMailStatus": () => ({}),
  "aiagent.v1.ConversationService.SendAttachment": () => ({
    conversationId,
    fileName: "note.txt",
    file: new TextEncoder().encode("order 1234"),
  }),
  "aiagent.v1.ConversationService.ReplyWithAttachment": () => ({
    conversationId,
    fileName: "label.txt",
    file: new TextEncoder().encode("return label"),
  }),
  "aiagent.v1.AccountService.GetAccount": () => ({}),
  "aiagent.v1.AccountService.UpdateMyProfile": () => ({ displayName: "Matrix", avatarUrl: "" }),
  "aiagent.v1.AccountService.SetMyPicture": () => ({ image: new Uint8Array() }),
  "aiagent.v1.AccountService.SetMyAlerts": () => ({ slaBreachEmail: ++n % 2 === 0 }),
  "aiagent.v1.ConversationService.AddConversationNote": () => ({ conversationId, content: "A note for the team." }),
  "aiagent.v1.ConversationService.ListConversationNotes": () => ({ conversationId }),
  "aiagent.v1.AccountService.ListSavedReplies": () => ({}),
  // An operator makes and changes their own (personal) saved replies; the shared ones are the admins'.
  "aiagent.v1.AccountService.CreateSavedReply": (who) => ({
    shortcut: `matrix${++n}`,
    content: "Thanks!",
    personal: who === "operator",
  }),
  "aiagent.v1.AccountService.UpdateSavedReply": async (who) => ({
    savedReplyId: await savedReply(`upd${++n}`, who),
    content: "Changed",
  }),
  "aiagent.v1.AccountService.DeleteSavedReply": async (who) => ({
    savedReplyId: await savedReply(`del${++n}`, who),
  }),
  "aiagent.v1.AccountService.ListMentionablePeople": () => ({}),
  "aiagent.v1.AccountService.ListMyMentions": () => ({}),
  "aiagent.v1.AccountService.MarkMentionsRead": () => ({ noteIds: [] }),
  "aiagent.v1.AccountService.SetMentionAlerts": () => ({ emailAlerts: true }),
  "aiagent.v1.AccountService.ListTeams": () => ({}),
  "aiagent.v1.AccountService.SetMyAvailability": () => ({ away: false }),
  "aiagent.v1.AccountService.GetMyAvailability": () => ({}),
  "aiagent.v1.AccountService.CreateTeam": () => ({ name: `matrix team ${++n}` }),
  "aiagent.v1.AccountService.UpdateTeam": async () => ({ teamId: await team(`upd team ${++n}`), capacity: 3 }),
  "aiagent.v1.AccountService.SetTeamMembers": async () => ({ teamId: await team(`members ${++n}`), memberIds: [] }),
  "aiagent.v1.AccountService.SetTeamChatbots": async () => ({ teamId: await team(`bots ${++n}`), chatbotIds: [] }),
  "aiagent.v1.AccountService.DeleteTeam": async () => ({ teamId: await team(`del team ${++n}`) }),
  "aiagent.v1.AccountService.ChangePassword": (who) => {
    const pw = who === "operator" ? passwords.operator : passwords.admin;
    return { currentPassword: pw, newPassword: pw };
  },
  "aiagent.v1.AccountService.CreateApiKey": () => ({ name: "matrix" }),
  "aiagent.v1.AccountService.ListApiKeys": () => ({}),
  "aiagent.v1.AccountService.RotateApiKeys": () => ({ graceSeconds: 86_400 }),
  "aiagent.v1.AccountService.RevokeApiKey": async () => ({
    apiKeyId: (await s.app.accounts.createApiKey(a.email, "to revoke")).apiKeyId,
  }),
  "aiagent.v1.AccountService.CreateChatbot": () => ({ name: "New bot", allowedOrigins: ["https://new.example"] }),
  "aiagent.v1.AccountService.GetChatbot": () => ({ chatbotId: a.chatbotId }),
  "aiagent.v1.AccountService.ListChatbots": () => ({}),
  "aiagent.v1.AccountService.UpdateChatbot": () => ({ chatbotId: a.chatbotId, name: `Renamed ${++n}` }),
  "aiagent.v1.AccountService.DisableChatbot": async () => ({
    chatbotId: (await s.app.accounts.createChatbot(a.email, "to disable", ["https://x.example"])).chatbotId,
  }),
  "aiagent.v1.AccountService.InviteMember": () => ({ email: `invitee${++n}@matrix.example`, role: "operator" }),
  "aiagent.v1.AccountService.ListMembers": () => ({}),
  "aiagent.v1.AccountService.UpdateMember": async () => ({
    memberId: (await s.app.team.invite(owner, `promote${++n}@matrix.example`, "operator")).member.memberId,
    role: "admin",
  }),
  "aiagent.v1.AccountService.RemoveMember": async () => ({
    memberId: (await s.app.team.invite(owner, `remove${++n}@matrix.example`, "operator")).member.memberId,
  }),
  "aiagent.v1.AccountService.ResetMemberPassword": async () => ({
    memberId: (await s.app.team.invite(owner, `reset${++n}@matrix.example`, "operator")).member.memberId,
  }),
  "aiagent.v1.AccountService.AcceptInvitation": async () => ({
    invitationCode: (await s.app.team.invite(owner, `accept${++n}@matrix.example`, "operator")).invitationCode,
    password: "a long enough password",
  }),
  "aiagent.v1.AccountService.RevokeSessions": () => ({ userId: `nobody-${++n}` }),
  "aiagent.v1.AccountService.EraseContact": async () => {
    const user = `erase-${++n}`;
    const t = await issueTokens(s.url, a, user);
    await send(s.url, t.access_token, "Please forget me.");
    return { userId: user };
  },
  "aiagent.v1.AccountService.ExportContact": () => ({ contactId }),
  "aiagent.v1.AccountService.SetChatbotPicture": () => ({ chatbotId: a.chatbotId, image: new Uint8Array() }),
  "aiagent.v1.AccountService.SetChatbotRetention": () => ({ chatbotId: a.chatbotId, days: 365 }),
  "aiagent.v1.AccountService.ListAuditEvents": () => ({ limit: 5 }),
  "aiagent.v1.AccountService.CreateKnowledgeSource": () => ({
    chatbotId: a.chatbotId,
    kind: "snippets",
    snippets: [{ title: `Matrix ${++n}`, url: "https://shop.example/matrix", snippet: "A matrix snippet." }],
  }),
  "aiagent.v1.AccountService.ListKnowledgeSources": () => ({ chatbotId: a.chatbotId }),
  "aiagent.v1.AccountService.GetKnowledgeSource": async () => ({ chatbotId: a.chatbotId, sourceId: await source() }),
  "aiagent.v1.AccountService.DeleteKnowledgeSource": async () => ({ chatbotId: a.chatbotId, sourceId: await source() }),
  "aiagent.v1.AccountService.ResyncKnowledgeSource": async () => ({ chatbotId: a.chatbotId, sourceId: await source() }),
  "aiagent.v1.AccountService.UpdateKnowledgeSource": async () => ({
    chatbotId: a.chatbotId,
    sourceId: await source(),
    resyncIntervalHours: 0,
  }),
  "aiagent.v1.AccountService.SearchKnowledge": () => ({ chatbotId: a.chatbotId, query: "matrix snippet" }),
  "aiagent.v1.AccountService.GetReport": () => ({ chatbotId: a.chatbotId, from: "2026-01-01", to: "2026-01-31" }),
  "aiagent.v1.AccountService.GetOperatorReport": () => ({ from: "2026-01-01", to: "2026-01-31" }),
  "aiagent.v1.TokenService.ExchangeLaunchCode": async () => {
    const r = await postJson(s.url, "/ai_agent/get_access_token", {
      user_id: `launch-${++n}`,
      chatbot_id: a.chatbotId,
      client_api_key: a.apiKey,
      launch_code: true,
    });
    return { chatbotId: a.chatbotId, launchCode: r.body.data.launch_code, embedOrigin: "https://shop.example" };
  },
  "aiagent.v1.SessionService.ListSessions": () => ({ userId: USER }),
  "aiagent.v1.SessionService.RevokeSession": async () => {
    const user = `session-${++n}`;
    await issueTokens(s.url, a, user);
    const listed = await getJson(
      s.url,
      "/v1/account/sessions",
      { user_id: user },
      { authorization: `Bearer ${tokens.admin}` },
    );
    return { sessionId: listed.body.data.sessions[0].session_id };
  },
  "aiagent.v1.SessionService.GetSessionPolicy": () => ({ chatbotId: a.chatbotId }),
  "aiagent.v1.SessionService.SetSessionPolicy": () => ({
    chatbotId: a.chatbotId,
    policy: { rotateRefreshTokens: false },
  }),
  "aiagent.v1.ConsoleService.SignIn": () => ({
    email: a.email,
    password: passwords.admin,
  }),
  "aiagent.v1.ConsoleService.SignOut": () => ({}),
  "aiagent.v1.ConsoleService.OpenPreview": () => ({ chatbotId: a.chatbotId }),
  "aiagent.v1.WebhookService.CreateWebhookEndpoint": () => ({ url: hookUrl, eventTypes: ["conversation.closed"] }),
  "aiagent.v1.WebhookService.ListWebhookEndpoints": () => ({}),
  "aiagent.v1.WebhookService.UpdateWebhookEndpoint": () => ({ endpointId, description: `desk ${++n}` }),
  "aiagent.v1.WebhookService.DeleteWebhookEndpoint": async () => ({
    endpointId: (await s.app.webhooks.createEndpoint(owner, { url: hookUrl, eventTypes: [], description: "" })).endpoint
      .endpointId,
  }),
  "aiagent.v1.WebhookService.ListEvents": () => ({ limit: 5 }),
  "aiagent.v1.WebhookService.ListWebhookDeliveries": () => ({ endpointId }),
  "aiagent.v1.WebhookService.ResendWebhookDelivery": () => ({ endpointId, deliveryId }),
  "aiagent.v1.WebhookService.RotateWebhookSecret": () => ({ endpointId }),
  "aiagent.v1.AgentService.CreateChatbotTool": () => ({
    chatbotId: a.chatbotId,
    name: `tool_${++n}`,
    description: "A tool.",
    url: "https://tools.example/x",
  }),
  "aiagent.v1.AgentService.ListChatbotTools": () => ({ chatbotId: a.chatbotId }),
  "aiagent.v1.AgentService.UpdateChatbotTool": async () => ({
    chatbotId: a.chatbotId,
    toolId: (await agentTool()).toolId,
    description: `Changed ${++n}`,
  }),
  "aiagent.v1.AgentService.DeleteChatbotTool": async () => ({
    chatbotId: a.chatbotId,
    toolId: (await agentTool()).toolId,
  }),
  "aiagent.v1.AgentService.GetAgentSettings": () => ({ chatbotId: a.chatbotId }),
  "aiagent.v1.AgentService.UpdateAgentSettings": () => ({ chatbotId: a.chatbotId, instructions: `Be kind ${++n}.` }),
  "aiagent.v1.AgentService.ListToolApprovals": async () => ({ conversationId: await approvalConversation() }),
  "aiagent.v1.AgentService.GetAgentDraft": async () => ({ chatbotId: await drafted() }),
  "aiagent.v1.AgentService.PutAgentDraft": () => ({ chatbotId: a.chatbotId, instructions: `Draft ${++n}.` }),
  "aiagent.v1.AgentService.DeleteAgentDraft": async () => ({ chatbotId: await drafted() }),
  "aiagent.v1.AgentService.PublishAgentDraft": async () => ({ chatbotId: await drafted() }),
  "aiagent.v1.AgentService.ReplayAgentDraft": async () => ({
    chatbotId: await drafted(),
    cases: [{ question: "Where is my order?", expectedFacts: [], expectedSources: [], expectedTools: [] }],
  }),
  "aiagent.v1.AgentService.AddAgentDraftSource": () => ({
    chatbotId: a.chatbotId,
    kind: "snippets",
    snippets: [{ title: `Draft ${++n}`, url: "https://shop.example/draft", snippet: "A draft's snippet." }],
  }),
  "aiagent.v1.AgentService.DecideToolApproval": async () => ({
    conversationId: await approvalConversation(),
    callId: await waitingCall(),
    decision: "refuse",
  }),
};

/** Admitted RPCs answered for what this server lacks, past the gate: no SMTP relay (test/mail covers them sent). */
const ADMITTED_BUT: Record<string, Code> = { "aiagent.v1.MailService.SendTranscript": Code.FailedPrecondition };
/** The account's chatbot with an agent draft (answers its id). */
async function drafted(): Promise<string> {
  await s.app.agentReplay.put(owner, a.chatbotId, { instructions: `Draft ${++n}.` });
  return a.chatbotId;
}

let approvals: string | undefined;
/** A conversation of its own for the approvals, which the AI agent keeps answering. */
async function approvalConversation(): Promise<string> {
  approvals ??= (await send(s.url, (await issueTokens(s.url, a, "matrix-approvals")).access_token, "Refund?"))
    .conversation_id;
  return approvals;
}

/** A tool call waiting for approval in that conversation (answers its id). */
const waitingCall = async () => storeWaitingCall(s.app, a, await approvalConversation());

/** A tool of the account's chatbot, made through the use case (answers its record). */
async function agentTool() {
  return (
    await s.app.agentTools.create(owner, a.chatbotId, {
      name: `made_${++n}`,
      description: "Made for the matrix.",
      parameters: "",
      url: "https://tools.example/x",
      method: "",
      timeoutMs: 0,
      requiresApproval: false,
    })
  ).tool;
}

/** Every RPC the running server serves. */
function methods(): DescMethod[] {
  return s.app.bindings.flatMap((b: { desc: DescService }) => b.desc.methods);
}

/** Whether the declaration admits this presented credential (the rule the gate must follow). */
function admits(m: DescMethod, who: Presented): boolean {
  const d = getOption(m, access);
  if (who === "access") return d.credentials.includes(Credential.ACCESS_TOKEN);
  if (who === "admin") return d.credentials.includes(Credential.ID_TOKEN);
  if (who === "operator") return d.credentials.includes(Credential.ID_TOKEN) && d.role === Role.OPERATOR;
  return false;
}

/** True for RPCs authenticated by a bearer token (the others exchange a credential in their body, or are public). */
function bearerRpc(m: DescMethod): boolean {
  const d = getOption(m, access);
  return d.credentials.includes(Credential.ACCESS_TOKEN) || d.credentials.includes(Credential.ID_TOKEN);
}

/** Calls one RPC; answers the error code, or undefined when it succeeded (a stream: its first message arrived). */
async function call(
  protocol: RpcProtocol,
  m: DescMethod,
  req: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<Code | undefined> {
  const client = createClient(m.parent, transport(s.url, protocol)) as unknown as Record<
    string,
    (r: unknown, o: unknown) => unknown
  >;
  const abort = new AbortController();
  try {
    const out = client[m.localName]!(req, { headers, signal: abort.signal });
    if (m.methodKind === "server_streaming") {
      for await (const _ of out as AsyncIterable<unknown>) break;
    } else await out;
    return undefined;
  } catch (e) {
    return ConnectError.from(e).code;
  } finally {
    abort.abort();
  }
}

/** The console's CSRF header: what a same_origin RPC needs besides its credential (the console's script sends it). */
const CSRF = { "x-aiagent-csrf": "1" };

const headersOf = (who: Presented, m?: DescMethod): Record<string, string> => ({
  ...(m && accessRule(m).sameOrigin ? CSRF : {}),
  ...(who === "none" ? {} : { authorization: `Bearer ${tokens[who]}` }),
});

describe("access declared in the contract", () => {
  it("every RPC declares its access and has a sample request here", () => {
    for (const m of methods()) {
      expect(() => accessRule(m), `${m.parent.typeName}.${m.name}`).not.toThrow();
      expect(samples[`${m.parent.typeName}.${m.name}`], `${m.parent.typeName}.${m.name} needs a sample`).toBeDefined();
    }
  });

  it("a service whose RPC declares no access is refused at start-up", async () => {
    const { guardService } = await import("../../src/protocol/access.js");
    const desc = s.app.bindings[0]!.desc;
    const stripped = {
      ...desc,
      methods: desc.methods.map((m, i) => (i === 0 ? { ...m, proto: { ...m.proto, options: undefined } } : m)),
    } as unknown as DescService;
    expect(() => guardService(stripped, {}, undefined as never)).toThrow(/declares no \(aiagent\.v1\.access\)/);
  });

  for (const protocol of ["connect-json", "grpc"] as RpcProtocol[]) {
    describe(`on ${protocol}`, () => {
      it(
        "refuses every credential an RPC does not declare, changing nothing, and admits the declared ones",
        async () => {
          const db = sqliteDb(s.app);
          for (const m of methods()) {
            const name = `${m.parent.typeName}.${m.name}`;
            for (const who of PRESENTED) {
              const req = await samples[name]!(who);
              if (!bearerRpc(m)) {
                // The header neither grants nor takes away anything: the body's credential decides.
                expect(await call(protocol, m, req, headersOf(who, m)), `${name} with ${who}`).toBeUndefined();
                continue;
              }
              if (admits(m, who)) {
                const code = await call(protocol, m, req, headersOf(who, m));
                expect(code, `${name} admits ${who}`).toBe(ADMITTED_BUT[name]);
                // A knowledge source added or resynced is indexed in the background: done before the next check.
                await s.app.knowledge.idle();
                continue;
              }
              const before = dbChecksum(db);
              const code = await call(protocol, m, req, headersOf(who, m));
              const expected =
                who === "operator" && getOption(m, access).credentials.includes(Credential.ID_TOKEN)
                  ? Code.PermissionDenied
                  : Code.Unauthenticated;
              expect(code, `${name} refuses ${who}`).toBe(expected);
              expect(dbChecksum(db), `${name} refused ${who} but wrote`).toBe(before);
            }
          }
          // Every RPC × every credential, over real sockets: more than the default 30 s on a loaded machine.
        },
        scaled(120_000),
      );

      it("refuses the same-origin RPCs without the console's CSRF header or from another site, changing nothing", async () => {
        const db = sqliteDb(s.app);
        const sameOrigin = methods().filter((m) => accessRule(m).sameOrigin);
        expect(sameOrigin.map((m) => m.name).sort()).toEqual(["SignIn", "SignOut"]);
        for (const m of sameOrigin) {
          const req = await samples[`${m.parent.typeName}.${m.name}`]!("none");
          for (const headers of [
            {},
            { ...CSRF, "sec-fetch-site": "cross-site" },
            { ...CSRF, origin: "https://evil.example" },
          ]) {
            const before = dbChecksum(db);
            expect(await call(protocol, m, req, headers), `${m.name} with ${JSON.stringify(headers)}`).toBe(
              Code.PermissionDenied,
            );
            expect(dbChecksum(db)).toBe(before);
          }
        }
      });

      it("refuses the server-only RPCs, and any API key, from a browser", async () => {
        const db = sqliteDb(s.app);
        for (const m of methods()) {
          const rule = accessRule(m);
          const req = await samples[`${m.parent.typeName}.${m.name}`]!("none");
          const carriesKey = JSON.stringify(req).includes(a.apiKey);
          if (!rule.serverOnly && !carriesKey) continue;
          const before = dbChecksum(db);
          const code = await call(protocol, m, req, { origin: "https://shop.example" });
          expect(code, `${m.name} from a browser`).toBe(Code.PermissionDenied);
          expect(dbChecksum(db)).toBe(before);
        }
      });
    });
  }
});
