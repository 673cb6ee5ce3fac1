import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { postJson, reasonOf, requestJson } from "../helpers/http.js";

// Issue 27, item 4: an invitation reveals nothing about other accounts, and one account's pending invitation blocks
// no other's; whether the invited person already belongs to an account is decided at acceptance. Through a real
// server, on SQLite and (AIAGENT_TEST_BACKEND=postgres) PostgreSQL.

const fx = serverForFile({ accounts: 2, idTokens: true });

const invite = (auth: Record<string, string>, email: string, role = "operator") =>
  requestJson(fx.s.url, "POST", "/v1/account/members", auth, { email, role });
const accept = (code: string, password: string) =>
  postJson(fx.s.url, "/v1/invitations/accept", { invitation_code: code, password });
const members = async (auth: Record<string, string>) =>
  (await requestJson(fx.s.url, "GET", "/v1/account/members", auth)).body.data.members as {
    member_id: string;
    email: string;
    status: string;
  }[];

/** The answer with what must differ between two invitations (ids, codes, instants, the e-mail) blanked out. */
function shape(r: { status: number; headers: Headers; body: any }) {
  const d = r.body.data;
  const code = d.invitation_code as string;
  return {
    status: r.status,
    type: r.headers.get("content-type"),
    body: JSON.parse(
      JSON.stringify(r.body)
        .replaceAll(code, "CODE")
        .replaceAll(d.member.member_id, "ID")
        .replaceAll(d.member.email, "EMAIL")
        .replaceAll(d.member.created_at, "AT")
        .replaceAll(d.invitation_expires_at, "UNTIL"),
    ),
  };
}

describe("invitations reveal nothing about other accounts", () => {
  it("the answer is the same for an e-mail unknown, a member, an owner and an invitee of another account", async () => {
    const member = await addMember(fx.s.url, fx.authA.authorization!.slice(7), "known-member@elsewhere.example");
    await invite(fx.authA, "pending-elsewhere@elsewhere.example");
    const answers = await Promise.all(
      ["nobody-yet@nowhere.example", member.email.toUpperCase(), fx.a.email, "pending-elsewhere@elsewhere.example"].map(
        (e) => invite(fx.authB, e),
      ),
    );
    const [unknown, ...known] = answers.map(shape);
    expect(unknown!.status).toBe(200);
    expect(unknown!.body.data.member).toEqual({
      member_id: "ID",
      email: "EMAIL",
      role: "operator",
      status: "invited",
      owner: false,
      created_at: "AT",
    });
    for (const k of known) expect(k).toEqual(unknown);
    // The invitation exists only in B: A's list did not change.
    expect((await members(fx.authA)).map((m) => m.email)).not.toContain("nobody-yet@nowhere.example");
  });

  it("a pending invitation in one account does not block another's, and the first accepted decides", async () => {
    // B invites first (an earlier invitation elsewhere would hold a later one back: see the squatting case below).
    const fromB = await invite(fx.authB, "New-Hire@people.example", "admin");
    const fromA = await invite(fx.authA, "new-hire@people.example");
    expect([fromA.status, fromB.status]).toEqual([200, 200]);
    expect((await members(fx.authA)).find((m) => m.email === "new-hire@people.example")?.status).toBe("invited");
    // B's is accepted: the person is B's, and signs in to B with their e-mail (an e-mail means one account).
    const joined = await accept(fromB.body.data.invitation_code, "new hire's password");
    expect(joined.status).toBe(200);
    expect(joined.body.data).toMatchObject({ email: "New-Hire@people.example", role: "admin", status: "active" });
    const signIn = await postJson(fx.s.url, "/get_id_token", {
      user_email_id: "new-hire@people.example",
      password: "new hire's password",
    });
    expect(signIn.status).toBe(200);
    const me = await requestJson(fx.s.url, "GET", "/v1/account", {
      authorization: `Bearer ${signIn.body.data.idToken}`,
    });
    expect(me.body.data).toMatchObject({ account_id: fx.b.accountId, caller_email: "New-Hire@people.example" });

    // A's is refused at acceptance, told to the person accepting; nothing changes and it stays pending.
    const refused = await accept(fromA.body.data.invitation_code, "another password");
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("failed_precondition");
    expect(reasonOf(refused.body)).toBe("InvitationEmailInUseError");
    expect(refused.body.message).toContain("new-hire@people.example already signs in to another account");
    expect(JSON.stringify(refused.body)).not.toContain(fx.b.email);
    expect((await members(fx.authA)).find((m) => m.email === "new-hire@people.example")?.status).toBe("invited");
    const stillB = await postJson(fx.s.url, "/get_id_token", {
      user_email_id: "new-hire@people.example",
      password: "another password",
    });
    expect(stillB.status).toBe(401);

    // Once B removes them, A's invitation (still within its week) works, and the e-mail signs in to A.
    const hire = (await members(fx.authB)).find((m) => m.email === "New-Hire@people.example")!;
    expect((await requestJson(fx.s.url, "DELETE", `/v1/account/members/${hire.member_id}`, fx.authB)).status).toBe(200);
    const now = await accept(fromA.body.data.invitation_code, "another password");
    expect(now.status).toBe(200);
    const inA = await postJson(fx.s.url, "/get_id_token", {
      user_email_id: "new-hire@people.example",
      password: "another password",
    });
    const meA = await requestJson(fx.s.url, "GET", "/v1/account", { authorization: `Bearer ${inA.body.data.idToken}` });
    expect(meA.body.data.account_id).toBe(fx.a.accountId);
  });

  it("two accounts' invitations of one e-mail accepted at once: one joins, the other is told the e-mail is in use", async () => {
    const c = await fx.s.account();
    const adminC = { authorization: `Bearer ${await idToken(fx.s.url, c)}` };
    const codes = await Promise.all(
      [fx.authA, adminC].map(async (auth) => (await invite(auth, "both@people.example")).body.data.invitation_code),
    );
    const answers = await Promise.all(codes.map((code) => accept(code, "both's password")));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(reasonOf(answers.find((r) => r.status === 400)!.body)).toBe("InvitationEmailInUseError");
    const signIn = await postJson(fx.s.url, "/get_id_token", {
      user_email_id: "both@people.example",
      password: "both's password",
    });
    expect(signIn.status).toBe(200);
  });

  it("an account's owner invited elsewhere is refused at acceptance; their own sign-in is untouched", async () => {
    const c = await fx.s.account();
    const inv = await invite(fx.authB, c.email.toUpperCase());
    expect(inv.status).toBe(200);
    const refused = await accept(inv.body.data.invitation_code, "a password of B's");
    expect(reasonOf(refused.body)).toBe("InvitationEmailInUseError");
    const owner = await postJson(fx.s.url, "/get_id_token", { user_email_id: c.email, password: c.password });
    expect(owner.status).toBe(200);
    const me = await requestJson(fx.s.url, "GET", "/v1/account", {
      authorization: `Bearer ${owner.body.data.idToken}`,
    });
    expect(me.body.data.account_id).toBe(c.accountId);
    const wrong = await postJson(fx.s.url, "/get_id_token", { user_email_id: c.email, password: "a password of B's" });
    expect(wrong.status).toBe(401);
  });

  it("within one account, an e-mail is invited once; withdrawn, a role changed, a new link: as for a member", async () => {
    const first = await invite(fx.authA, "twice@people.example");
    const again = await invite(fx.authA, "TWICE@people.example");
    expect(again.status).toBe(409);
    expect(again.body.message).toContain("already invited to this account");
    expect((await invite(fx.authA, fx.a.email)).status).toBe(409);
    const id = first.body.data.member.member_id as string;
    const role = await requestJson(fx.s.url, "PATCH", `/v1/account/members/${id}`, fx.authA, { role: "admin" });
    expect(role.body.data).toMatchObject({ member_id: id, role: "admin", status: "invited" });
    // Another account cannot touch it.
    expect((await requestJson(fx.s.url, "DELETE", `/v1/account/members/${id}`, fx.authB)).status).toBe(404);
    const link = await requestJson(fx.s.url, "POST", `/v1/account/members/${id}/password_reset`, fx.authA, {});
    expect(link.status).toBe(200);
    expect(reasonOf((await accept(first.body.data.invitation_code, "old link's password")).body)).toBe(
      "InvitationInvalidError",
    );
    expect((await requestJson(fx.s.url, "DELETE", `/v1/account/members/${id}`, fx.authA)).status).toBe(200);
    expect((await accept(link.body.data.invitation_code, "withdrawn link")).status).toBe(401);
    expect((await members(fx.authA)).map((m) => m.email)).not.toContain("twice@people.example");
  });

  it("one e-mail invited to one account by several requests at once: one invitation, the others 409", async () => {
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => invite(fx.authA, "at-once@people.example")));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
    for (const r of answers.filter((x) => x.status === 409))
      expect(r.body.message).toContain("already invited to this account");
    expect((await members(fx.authA)).filter((m) => m.email === "at-once@people.example")).toHaveLength(1);
  });
});

describe("a pending invitee is not assignable (issue 47)", () => {
  it("a conversation cannot be assigned to an e-mail only invited, nor to another account's member", async () => {
    const t = await issueTokens(fx.s.url, fx.a, "assign-customer");
    const conversationId = (await send(fx.s.url, t.access_token, "hello")).conversation_id as string;
    const take = (email: string) =>
      postJson(
        fx.s.url,
        "/take_over_conversation",
        { conversation_id: conversationId, operator_email: email },
        fx.authA,
      );
    // Another account's member, invited (pending) to A: A's admin cannot hand A's customer to them.
    const elsewhere = await addMember(fx.s.url, fx.authB.authorization!.slice(7), "b-member@elsewhere.example");
    expect((await invite(fx.authA, elsewhere.email)).status).toBe(200);
    const inv = await invite(fx.authA, "pending-only@people.example");
    expect(inv.status).toBe(200);
    for (const email of [elsewhere.email, "pending-only@people.example"]) {
      const r = await take(email);
      expect(r.status, email).toBe(400);
      expect(r.body.details[0].debug.metadata.field).toBe("operator_email");
    }
    // Once the invitee accepts, they are a person of the account and can be assigned.
    expect((await accept(inv.body.data.invitation_code, "pending-only's password")).status).toBe(200);
    const ok = await take("pending-only@people.example");
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.assigned_to).toBe("pending-only@people.example");
  });
});

describe("an admin cannot take an e-mail another account invited earlier (issue 47)", () => {
  it("accepting one's own later invitation is refused; the person's earlier invitation then works", async () => {
    const employer = await invite(fx.authB, "real-person@corp.example");
    expect(employer.status).toBe(200);
    fx.s.clock.advance(1);
    const squat = await invite(fx.authA, "real-person@corp.example");
    expect(squat.status).toBe(200);
    // A's admin is shown the code, and tries to accept it themselves.
    const refused = await accept(squat.body.data.invitation_code, "the squatter's password");
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("failed_precondition");
    expect(reasonOf(refused.body)).toBe("InvitationEmailInUseError");
    expect(refused.body.message).toContain("was invited earlier by another account");
    expect(JSON.stringify(refused.body)).not.toContain(fx.b.email);
    expect((await members(fx.authA)).find((m) => m.email === "real-person@corp.example")?.status).toBe("invited");
    expect(
      (
        await postJson(fx.s.url, "/get_id_token", {
          user_email_id: "real-person@corp.example",
          password: "the squatter's password",
        })
      ).status,
    ).toBe(401);
    // The person accepts their employer's invitation, and signs in to B.
    const joined = await accept(employer.body.data.invitation_code, "the real person's password");
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    const signIn = await postJson(fx.s.url, "/get_id_token", {
      user_email_id: "real-person@corp.example",
      password: "the real person's password",
    });
    const me = await requestJson(fx.s.url, "GET", "/v1/account", {
      authorization: `Bearer ${signIn.body.data.idToken}`,
    });
    expect(me.body.data.account_id).toBe(fx.b.accountId);
  });
});
