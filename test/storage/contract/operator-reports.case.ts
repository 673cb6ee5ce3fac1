import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import { OperatorReports } from "../../../src/domain/report/operators.js";
import type { Store } from "../../../src/domain/store.js";
import { account, message } from "./fixtures.js";
import type { Harness } from "./harness.js";

const D = Date.UTC(2026, 2, 10); // the period: 2026-03-10, UTC
const S = 1000;
const BEA = "bea@team.example";
const SAM = "sam@team.example";

type Kind = "assigned" | "taken_over" | "released" | "closed";

async function line(store: Store, accountId: string, conversationId: string, kind: Kind, to: string, at: number) {
  await store.activities.add({
    activityId: newId(),
    accountId,
    conversationId,
    kind,
    actorEmail: to || BEA,
    actorName: "",
    fromEmail: "",
    fromName: "",
    toEmail: to,
    toName: to === BEA ? "Bea" : to === SAM ? "Sam" : "",
    detail: "",
    createdAt: at,
  });
}

async function team(store: Store, accountId: string, name: string, emails: string[]): Promise<string> {
  const teamId = newId();
  await store.teams.add({ teamId, accountId, name, assignment: "off", capacity: 0, createdAt: 1, updatedAt: 1 }, name);
  await store.teams.setMembers(
    accountId,
    teamId,
    emails.map((email) => ({ memberId: newId(), email })),
    1,
  );
  return teamId;
}

const none = { count: 0, medianSeconds: 0, p90Seconds: 0 };

/** The operator report's facts: who held which conversation when (the timeline), their replies and the ratings. */
export function operatorReportCases(h: () => Harness) {
  describe("operator report facts", () => {
    it("gives each person and team the conversations that came to them, their first replies, closes and ratings", async () => {
      const { store } = h();
      const a = await account(store);
      const other = await account(store);
      const [c1, c2, c3, c4, elsewhere] = [newId(), newId(), newId(), newId(), newId()];
      // c1: assigned to Bea (and again: the same stretch), her reply 30 s later, closed by her 540 s after.
      await message(store, a, c1, { at: D + 1 * S, start: true, userId: "u1" });
      await line(store, a.accountId, c1, "assigned", BEA, D + 60 * S);
      await line(store, a.accountId, c1, "assigned", BEA, D + 70 * S);
      await message(store, a, c1, { at: D + 90 * S, role: "operator" });
      await line(store, a.accountId, c1, "closed", "", D + 600 * S);
      await store.ratings.set({
        conversationId: c1,
        accountId: a.accountId,
        score: 5,
        comment: "",
        ratedAt: D + 601 * S,
      });
      // c2: Bea takes it and replies after 100 s; Sam takes it from her, replies after 10 s and closes it.
      await message(store, a, c2, { at: D + 2 * S, start: true, userId: "u2" });
      await line(store, a.accountId, c2, "taken_over", BEA, D + 120 * S);
      await message(store, a, c2, { at: D + 220 * S, role: "operator" });
      await line(store, a.accountId, c2, "taken_over", SAM, D + 300 * S);
      await message(store, a, c2, { at: D + 310 * S, role: "operator" });
      await line(store, a.accountId, c2, "closed", "", D + 1300 * S);
      await store.ratings.set({
        conversationId: c2,
        accountId: a.accountId,
        score: 2,
        comment: "",
        ratedAt: D + 1301 * S,
      });
      // c3: assigned to Bea, released without a reply.
      await message(store, a, c3, { at: D + 3 * S, start: true, userId: "u3" });
      await line(store, a.accountId, c3, "assigned", BEA, D + 400 * S);
      await line(store, a.accountId, c3, "released", "ai_agent", D + 500 * S);
      // c4: came to Sam the day before: not the period's, though he replies in it.
      await message(store, a, c4, { at: D - 2000 * S, start: true, userId: "u4" });
      await line(store, a.accountId, c4, "assigned", SAM, D - 1000 * S);
      await message(store, a, c4, { at: D + 5 * S, role: "operator" });
      // Another account's conversation, held by an e-mail of the same name: never in this account's report.
      await message(store, other, elsewhere, { at: D + 4 * S, start: true, userId: "u5" });
      await line(store, other.accountId, elsewhere, "assigned", BEA, D + 30 * S);
      await message(store, other, elsewhere, { at: D + 31 * S, role: "operator" });
      const alpha = await team(store, a.accountId, "Alpha", [BEA]);
      const beta = await team(store, a.accountId, "Beta", [SAM]);
      const empty = await team(store, a.accountId, "Empty", []);

      const facts = await store.reports.operatorFacts(a.accountId, D, D + 86_400_000);
      expect(new Set(facts.lines.map((l) => l.conversationId))).toEqual(new Set([c1, c2, c3]));
      expect(facts.ratings.sort((p, q) => p.score - q.score)).toEqual([
        { conversationId: c2, score: 2 },
        { conversationId: c1, score: 5 },
      ]);
      expect(facts.replies.map((r) => r.createdAt).sort()).toEqual([D + 90 * S, D + 220 * S, D + 310 * S]);

      const report = await new OperatorReports(store).get(
        { accountId: a.accountId, email: a.email, role: "owner" } as never,
        { from: "2026-03-10", to: "2026-03-10" },
      );
      const bea = {
        conversations: 3,
        // 30 s and 100 s: the median is the first of two (nearest rank), the 90th the second.
        firstResponse: { count: 2, medianSeconds: 30, p90Seconds: 100 },
        resolution: { count: 1, medianSeconds: 540, p90Seconds: 540 },
        ratings: { count: 2, average: 3.5, distribution: [0, 1, 0, 0, 1] },
        csat: 0.5,
      };
      const sam = {
        conversations: 1,
        firstResponse: { count: 1, medianSeconds: 10, p90Seconds: 10 },
        resolution: { count: 1, medianSeconds: 1000, p90Seconds: 1000 },
        ratings: { count: 1, average: 2, distribution: [0, 1, 0, 0, 0] },
        csat: 0,
      };
      expect(report).toEqual({
        from: "2026-03-10",
        to: "2026-03-10",
        timeZone: "UTC",
        operators: [
          { email: BEA, name: "Bea", ...bea },
          { email: SAM, name: "Sam", ...sam },
        ],
        teams: [
          { teamId: alpha, name: "Alpha", members: [BEA], ...bea },
          { teamId: beta, name: "Beta", members: [SAM], ...sam },
          {
            teamId: empty,
            name: "Empty",
            members: [],
            conversations: 0,
            firstResponse: none,
            resolution: none,
            ratings: { count: 0, average: 0, distribution: [0, 0, 0, 0, 0] },
            csat: 0,
          },
        ],
      });
      // A period with nothing: the teams, every figure measured on nothing.
      const quiet = await new OperatorReports(store).get({ accountId: a.accountId } as never, {
        from: "2026-03-12",
        to: "2026-03-12",
      });
      expect(quiet.operators.map((o) => [o.email, o.conversations, o.firstResponse.count])).toEqual([
        [BEA, 0, 0],
        [SAM, 0, 0],
      ]);
    });
  });
}
