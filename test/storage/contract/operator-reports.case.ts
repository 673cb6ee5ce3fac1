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

/** Expected figures: conversations, [count, median, p90] of first response and resolution, ratings per score, CSAT. */
function figures(conversations: number, first: number[], resolution: number[], distribution: number[], csat: number) {
  const d = ([count, medianSeconds, p90Seconds]: number[]) => ({ count, medianSeconds, p90Seconds });
  const count = distribution.reduce((x, y) => x + y, 0);
  const average = distribution.reduce((x, n, i) => x + n * (i + 1), 0) / count;
  return {
    conversations,
    firstResponse: d(first),
    resolution: d(resolution),
    ratings: { count, average, distribution },
    csat,
    sla: { hits: 0, breaches: 0 },
  };
}

/** The operator report's facts: who held which conversation when (the timeline), their replies and the ratings. */
export function operatorReportCases(h: () => Harness) {
  describe("operator report facts", () => {
    it("gives each person and team the conversations that came to them, their first replies, closes and ratings", async () => {
      const { store } = h();
      const a = await account(store);
      const other = await account(store);
      const [c1, c2, c3, c4, elsewhere] = [newId(), newId(), newId(), newId(), newId()];
      const rate = (conversationId: string, score: number, at: number) =>
        store.ratings.set({ conversationId, accountId: a.accountId, score, comment: "", ratedAt: at });
      // Each step: a conversation's start (customer), a timeline line, an operator reply, or a rating, in time order.
      const steps: [string, string, string | number, number][] = [
        // c1: assigned to Bea (and again: the same stretch), her reply 30 s later, closed by her 540 s after.
        [c1, "start", "u1", 1],
        [c1, "assigned", BEA, 60],
        [c1, "assigned", BEA, 70],
        [c1, "reply", "", 90],
        [c1, "closed", "", 600],
        [c1, "rate", 5, 601],
        // c2: Bea takes it and replies after 100 s; Sam takes it from her, replies after 10 s and closes it.
        [c2, "start", "u2", 2],
        [c2, "taken_over", BEA, 120],
        [c2, "reply", "", 220],
        [c2, "taken_over", SAM, 300],
        [c2, "reply", "", 310],
        [c2, "closed", "", 1300],
        [c2, "rate", 2, 1301],
      ];
      for (const [c, what, arg, at] of steps) {
        if (what === "start") await message(store, a, c, { at: D + at * S, start: true, userId: String(arg) });
        else if (what === "reply") await message(store, a, c, { at: D + at * S, role: "operator" });
        else if (what === "rate") await rate(c, Number(arg), D + at * S);
        else await line(store, a.accountId, c, what as Kind, String(arg), D + at * S);
      }
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
      // 30 s and 100 s: the median is the first of two (nearest rank), the 90th the second.
      const bea = figures(3, [2, 30, 100], [1, 540, 540], [0, 1, 0, 0, 1], 0.5);
      const sam = figures(1, [1, 10, 10], [1, 1000, 1000], [0, 1, 0, 0, 0], 0);
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
            sla: { hits: 0, breaches: 0 },
          },
        ],
      });
      // The means, as numbers: Bea's ratings 5 and 2, Sam's 2.
      expect(report.operators.map((o) => [o.ratings.average, o.csat])).toEqual([
        [3.5, 0.5],
        [2, 0],
      ]);
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
    it("gives a first-response SLA's hit to whoever held it at the first reply, its breach to whoever held it when due", async () => {
      const { store } = h();
      const a = await account(store);
      const bot = (await store.chatbots.byId(a.chatbotId))!;
      await store.chatbots.update({ ...bot, firstResponseSlaMinutes: 5 });
      const [met, missed, unheld, none] = [newId(), newId(), newId(), newId()];
      const start = async (c: string, at: number, clock: boolean) => {
        await message(store, a, c, { at: D + at * S, start: true, userId: c.slice(0, 8) });
        if (clock) expect(await store.timers.startSla(c, D + at * S)).toBe(D + (at + 300) * S);
      };
      // met: Bea holds it and answers within the 5 minutes.
      await start(met, 1, true);
      await line(store, a.accountId, met, "assigned", BEA, D + 10 * S);
      await message(store, a, met, { at: D + 100 * S, role: "operator" });
      // missed: Sam holds it when it falls due, unanswered; Bea takes it over after and answers, late.
      await start(missed, 2, true);
      await line(store, a.accountId, missed, "assigned", SAM, D + 30 * S);
      // unheld: due while no one held it; Bea gets it after.
      await start(unheld, 3, true);
      // none: no clock ran (Sam answers it in time, no SLA): no hit.
      await start(none, 4, false);
      await line(store, a.accountId, none, "assigned", SAM, D + 40 * S);
      await message(store, a, none, { at: D + 50 * S, role: "operator" });
      for (const c of [met, missed, unheld]) expect(await store.timers.settleSla(c, D + 400 * S)).toBeDefined();
      await line(store, a.accountId, missed, "taken_over", BEA, D + 500 * S);
      await message(store, a, missed, { at: D + 510 * S, role: "operator" });
      await line(store, a.accountId, unheld, "assigned", BEA, D + 600 * S);
      await message(store, a, unheld, { at: D + 610 * S, role: "operator" });
      const both = await team(store, a.accountId, "Both", [BEA, SAM]);

      const facts = await store.reports.operatorFacts(a.accountId, D, D + 86_400_000);
      expect(facts.sla.sort((p, q) => p.dueAt - q.dueAt)).toEqual([
        { conversationId: met, dueAt: D + 301 * S, firstOperatorAt: D + 100 * S, breached: false },
        { conversationId: missed, dueAt: D + 302 * S, firstOperatorAt: D + 510 * S, breached: true },
        { conversationId: unheld, dueAt: D + 303 * S, firstOperatorAt: D + 610 * S, breached: true },
      ]);
      const report = await new OperatorReports(store).get({ accountId: a.accountId } as never, {
        from: "2026-03-10",
        to: "2026-03-10",
      });
      expect(report.operators.map((o) => [o.email, o.sla])).toEqual([
        [BEA, { hits: 1, breaches: 0 }],
        [SAM, { hits: 0, breaches: 1 }],
      ]);
      expect(report.teams.map((t) => [t.teamId, t.sla])).toEqual([[both, { hits: 1, breaches: 1 }]]);
    });
  });
}
