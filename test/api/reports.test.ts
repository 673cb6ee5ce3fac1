import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, idToken, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";

// Issue 32, item 5: GetReport's figures for a seeded dataset equal the figures this test computes on its own from
// what it wrote (the messages read back), on SQLite and PostgreSQL (ON_POSTGRES in vitest.config.ts).

const IDLE_SECONDS = 3600;
const fx = serverForFile({ server: { env: { AIAGENT_IDLE_CLOSE: String(IDLE_SECONDS) } } });
const MIN = 60_000;
const HOUR = 60 * MIN;
// Kolkata is UTC+05:30: its days and hours are not UTC's, and its offset is a half hour.
const ZONE = "Asia/Kolkata";
const OFFSET = 5.5 * HOUR;
const BASE = Date.UTC(2026, 2, 10, 0, 0); // 2026-03-10T00:00Z, 05:30 in Kolkata

interface Plan {
  /** Minutes after BASE the customer writes first. */
  at: number;
  /** Minutes after the first message a person replies (handed over), if any. */
  reply?: number;
  /** Closed by the team this many minutes after the first message. */
  close?: number;
  score?: number;
  /** More customer messages, minutes after the first. */
  more?: number[];
  /** Taken over this many minutes after the first message, and no person writes: not handed over. */
  takeOver?: number;
  /** The customer writes again this many minutes after the first, after the close: the conversation reopens. */
  reopen?: number;
  /** Minutes after the first: customer messages and operator replies sent at once, with the clock running. */
  burst?: number;
}

// Spread over three Kolkata days, with one before the period and one after it (both left out of the report).
const PLANS: Plan[] = [
  { at: -6 * 60 }, // 2026-03-09 23:30 Kolkata: before the period
  { at: 10, reply: 3, close: 20, score: 5 },
  { at: 45, more: [2, 50] },
  { at: 130, reply: 11, close: 30, score: 2 },
  { at: 17 * 60 + 40, reply: 1, more: [4] }, // 2026-03-10 23:10 Kolkata
  { at: 18 * 60 + 45, close: 5, score: 4 }, // 2026-03-11 00:15 Kolkata
  { at: 20 * 60, reply: 7, close: 9, score: 4 },
  { at: 30 * 60 },
  { at: 32 * 60, takeOver: 2, more: [5] },
  { at: 34 * 60, reply: 4, close: 10, score: 3, reopen: 25 },
  { at: 40 * 60, reply: 2, burst: 6 },
  { at: 66 * 60, reply: 2 }, // 2026-03-12 23:30 Kolkata
  { at: 66 * 60 + 45 }, // 2026-03-13 00:15 Kolkata: after the period
];

interface Seeded {
  conversationId: string;
  createdAt: number;
  closed: boolean;
  score: number | null;
  messages: { role: string; at: number }[];
}

const auth = async () => ({ authorization: `Bearer ${await idToken(fx.s.url, fx.a)}` });

async function seed(): Promise<Seeded[]> {
  const out: Seeded[] = [];
  let n = 0;
  for (const p of PLANS) {
    const t0 = BASE + p.at * MIN;
    const user = `report-${n++}`;
    const steps: { at: number; run: (id: string) => Promise<void> }[] = [];
    const customer = async (id: string, text: string) => {
      await send(fx.s.url, (await issueTokens(fx.s.url, fx.a, user)).access_token, text, id);
    };
    for (const m of p.more ?? []) steps.push({ at: t0 + m * MIN, run: (id) => customer(id, `More ${m}`) });
    if (p.reply !== undefined) {
      const r = p.reply;
      steps.push({
        at: t0 + r * MIN,
        run: async (id) => {
          const h = await auth();
          expect((await postJson(fx.s.url, "/take_over_conversation", { conversation_id: id }, h)).status).toBe(200);
          const body = { conversation_id: id, content: "A person here." };
          expect((await postJson(fx.s.url, "/reply_to_conversation", body, h)).status).toBe(200);
        },
      });
    }
    if (p.takeOver !== undefined)
      steps.push({
        at: t0 + p.takeOver * MIN,
        run: async (id) => {
          const r = await postJson(fx.s.url, "/take_over_conversation", { conversation_id: id }, await auth());
          expect(r.status).toBe(200);
        },
      });
    if (p.reopen !== undefined) {
      const r = p.reopen;
      steps.push({ at: t0 + r * MIN, run: (id) => customer(id, "One more thing") });
    }
    if (p.burst !== undefined)
      steps.push({
        at: t0 + p.burst * MIN,
        run: async (id) => {
          const h = await auth();
          const token = (await issueTokens(fx.s.url, fx.a, user)).access_token;
          // The clock runs: the writes' instants differ, and they may commit in another order than their instants.
          fx.s.clock.resume();
          const writes: Promise<unknown>[] = [];
          for (let i = 0; i < 4; i++) {
            writes.push(send(fx.s.url, token, `At once ${i}`, id));
            writes.push(
              postJson(fx.s.url, "/reply_to_conversation", { conversation_id: id, content: `Reply ${i}` }, h).then(
                (r) => expect(r.status).toBe(200),
              ),
            );
          }
          await Promise.all(writes);
        },
      });
    if (p.close !== undefined) {
      const c = p.close;
      steps.push({
        at: t0 + c * MIN,
        run: async (id) => {
          const h = await auth();
          expect((await postJson(fx.s.url, "/close_conversation", { conversation_id: id }, h)).status).toBe(200);
          if (p.score === undefined) return;
          const t = await issueTokens(fx.s.url, fx.a, user);
          const r = await postJson(
            fx.s.url,
            `/ai_agent/rate_conversation?access_token=${encodeURIComponent(t.access_token)}`,
            { conversation_id: id, score: p.score },
          );
          expect(r.status).toBe(200);
        },
      });
    }
    fx.s.clock.freezeAt(t0);
    const id = (await send(fx.s.url, (await issueTokens(fx.s.url, fx.a, user)).access_token, "Hello")).conversation_id;
    for (const st of steps.sort((x, y) => x.at - y.at)) {
      fx.s.clock.freezeAt(st.at);
      await st.run(id);
    }
    const msgs = await getJson(fx.s.url, "/get_messages_for_conversation", { conversation_id: id }, await auth());
    expect(msgs.status, JSON.stringify(msgs.body)).toBe(200);
    out.push({
      conversationId: id,
      createdAt: t0,
      // Closed by the team, unless the customer wrote after it (that reopens it).
      closed: p.close !== undefined && !(p.reopen !== undefined && p.reopen > p.close),
      score: p.score ?? null,
      messages: (msgs.body.messages as { role: string; created_at: string }[]).map((m) => ({
        role: m.role,
        at: Date.parse(m.created_at),
      })),
    });
  }
  return out;
}

const rank = (v: number[], p: number) => {
  const sorted = [...v].sort((x, y) => x - y);
  return sorted.length === 0 ? 0 : sorted[Math.ceil(p * sorted.length) - 1]!;
};
const localDate = (t: number) => new Date(t + OFFSET).toISOString().slice(0, 10);

/** The figures, computed here from the seeded conversations and their messages as read back. */
function expected(all: Seeded[], now: number, idleMs: number) {
  const from = "2026-03-10";
  const to = "2026-03-12";
  const conv = all.filter((c) => localDate(c.createdAt) >= from && localDate(c.createdAt) <= to);
  // The earliest by instant: concurrent writes may have taken their places in another order.
  const first = (c: Seeded, role: string) => {
    const at = c.messages.filter((m) => m.role === role).map((m) => m.at);
    return at.length === 0 ? undefined : Math.min(...at);
  };
  const handed = conv.filter((c) => first(c, "operator") !== undefined);
  const lastAt = (c: Seeded) => Math.max(c.createdAt, ...c.messages.map((m) => m.at));
  const closed = conv.filter((c) => c.closed || lastAt(c) < now - idleMs);
  const dur = (ms: number[]) => {
    const sec = ms.map((x) => Math.floor(x / 1000));
    return { count: sec.length, medianSeconds: rank(sec, 0.5), p90Seconds: rank(sec, 0.9) };
  };
  const scores = conv.flatMap((c) => (c.score === null ? [] : [c.score]));
  const hours = Array.from({ length: 24 }, (_, hour) => ({ hour, messages: 0 }));
  for (const c of conv) for (const m of c.messages) hours[new Date(m.at + OFFSET).getUTCHours()]!.messages++;
  return {
    chatbotId: fx.a.chatbotId,
    from,
    to,
    timeZone: ZONE,
    conversations: conv.length,
    handedOver: handed.length,
    handedOverShare: handed.length / conv.length,
    days: ["2026-03-10", "2026-03-11", "2026-03-12"].map((date) => ({
      date,
      conversations: conv.filter((c) => localDate(c.createdAt) === date).length,
      handedOver: handed.filter((c) => localDate(c.createdAt) === date).length,
    })),
    firstResponse: dur(handed.map((c) => first(c, "operator")! - first(c, "user")!)),
    timeToClose: dur(closed.map((c) => lastAt(c) - c.createdAt)),
    ratings: {
      count: scores.length,
      average: scores.reduce((x, y) => x + y, 0) / scores.length,
      distribution: [1, 2, 3, 4, 5].map((k) => scores.filter((x) => x === k).length),
    },
    hours,
    // No chatbot of this test has a first-response SLA: no clock ran, so none was met or missed.
    slaHits: 0,
    slaBreaches: 0,
  };
}

describe("GetReport", () => {
  it("answers the figures this test computes from what it wrote", async () => {
    const seeded = await seed();
    // Read minutes after the last message: the newest conversation is live still, the older ones idle (closed).
    const now = BASE + (66 * 60 + 50) * MIN;
    fx.s.clock.freezeAt(now);
    const want = expected(seeded, now, IDLE_SECONDS * 1000);
    // The figures are not trivial: each kind is present.
    expect(want.conversations).toBe(11);
    expect(want.handedOver).toBe(7);
    expect(want.ratings.count).toBe(5);
    // One is live still (the newest, handed over), so not counted in the time to close; the reopened one is
    // live again, then idle (closed), to its last message.
    expect(want.timeToClose.count).toBe(10);
    const reopened = seeded[PLANS.findIndex((p) => p.reopen !== undefined)]!;
    expect(reopened.messages.at(-1)!.at).toBe(reopened.createdAt + 25 * MIN);
    // The burst's eight writes all landed, at differing instants.
    const burst = seeded[PLANS.findIndex((p) => p.burst !== undefined)]!;
    expect(burst.messages.filter((m) => m.at >= burst.createdAt + 6 * MIN)).toHaveLength(8);
    const q = { chatbot_id: fx.a.chatbotId, from: "2026-03-10", to: "2026-03-12", time_zone: ZONE };
    const r = await getJson(fx.s.url, "/v1/account/reports", q, await auth());
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(camel(r.body.data)).toEqual(want);
  });

  it("refuses another account's chatbot, bad dates, a bad zone, a period too long; operators", async () => {
    const other = await fx.s.account();
    const h = await auth();
    const get = (q: Record<string, string>, headers = h) =>
      getJson(
        fx.s.url,
        "/v1/account/reports",
        { chatbot_id: fx.a.chatbotId, from: "2026-03-10", to: "2026-03-12", ...q },
        headers,
      );
    expect((await get({ chatbot_id: other.chatbotId })).status).toBe(404);
    for (const [q, field] of [
      [{ from: "2026-02-30" }, "from"],
      [{ from: "10/03/2026" }, "from"],
      [{ to: "2026-03-09" }, "to"],
      [{ to: "2027-03-11" }, "to"],
      [{ time_zone: "Mars/Olympus" }, "time_zone"],
      [{ chatbot_id: "not-a-uuid" }, "chatbot_id"],
    ] as const) {
      const r = await get(q);
      expect(r.status, JSON.stringify(q)).toBe(400);
      expect(JSON.stringify(r.body), JSON.stringify(q)).toContain(field);
    }
    // Operators answer the inbox; the figures of the team's work are the admins'.
    const op = await addMember(fx.s.url, await idToken(fx.s.url, fx.a), "report-operator@reports.example");
    expect((await get({}, { authorization: `Bearer ${op.idToken}` })).status).toBe(403);
    // A year, leap day included, is the longest period.
    expect((await get({ from: "2024-01-01", to: "2024-12-31" })).status).toBe(200);
  });

  it("the operator report: bad dates, a bad zone, a period too long refused naming the field; operators refused", async () => {
    const h = await auth();
    const route = (q: Record<string, string>, headers = h) =>
      getJson(fx.s.url, "/v1/account/reports/operators", { from: "2026-03-10", to: "2026-03-12", ...q }, headers);
    const cases: [Record<string, string>, string][] = [
      [{ from: "2026-02-30" }, "from"],
      [{ to: "2026-03-09" }, "to"],
      [{ to: "2027-03-11" }, "to"],
      [{ time_zone: "Mars/Olympus" }, "time_zone"],
    ];
    const answers = await Promise.all(cases.map(([q]) => route(q)));
    expect(answers.map((r, i) => [r.status, JSON.stringify(r.body).includes(cases[i]![1])])).toEqual(
      cases.map(() => [400, true]),
    );
    const op = await addMember(fx.s.url, await idToken(fx.s.url, fx.a), "figures-operator@reports.example");
    expect((await route({}, { authorization: `Bearer ${op.idToken}` })).status).toBe(403);
    const year = await route({ from: "2024-01-01", to: "2024-12-31", time_zone: ZONE });
    expect(year.status).toBe(200);
    expect(year.body.data).toMatchObject({ from: "2024-01-01", to: "2024-12-31", time_zone: ZONE });
  });
});

/** The JSON body's keys in the domain's camelCase (the JSON routes answer snake_case). */
function camel(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(camel);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()), camel(x)]),
  );
}
