import { mkdirSync } from "node:fs";
import type { Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Locale } from "../../src/domain/account/languages.js";
import { CATALOGUES } from "../../src/frame/i18n/catalogue.js";
import { hostPageForFile } from "../helpers/browser-fixtures.js";
import { idToken } from "../helpers/flows.js";
import { requestJson } from "../helpers/http.js";
import { suiteCanRun } from "../helpers/system-packages.js";
import { chatFrame, newContext, typeMessage } from "./browser.js";

// Issue 46, item 3: the frame in each of its five languages (Arabic right to left), chosen by the host script's
// locale option, else the browser's languages, else the chatbot's default; dates, times and office hours through Intl.

const canRun = suiteCanRun(import.meta.filename, ["chromium"]);

// /?locale=de&launcher=1: the page mounts the chat (or the launcher) with the host script's locale option, if any.
const fx = hostPageForFile(canRun, "language-visitor", ({ query: q, frameUrl, appUrl }) => {
  const options = { frameUrl, ...(q.get("locale") ? { locale: q.get("locale") } : {}) };
  const call = q.get("launcher")
    ? `AiAgent.launcher({ ...${JSON.stringify(options)}, refresh: async () => null, open: true })`
    : `AiAgent.mount(document.getElementById("chat"), { ...${JSON.stringify(options)}, refresh: async () => null })`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title></head>
<body><div id="chat" style="width: 380px; height: 560px"></div>
<script src="${appUrl}/embed/v1.js"></script>
<script>window.chat = ${call};</script>
</body></html>`;
});

const patchAppearance = async (appearance: unknown) => {
  const auth = { authorization: `Bearer ${await idToken(fx.service.url, fx.account)}` };
  const r = await requestJson(fx.service.url, "PATCH", `/v1/account/chatbots/${fx.account.chatbotId}`, auth, {
    appearance,
  });
  expect(r.status).toBe(200);
};

/** What the frame says in its language: the words a test looks for. */
const WORDS: Record<string, { placeholder: string; youSaid: string; rating: string }> = {
  en: { placeholder: "Write a message…", youSaid: "You said:", rating: "Send rating" },
  de: { placeholder: "Nachricht schreiben…", youSaid: "Sie schrieben:", rating: "Bewertung senden" },
  fr: { placeholder: "Écrivez un message…", youSaid: "Vous avez écrit :", rating: "Envoyer la note" },
  es: { placeholder: "Escribe un mensaje…", youSaid: "Escribiste:", rating: "Enviar valoración" },
  ar: { placeholder: "اكتب رسالة…", youSaid: "كتبتَ:", rating: "إرسال التقييم" },
};

const language = (frame: Frame) =>
  frame.evaluate(() => ({
    lang: document.documentElement.lang,
    dir: document.documentElement.dir,
    direction: getComputedStyle(document.body).direction,
    placeholder: (document.getElementById("input") as HTMLTextAreaElement).placeholder,
  }));

/** The launcher's button name (in its shadow root). */
const launcherName = (page: Page) => page.locator("aiagent-launcher button .sr").textContent();

describe.runIf(canRun)("the frame in the customer's language", () => {
  describe("in each of the five languages", () => {
    beforeAll(async () => {
      if (!canRun) return;
      // A Saturday: the team (Monday to Friday, 9 to 5 in Berlin) is away, and the frame says until when.
      fx.service.clock.freezeAt(Date.parse("2026-11-28T11:00:00Z"));
      await patchAppearance({
        office_hours: {
          time_zone: "Europe/Berlin",
          intervals: [1, 2, 3, 4, 5].map((weekday) => ({ weekday, open: "09:00", close: "17:00" })),
        },
      });
    });
    afterAll(async () => {
      if (!canRun) return;
      await patchAppearance({ clear_office_hours: true });
      fx.service.clock.resume();
    });
    for (const locale of ["en", "de", "fr", "es", "ar"])
      test(`renders in ${locale}${locale === "ar" ? ", right to left" : ""}, with times and office hours through Intl`, async () => {
        const context = await newContext(fx.browser, { width: 520, height: 640 });
        const page = await context.newPage();
        await page.goto(`${fx.hostUrl}/?locale=${locale}`);
        const frame = await chatFrame(page);
        const l = await language(frame);
        expect(l).toEqual({
          lang: locale,
          dir: locale === "ar" ? "rtl" : "ltr",
          direction: locale === "ar" ? "rtl" : "ltr",
          placeholder: WORDS[locale]!.placeholder,
        });
        // The office hours: the Monday opening, written by Intl in the frame's language and the team's time zone.
        const away = frame.locator("#away");
        await away.waitFor();
        const when = await frame.evaluate(() =>
          new Intl.DateTimeFormat(document.documentElement.lang, {
            weekday: "long",
            hour: "numeric",
            minute: "2-digit",
            timeZoneName: "short",
            timeZone: "Europe/Berlin",
          }).format(new Date("2026-11-30T08:00:00.000Z")),
        );
        expect(await away.textContent()).toContain(when);
        // Nobody is online: the e-mail prompt asks for the customer's address, in the frame's language.
        const mail = CATALOGUES[locale as Locale].script;
        await frame.getByText(mail.mAsk).waitFor();
        expect(await frame.getByRole("textbox", { name: mail.mLabel }).count()).toBe(1);

        await typeMessage(frame, "How long does shipping take?");
        const reply = frame.locator(".msg--assistant", { hasText: "Orders ship within 2 business days" });
        await reply.waitFor();
        const mine = frame.locator(".msg--user").first();
        expect(await mine.locator(".sr-only").textContent()).toBe(WORDS[locale]!.youSaid);
        // The message's time: Intl's, in the frame's language.
        const time = mine.locator("time");
        const shown = await time.textContent();
        const expected = await time.evaluate((t) =>
          new Date((t as HTMLTimeElement).dateTime).toLocaleTimeString(document.documentElement.lang, {
            hour: "2-digit",
            minute: "2-digit",
          }),
        );
        expect(shown).toBe(expected);

        // The layout is mirrored right to left: the customer's message and the send button on the start side.
        const inputBox = (await frame.locator("#input").boundingBox())!;
        const sendBox = (await frame.locator("#send").boundingBox())!;
        const mineBox = (await mine.locator(".msg__bubble").boundingBox())!;
        const replyBox = (await reply.locator(".msg__bubble").boundingBox())!;
        if (locale === "ar") {
          expect(sendBox.x).toBeLessThan(inputBox.x);
          expect(mineBox.x).toBeLessThan(replyBox.x);
          // An English message in the Arabic frame still reads left to right, its question mark at its end.
          expect(await mine.locator(".msg__bubble").evaluate((b) => getComputedStyle(b).direction)).toBe("ltr");
        } else {
          expect(sendBox.x).toBeGreaterThan(inputBox.x);
          expect(mineBox.x).toBeGreaterThan(replyBox.x);
        }
        if (process.env.UPDATE_DOCS === "1") {
          const docs = new URL("../../docs/", import.meta.url);
          mkdirSync(docs, { recursive: true });
          await page
            .locator("#chat")
            .screenshot({ path: new URL(`frame-${locale}.png`, docs).pathname, animations: "disabled" });
        }
        await context.close();
      });
  });

  test("follows the browser's languages, and the host script's locale option wins over them", async () => {
    const context = await fx.browser.newContext({ locale: "de-DE", viewport: { width: 900, height: 720 } });
    context.setDefaultTimeout(10_000);
    try {
      const page = await context.newPage();
      await page.goto(`${fx.hostUrl}/?launcher=1`);
      let frame = await chatFrame(page);
      expect((await language(frame)).lang).toBe("de");
      expect(await launcherName(page)).toBe("Chat schließen");

      await page.goto(`${fx.hostUrl}/?launcher=1&locale=fr`);
      frame = await chatFrame(page);
      expect(await language(frame)).toMatchObject({ lang: "fr", placeholder: WORDS.fr!.placeholder });
      // The launcher speaks the option's language too.
      expect(await launcherName(page)).toBe("Fermer le chat");
      await page.locator("aiagent-launcher button").click();
      expect(await launcherName(page)).toBe("Discutez avec nous");
      expect(await page.locator("aiagent-launcher [role=dialog]").getAttribute("aria-label")).toBe("Chat");

      // A language the frame does not speak: the browser's, for the frame and the launcher alike.
      await page.goto(`${fx.hostUrl}/?launcher=1&locale=ja`);
      frame = await chatFrame(page);
      expect((await language(frame)).lang).toBe("de");
      expect(await launcherName(page)).toBe("Chat schließen");
    } finally {
      await context.close();
    }
  });

  test("falls back to the chatbot's default language, which the frame tells the launcher", async () => {
    await patchAppearance({ default_locale: "ar" });
    const context = await fx.browser.newContext({ locale: "ja-JP", viewport: { width: 900, height: 720 } });
    context.setDefaultTimeout(10_000);
    try {
      const page = await context.newPage();
      await page.goto(`${fx.hostUrl}/?launcher=1`);
      const frame = await chatFrame(page);
      expect(await language(frame)).toMatchObject({ lang: "ar", dir: "rtl" });
      // The host script could not know the chatbot's default: the frame told it.
      await page.waitForFunction(
        () =>
          document.querySelector("aiagent-launcher")?.shadowRoot?.querySelector("button .sr")?.textContent ===
          "إغلاق الدردشة",
      );
      expect(await page.locator("aiagent-launcher iframe").getAttribute("title")).toBe("الدردشة");
    } finally {
      await context.close();
      await patchAppearance({ default_locale: "en" });
    }
  });
});
