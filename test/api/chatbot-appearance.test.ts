import { describe, expect, it } from "vitest";
import { officeState } from "../../src/domain/account/appearance.js";
import { serverForFile } from "../helpers/file-server.js";
import { idToken, issueTokens } from "../helpers/flows.js";
import { requestJson } from "../helpers/http.js";

// Issue 32, items 2 and 3: a chatbot's brand color, greeting, agent name, theme and office hours, set through the
// account API, reach the frame's page; outside the hours (by the server's clock) the page says when the team is back.

const fx = serverForFile();

// An ID token of the server's present: the tests move its clock by days.
const auth = async () => ({ authorization: `Bearer ${await idToken(fx.s.url, fx.a)}` });
const patch = async (body: unknown) =>
  requestJson(fx.s.url, "PATCH", `/v1/account/chatbots/${fx.a.chatbotId}`, await auth(), body);
const get = async () => requestJson(fx.s.url, "GET", `/v1/account/chatbots/${fx.a.chatbotId}`, await auth());
async function framePage(): Promise<string> {
  const t = await issueTokens(fx.s.url, fx.a, "appearance-visitor");
  const q = new URLSearchParams({ user_id: "appearance-visitor", access_token: t.access_token });
  const r = await fetch(`${fx.s.url}/chatbot-iframe/${fx.a.chatbotId}?${q}`);
  expect(r.status).toBe(200);
  return r.text();
}

const BERLIN_WEEKDAYS = {
  time_zone: "Europe/Berlin",
  intervals: [1, 2, 3, 4, 5].map((weekday) => ({ weekday, open: "09:00", close: "17:00" })),
};

describe("a chatbot's appearance and office hours", () => {
  it("defaults to none: auto theme, no color, no greeting, always in", async () => {
    const r = await get();
    expect(r.status).toBe(200);
    expect(r.body.data.appearance).toEqual({
      brand_color: "",
      greeting: "",
      agent_name: "",
      theme: "auto",
      default_locale: "en",
      texts: [],
    });
    const html = await framePage();
    expect(html).not.toContain("data-brand-color");
    expect(html).not.toContain("data-theme");
    expect(html).not.toContain("data-away-until");
  });

  it("is set through the account API and shown in the frame's page", async () => {
    const r = await patch({
      appearance: {
        brand_color: "#F2C94C",
        greeting: "Hello!\nAsk us about orders & returns.",
        agent_name: "Ava",
        theme: "dark",
        office_hours: BERLIN_WEEKDAYS,
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.appearance).toMatchObject({ brand_color: "#f2c94c", agent_name: "Ava", theme: "dark" });
    expect(r.body.data.appearance.office_hours.intervals).toHaveLength(5);
    // A Wednesday at 10:00 in Berlin: the team is in.
    fx.s.clock.freezeAt(Date.parse("2026-11-25T09:00:00Z"));
    const html = await framePage();
    expect(html).toContain('data-theme="dark"');
    // A light color gets black text: the contrast stays above 4.5:1.
    expect(html).toContain('data-brand-color="#f2c94c" data-brand-text="#000000"');
    expect(html).toContain('data-agent-name="Ava"');
    expect(html).toContain("Hello!\nAsk us about orders &#38; returns.");
    expect(html).not.toContain("data-away-until");
  });

  it("outside the hours, by the server's clock, the page carries when the team is back", async () => {
    // Friday 18:30 in Berlin: back on Monday at 09:00, 08:00 UTC.
    fx.s.clock.freezeAt(Date.parse("2026-11-27T17:30:00Z"));
    const html = await framePage();
    expect(html).toContain('data-away-until="2026-11-30T08:00:00.000Z" data-time-zone="Europe/Berlin"');
    fx.s.clock.freezeAt(Date.parse("2026-11-30T08:00:00Z"));
    expect(await framePage()).not.toContain("data-away-until");
  });

  it("crosses a change to summer time at the right instant", () => {
    // Friday 27 March 2026, after hours; the clocks go forward on Sunday 29 March.
    const s = officeState(
      { timeZone: "Europe/Berlin", intervals: [{ weekday: 1, open: "09:00", close: "17:00" }] },
      Date.parse("2026-03-27T17:00:00Z"),
    );
    expect(s).toEqual({ open: false, nextOpen: Date.parse("2026-03-30T07:00:00Z") });
  });

  it("refuses a bad color, time zone or interval with a message that names it, and changes nothing", async () => {
    const before = (await get()).body.data.appearance;
    const cases: [unknown, string][] = [
      [{ brand_color: "red" }, "appearance.brand_color"],
      [{ theme: "blue" }, "theme"],
      [{ office_hours: { time_zone: "Mars/Olympus", intervals: BERLIN_WEEKDAYS.intervals } }, "time_zone"],
      [{ office_hours: { time_zone: "UTC", intervals: [{ weekday: 8, open: "09:00", close: "10:00" }] } }, "weekday"],
      [
        { office_hours: { time_zone: "UTC", intervals: [{ weekday: 1, open: "17:00", close: "09:00" }] } },
        "intervals[0]",
      ],
      [{ office_hours: { time_zone: "UTC", intervals: [{ weekday: 1, open: "9am", close: "10:00" }] } }, "open"],
    ];
    for (const [appearance, names] of cases) {
      const r = await patch({ appearance });
      expect(r.status, JSON.stringify(appearance)).toBe(400);
      expect(r.body.message).toContain(names);
    }
    expect((await get()).body.data.appearance).toEqual(before);
  });

  it("clears the office hours on request: the team is always in", async () => {
    const r = await patch({ appearance: { clear_office_hours: true } });
    expect(r.status).toBe(200);
    expect(r.body.data.appearance.office_hours).toBeUndefined();
    fx.s.clock.freezeAt(Date.parse("2026-11-28T12:00:00Z"));
    expect(await framePage()).not.toContain("data-away-until");
  });
});
