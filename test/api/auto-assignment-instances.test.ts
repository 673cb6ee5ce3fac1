import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { type Instance, startInstances } from "../helpers/instances.js";
import { type NdjsonReader, openNdjson } from "../helpers/ndjson.js";
import { postgresSkipReason } from "../helpers/postgres.js";
import { createTestAccount, type TestAccount } from "../helpers/server.js";
import { waitFor } from "../helpers/time-scale.js";

// Auto-assignment with two instances of the service on one PostgreSQL database: handovers arriving at once through
// both, with one member online on each, are each assigned once, and nobody holds more than the team's capacity.
const skip = await postgresSkipReason();
if (skip) console.warn(`auto-assignment across instances skipped: ${skip}`);

describe.skipIf(skip !== undefined)("auto-assignment across instances", () => {
  let instances: Instance[] = [];
  let stop: () => Promise<void> = async () => undefined;
  let acc: TestAccount;
  const streams: NdjsonReader[] = [];

  beforeAll(async () => {
    ({ instances, stop } = await startInstances(2));
    acc = await createTestAccount(instances[0]!.app, "owner@route-instances.example");
  });
  afterAll(async () => {
    for (const r of streams) await r.cancel().catch(() => undefined);
    await stop();
  });

  it("no conversation is assigned twice and no member past capacity", async () => {
    const [a, b] = instances as [Instance, Instance];
    const owner = await idToken(a.url, acc);
    const auth = { authorization: `Bearer ${owner}` };
    const sam = await addMember(a.url, owner, "sam@route-instances.example");
    const bea = await addMember(a.url, owner, "bea@route-instances.example");
    const team = await postJson(
      a.url,
      "/v1/account/teams",
      {
        name: "Support",
        member_ids: [sam.memberId, bea.memberId],
        chatbot_ids: [acc.chatbotId],
        assignment: "round_robin",
        capacity: 2,
      },
      auth,
    );
    expect(team.status).toBe(200);
    // Sam has the inbox open through A, Bea through B.
    for (const [url, who] of [
      [a.url, sam],
      [b.url, bea],
    ] as const) {
      const r = await openNdjson(`${url}/watch_account?user_email_id=${encodeURIComponent(acc.email)}`, {
        authorization: `Bearer ${who.idToken}`,
      });
      streams.push(r);
      await r.next();
    }
    // Six handovers at once, three through each instance.
    const ids = await Promise.all(
      [0, 1, 2, 3, 4, 5].map(async (i) => {
        const url = i % 2 === 0 ? a.url : b.url;
        const t = await issueTokens(url, acc, `route-${i}`);
        return (await send(url, t.access_token, "I want to talk to a person please")).conversation_id;
      }),
    );
    const assigned = async () => {
      const out: string[][] = [];
      for (const id of ids)
        out.push(
          (await getJson(a.url, "/list_conversation_activity", { conversation_id: id }, auth)).body.data.activities
            .filter((l: { kind: string }) => l.kind === "assigned")
            .map((l: { to_email: string }) => l.to_email),
        );
      return out;
    };
    await waitFor(
      "four of six assigned (two each: the capacity)",
      async () => (await assigned()).filter((x) => x.length > 0).length >= 4,
    );
    const lines = await assigned();
    // Each once at most; two each, no more.
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(1);
    const per = (email: string) => lines.filter((l) => l[0] === email).length;
    expect(per("sam@route-instances.example")).toBe(2);
    expect(per("bea@route-instances.example")).toBe(2);

    // Bea closes one through B: one waiting conversation comes to her, and still nobody is past capacity.
    const beas = ids.filter((_, i) => lines[i]![0] === "bea@route-instances.example");
    await postJson(
      b.url,
      "/close_conversation",
      { conversation_id: beas[0] },
      { authorization: `Bearer ${bea.idToken}` },
    );
    await waitFor("a fifth assigned", async () => (await assigned()).filter((x) => x.length > 0).length >= 5);
    const after = await assigned();
    for (const l of after) expect(l.length).toBeLessThanOrEqual(1);
    expect(after.filter((l) => l[0] === "bea@route-instances.example").length).toBe(3);
    expect(after.filter((l) => l[0] === "sam@route-instances.example").length).toBe(2);
  });
});
