import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { idToken } from "../helpers/flows.js";
import { postJson } from "../helpers/http.js";
import { startServer, type TestServer } from "../helpers/server.js";
import { waitFor } from "../helpers/time-scale.js";
import { closedAfterEach } from "./mail-fixture.js";
import { startSmtpSink } from "./smtp-sink.js";

/** The service and the relay of the test running, closed after it. */
const live = closedAfterEach();

it("an invitation is e-mailed to the person invited, and accepted from the mail's link", async () => {
  live.sink = await startSmtpSink();
  live.server = await startServer({
    env: {
      AIAGENT_SMTP_URL: `smtp://127.0.0.1:${live.sink.port}`,
      AIAGENT_MAIL_FROM: "support@shop.example",
      AIAGENT_MAIL_LINK_BASE: "http://127.0.0.1:9",
      AIAGENT_APP_URL: "https://support.shop.example",
    },
    overrides: { mailPollMs: 20 },
  });
  const a = await live.server.account();
  const auth = { authorization: `Bearer ${await idToken(live.server.url, a)}` };
  const inv = await postJson(
    live.server.url,
    "/v1/account/members",
    { email: "Dan@Team.example", role: "operator" },
    auth,
  );
  expect(inv.status).toBe(200);
  await waitFor("the invitation arrives", () => live.sink!.received.length === 1);
  const [m] = live.sink.received;
  expect(m!.to).toEqual(["dan@team.example"]);
  expect(m!.parsed.subject).toBe("You are invited to the support team");
  expect(m!.parsed.text).toContain(`${a.email} invited you`);
  expect(m!.parsed.html).toContain("https://support.shop.example/console/invitation#code=");
  const link = /https:\/\/support\.shop\.example\/console\/invitation#code=(\S+)/.exec(m!.parsed.text ?? "")!;
  expect(link[0]).toBe(inv.body.data.invitation_url);
  // The outbox keeps the link sealed: no row holds the code.
  const rows = JSON.stringify(await live.server.app.store.mail.get(a.accountId, (await mailIds(live.server))[0]!));
  expect(rows).not.toContain(decodeURIComponent(link[1]!));
  const accepted = await postJson(live.server.url, "/v1/invitations/accept", {
    invitation_code: decodeURIComponent(link[1]!),
    password: "a long enough password",
  });
  expect(accepted.status).toBe(200);

  // A password link is e-mailed the same way.
  const reset = await postJson(
    live.server.url,
    `/v1/account/members/${inv.body.data.member.member_id}/password_reset`,
    {},
    auth,
  );
  expect(reset.status).toBe(200);
  await waitFor("the password link arrives", () => live.sink!.received.length === 2);
  expect(live.sink.received[1]!.parsed.subject).toBe("A new password for the support console");
  expect(live.sink.received[1]!.parsed.text).toContain(reset.body.data.invitation_url);
});

/** The ids of the outbox's mails, read straight from the store's file (SQLite). */
async function mailIds(s: TestServer): Promise<string[]> {
  const db = new Database(s.dbPath, { readonly: true });
  try {
    return (db.prepare("SELECT mail_id FROM mail_outbox").all() as { mail_id: string }[]).map((r) => r.mail_id);
  } finally {
    db.close();
  }
}
