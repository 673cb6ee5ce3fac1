import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { findSecretShape } from "../helpers/secret-shapes.js";
import { startServer, type TestAccount, type TestServer } from "../helpers/server.js";

// Every audited action records exactly one audit event, with who, what, when and from where, and nothing secret; on
// whichever back end the project runs (AIAGENT_TEST_BACKEND=postgres: the api-postgres project).

let s: TestServer;
let a: TestAccount;
let token: string;
const UA = "audit-suite/1.0 (console)";
const secrets: string[] = [];

beforeAll(async () => {
  s = await startServer({ env: { AIAGENT_WEBHOOK_POLL_MS: "3600000" } });
  a = await s.account();
  secrets.push(a.apiKey, a.password);
  const r = await postJson(s.url, "/get_id_token", { user_email_id: a.email, password: a.password });
  token = r.body.data.idToken;
  secrets.push(token);
});
afterAll(async () => {
  await s.close(true);
});

const headers = () => ({ authorization: `Bearer ${token}`, "user-agent": UA });

async function audit(query: Record<string, string | number> = {}) {
  const r = await getJson(s.url, "/v1/account/audit_events", { limit: 500, ...query }, headers());
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as { audit_events: any[]; next_page_token: string };
}

/** Runs the action and answers the audit events it added (the log's newest first, so the new ones lead). */
async function added(action: () => Promise<unknown>): Promise<any[]> {
  const before = new Set((await audit()).audit_events.map((e) => e.audit_event_id));
  await action();
  return (await audit()).audit_events.filter((e) => !before.has(e.audit_event_id));
}

async function ok(p: Promise<{ status: number; body: any }>) {
  const r = await p;
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data;
}

describe("the audit log", () => {
  it("records exactly one event per audited action, with who, what and from where", async () => {
    const h = headers();
    let keyId = "";
    let memberId = "";
    let endpointId = "";
    let sessionId = "";
    const cases: [string, () => Promise<unknown>][] = [
      [
        "api_key.created",
        async () => {
          const d = await ok(postJson(s.url, "/v1/account/api_keys", { name: "ci" }, h));
          keyId = d.api_key.api_key_id;
          secrets.push(d.client_api_key);
        },
      ],
      [
        "api_key.rotated",
        async () =>
          secrets.push((await ok(postJson(s.url, "/v1/account/api_keys/rotate", {}, h))).created.client_api_key),
      ],
      ["api_key.revoked", () => ok(postJson(s.url, `/v1/account/api_keys/${keyId}/revoke`, {}, h))],
      [
        "member.invited",
        async () => {
          const d = await ok(
            postJson(s.url, "/v1/account/members", { email: `m-${keyId}@example.com`, role: "operator" }, h),
          );
          memberId = d.member.member_id;
          secrets.push(d.invitation_code);
        },
      ],
      [
        "member.updated",
        () => ok(requestJson(s.url, "PATCH", `/v1/account/members/${memberId}`, h, { role: "admin" })),
      ],
      ["member.removed", () => ok(requestJson(s.url, "DELETE", `/v1/account/members/${memberId}`, h))],
      [
        "sign_in.succeeded",
        () =>
          ok(postJson(s.url, "/get_id_token", { user_email_id: a.email, password: a.password }, { "user-agent": UA })),
      ],
      [
        // Counted against the sender: the account's own API key, sent with an e-mail it does not sign in as.
        "sign_in.failed",
        async () => {
          const r = await postJson(
            s.url,
            "/get_id_token",
            { user_email_id: "somebody-else@example.com", client_api_key: a.apiKey },
            { "user-agent": UA },
          );
          expect(r.status).toBe(401);
        },
      ],
      [
        "session.revoked",
        async () => {
          const t = await issueTokens(s.url, a, "audited-customer");
          secrets.push(t.refresh_token, t.access_token);
          await send(s.url, t.access_token, "hello");
          const list = await ok(getJson(s.url, "/v1/account/sessions", { user_id: "audited-customer" }, h));
          sessionId = list.sessions[0].session_id;
          await ok(postJson(s.url, `/v1/account/sessions/${sessionId}/revoke`, {}, h));
        },
      ],
      ["session.revoked", () => ok(postJson(s.url, "/v1/account/sessions/revoke", { chatbot_id: a.chatbotId }, h))],
      [
        "webhook_endpoint.created",
        async () => {
          const d = await ok(postJson(s.url, "/v1/account/webhooks", { url: "http://127.0.0.1:9/hooks" }, h));
          endpointId = d.endpoint.endpoint_id;
          secrets.push(d.secret);
        },
      ],
      [
        "webhook_endpoint.updated",
        () => ok(requestJson(s.url, "PATCH", `/v1/account/webhooks/${endpointId}`, h, { description: "crm" })),
      ],
      ["webhook_endpoint.deleted", () => ok(requestJson(s.url, "DELETE", `/v1/account/webhooks/${endpointId}`, h))],
      ["contact.exported", () => ok(getJson(s.url, "/v1/account/contacts/export", { user_id: "audited-customer" }, h))],
      ["contact.erased", () => ok(postJson(s.url, "/v1/account/contacts/erase", { user_id: "audited-customer" }, h))],
      [
        "retention.ran",
        async () => {
          // A conversation from 31 days ago (the test clock taken back, then forward again).
          s.clock.advance(-31 * 86_400_000);
          const t = await issueTokens(s.url, a, "old-customer");
          await send(s.url, t.access_token, "an old question");
          s.clock.advance(31 * 86_400_000);
          await ok(postJson(s.url, `/v1/account/chatbots/${a.chatbotId}/retention`, { days: 30 }, h));
          await s.app.retention.runOnce();
        },
      ],
    ];
    for (const [kind, action] of cases) {
      const t0 = s.clock.now();
      const events = await added(action);
      expect(
        events.map((e) => e.kind),
        kind,
      ).toEqual([kind]);
      const [e] = events;
      expect(Date.parse(e.created_at)).toBeGreaterThanOrEqual(t0);
      expect(Date.parse(e.created_at)).toBeLessThanOrEqual(s.clock.now());
      if (kind === "retention.ran") {
        expect(e).toMatchObject({ actor: "service", address: "", target: a.chatbotId });
        expect(e.details).toMatchObject({ conversations: "1", days: "30" });
      } else {
        expect(e.actor, kind).toBe(a.email);
        expect(e.address, kind).toMatch(/127\.0\.0\.1$/);
        expect(e.user_agent, kind).toBe(UA);
      }
    }
    // The target names what it was done to.
    const all = (await audit()).audit_events;
    expect(all.find((e) => e.kind === "member.updated").target).toBe(memberId);
    expect(all.find((e) => e.kind === "member.updated").details).toEqual({ from: "operator", to: "admin" });
    expect(all.find((e) => e.kind === "api_key.revoked").target).toBe(keyId);
  });

  it("a failed sign-in that proves nothing (a wrong password, an unknown key) is in no account's log (issue 47)", async () => {
    const b = await s.account();
    const wrong = "not the password at all";
    secrets.push(wrong);
    const events = await added(async () => {
      for (const body of [
        { user_email_id: a.email, password: wrong },
        { user_email_id: a.email, client_api_key: `cak_${"x".repeat(43)}` },
        // another account's genuine key naming A's e-mail: recorded in B's log (the sender's), not A's
        { user_email_id: a.email, client_api_key: b.apiKey },
      ]) {
        const r = await postJson(s.url, "/get_id_token", body, { "user-agent": UA });
        expect(r.status).toBe(401);
      }
    });
    expect(events).toEqual([]);
    const r = await postJson(s.url, "/get_id_token", { user_email_id: b.email, password: b.password });
    const ofB = await getJson(
      s.url,
      "/v1/account/audit_events",
      { kinds: "sign_in.failed" },
      {
        authorization: `Bearer ${r.body.data.idToken}`,
      },
    );
    expect(ofB.body.data.audit_events.map((e: { actor: string }) => e.actor)).toEqual([b.email]);
  });

  it("records chatbot settings changed (by field name), invitations accepted and assignments (issue 45)", async () => {
    const h = headers();
    const patch = (body: unknown) => requestJson(s.url, "PATCH", `/v1/account/chatbots/${a.chatbotId}`, h, body);
    let events = await added(() => ok(patch({ name: "Returns desk", allowed_origins: ["https://returns.example"] })));
    expect(events).toMatchObject([
      { kind: "chatbot.updated", actor: a.email, target: a.chatbotId, user_agent: UA, details: {} },
    ]);
    expect(events[0].details.fields.split(",").sort()).toEqual(["allowed_origins", "name"]);
    // The same values again change nothing and record nothing.
    expect(await added(() => ok(patch({ name: "Returns desk" })))).toEqual([]);
    // A refused change records nothing.
    expect(await added(async () => expect((await patch({ name: "" })).status).toBe(400))).toEqual([]);

    // An invitation used: by the person who joined, naming their role.
    let memberId = "";
    const invited = await ok(
      postJson(s.url, "/v1/account/members", { email: "lee@shop.example", role: "operator" }, h),
    );
    events = await added(async () => {
      const m = await ok(
        postJson(s.url, "/v1/invitations/accept", {
          invitation_code: invited.invitation_code,
          password: "a-long-password-1",
        }),
      );
      memberId = m.member_id;
    });
    expect(events).toMatchObject([
      { kind: "invitation.accepted", actor: "lee@shop.example", target: memberId, details: { role: "operator" } },
    ]);

    // Assignments: from whom to whom, by whom; taking what one holds already records nothing. On an account of
    // its own: this file's chatbot has a retention period that the last case runs.
    const b = await s.account();
    const bh = {
      authorization: `Bearer ${(await postJson(s.url, "/get_id_token", { user_email_id: b.email, password: b.password })).body.data.idToken}`,
      "user-agent": UA,
    };
    const ofB = async () =>
      (await getJson(s.url, "/v1/account/audit_events", { kinds: "conversation.assigned" }, bh)).body.data
        .audit_events as any[];
    const kim = await ok(postJson(s.url, "/v1/account/members", { email: "kim@shop.example", role: "operator" }, bh));
    // Only a person who joined can be assigned (issue 47): Kim accepts the invitation first.
    await ok(
      postJson(s.url, "/v1/invitations/accept", {
        invitation_code: kim.invitation_code,
        password: "a-long-password-2",
      }),
    );
    const t = await issueTokens(s.url, b, "audited-customer");
    const { conversation_id } = await send(s.url, t.access_token, "hello");
    const body = { conversation_id };
    await ok(postJson(s.url, "/take_over_conversation", body, bh));
    await ok(postJson(s.url, "/take_over_conversation", body, bh));
    await ok(postJson(s.url, "/take_over_conversation", { ...body, operator_email: "kim@shop.example" }, bh));
    await ok(postJson(s.url, "/release_conversation", body, bh));
    const assigned = (await ofB()).reverse();
    expect(assigned.map((e) => [e.actor, e.target, e.details.from, e.details.to])).toEqual([
      [b.email, conversation_id, "ai_agent", b.email],
      [b.email, conversation_id, b.email, "kim@shop.example"],
      [b.email, conversation_id, "kim@shop.example", "ai_agent"],
    ]);
    for (const e of assigned) {
      expect(e.address).toMatch(/127\.0\.0\.1$/);
      expect(e.user_agent).toBe(UA);
    }
  });

  it("keeps nothing secret: no key, password, code, token or signing secret", async () => {
    const text = JSON.stringify((await audit()).audit_events);
    expect(secrets.length).toBeGreaterThan(8);
    for (const x of secrets) expect(text.includes(x), "a secret in the audit log").toBe(false);
    expect(findSecretShape(text)).toBeUndefined();
  });

  it("pages newest first and filters by kind and time", async () => {
    const every = (await audit()).audit_events;
    expect(every.length).toBeGreaterThan(10);
    const p1 = await audit({ limit: 4 });
    const p2 = await audit({ limit: 4, page_token: p1.next_page_token });
    expect([...p1.audit_events, ...p2.audit_events].map((e) => e.audit_event_id)).toEqual(
      every.slice(0, 8).map((e) => e.audit_event_id),
    );
    const keys = await audit({ kinds: "api_key.revoked" });
    expect(keys.audit_events.map((e) => e.kind)).toEqual(["api_key.revoked"]);
    // Bounds by time: since is inclusive, until exclusive.
    const newest = every[0].created_at as string;
    const at = every.filter((e) => e.created_at === newest).map((e) => e.audit_event_id);
    expect((await audit({ since: newest })).audit_events.map((e) => e.audit_event_id)).toEqual(at);
    expect((await audit({ until: newest })).audit_events.length).toBe(every.length - at.length);
    for (const [q, field] of [
      [{ kinds: "api_key.stolen" }, "kinds"],
      [{ since: "yesterday" }, "since"],
      [{ limit: 501 }, "limit"],
      [{ page_token: "x" }, "page_token"],
    ] as const) {
      const r = await getJson(s.url, "/v1/account/audit_events", q, headers());
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(JSON.stringify(r.body)).toContain(field);
    }
  });

  it("is each account's own", async () => {
    const b = await s.account();
    const r = await postJson(s.url, "/get_id_token", { user_email_id: b.email, password: b.password });
    const other = await getJson(
      s.url,
      "/v1/account/audit_events",
      {},
      { authorization: `Bearer ${r.body.data.idToken}` },
    );
    expect(other.status).toBe(200);
    // B sees its own sign-in and the key its set-up made, nothing of A's.
    const mine = other.body.data.audit_events as any[];
    expect(mine.map((e) => e.kind).sort()).toEqual(["api_key.created", "sign_in.succeeded"]);
    const ofA = new Set((await audit()).audit_events.map((e) => e.audit_event_id));
    expect(mine.filter((e) => ofA.has(e.audit_event_id))).toEqual([]);
  });

  it("drops events older than its retention period", async () => {
    const before = (await audit()).audit_events.length;
    expect(before).toBeGreaterThan(0);
    s.clock.advance((s.app.config.auditRetentionDays + 1) * 86_400_000);
    await s.app.retention.runOnce();
    // Signed in again (the ID token expired meanwhile): that sign-in is all the log holds.
    const r = await postJson(s.url, "/get_id_token", { user_email_id: a.email, password: a.password });
    token = r.body.data.idToken;
    expect((await audit()).audit_events.map((e) => e.kind)).toEqual(["sign_in.succeeded"]);
  });
});
