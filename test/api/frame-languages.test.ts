import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { idToken, issueTokens } from "../helpers/flows.js";
import { requestJson } from "../helpers/http.js";

// Issue 46, item 3: the frame's page in the customer's language (the host page's locale option, else the browser's
// languages, else the chatbot's default), and the chatbot's own texts per language, set through the account API.

const fx = serverForFile();

const auth = async () => ({ authorization: `Bearer ${await idToken(fx.s.url, fx.a)}` });
const patch = async (body: unknown) =>
  requestJson(fx.s.url, "PATCH", `/v1/account/chatbots/${fx.a.chatbotId}`, await auth(), body);
const get = async () => requestJson(fx.s.url, "GET", `/v1/account/chatbots/${fx.a.chatbotId}`, await auth());

/** The frame's page with `locale` in its address (when given) and the browser's Accept-Language (when given). */
async function frame(locale?: string, acceptLanguage?: string): Promise<{ status: number; html: string }> {
  const t = await issueTokens(fx.s.url, fx.a, "language-visitor");
  const q = new URLSearchParams({ user_id: "language-visitor", access_token: t.access_token });
  if (locale !== undefined) q.set("locale", locale);
  const r = await fetch(`${fx.s.url}/chatbot-iframe/${fx.a.chatbotId}?${q}`, {
    headers: acceptLanguage ? { "accept-language": acceptLanguage } : {},
  });
  return { status: r.status, html: await r.text() };
}
const langOf = (html: string) => /<html lang="(\w+)" dir="(\w+)"/.exec(html)?.slice(1);
/** The script's words the page carries (the one language in use). */
const stringsOf = (html: string) =>
  JSON.parse(/<script type="application\/json" id="strings">(.*?)<\/script>/s.exec(html)![1]!);

describe("the frame's language", () => {
  it("is English with nothing said, and each of the five languages when the host page names it", async () => {
    expect(langOf((await frame()).html)).toEqual(["en", "ltr"]);
    const expected: Record<string, [string, string]> = {
      en: ["ltr", 'placeholder="Write a message…"'],
      de: ["ltr", 'placeholder="Nachricht schreiben…"'],
      fr: ["ltr", 'placeholder="Écrivez un message…"'],
      es: ["ltr", 'placeholder="Escribe un mensaje…"'],
      ar: ["rtl", 'placeholder="اكتب رسالة…"'],
    };
    for (const [locale, [dir, placeholder]] of Object.entries(expected)) {
      const { status, html } = await frame(locale);
      expect(status).toBe(200);
      expect(langOf(html)).toEqual([locale, dir]);
      expect(html).toContain(placeholder);
      // Only the language in use travels: no other language's words are in the page.
      for (const other of Object.values(expected)) if (other[1] !== placeholder) expect(html).not.toContain(other[1]);
    }
  });

  it("follows the browser's languages, by their order and weights, when the host page names none", async () => {
    expect(langOf((await frame(undefined, "de-AT,de;q=0.9,en;q=0.8")).html)?.[0]).toBe("de");
    // A language the frame does not speak is passed over for the next one the browser accepts.
    expect(langOf((await frame(undefined, "ja,fr-CA;q=0.7,en;q=0.5")).html)?.[0]).toBe("fr");
    expect(langOf((await frame(undefined, "en;q=0.2,es;q=0.9")).html)?.[0]).toBe("es");
    expect(langOf((await frame(undefined, "ar-EG")).html)).toEqual(["ar", "rtl"]);
  });

  it("takes the host page's locale over the browser's languages", async () => {
    expect(langOf((await frame("fr", "de-DE,de;q=0.9")).html)?.[0]).toBe("fr");
    expect(langOf((await frame("es-MX", "de-DE")).html)?.[0]).toBe("es");
    // A locale it does not speak falls back to the browser's.
    expect(langOf((await frame("ja", "de-DE")).html)?.[0]).toBe("de");
  });

  it("falls back to the chatbot's default language, set through the account API", async () => {
    const r = await patch({ appearance: { default_locale: "de" } });
    expect(r.status).toBe(200);
    expect(r.body.data.appearance.default_locale).toBe("de");
    expect(langOf((await frame()).html)?.[0]).toBe("de");
    expect(langOf((await frame(undefined, "ja,zh;q=0.5")).html)?.[0]).toBe("de");
    expect(langOf((await frame(undefined, "es")).html)?.[0]).toBe("es");
    expect(langOf((await frame("ar", "es")).html)?.[0]).toBe("ar");
    expect((await patch({ appearance: { default_locale: "en" } })).status).toBe(200);
    expect(langOf((await frame(undefined, "ja")).html)?.[0]).toBe("en");
  });

  it("refuses a locale that is not a language tag with a page in the frame's language that names it", async () => {
    for (const bad of ["<script>", "de_DE", "x".repeat(40), "de-", "1234"]) {
      const { status, html } = await frame(bad, "fr");
      expect(status, bad).toBe(400);
      expect(html).toContain("locale n’est pas une étiquette de langue");
      expect(html).not.toContain("<script>");
    }
  });

  it("says an unknown chat in the browser's language", async () => {
    const r = await fetch(`${fx.s.url}/chatbot-iframe/00000000-0000-4000-8000-000000000000?locale=es`);
    expect(r.status).toBe(404);
    const html = await r.text();
    expect(langOf(html)?.[0]).toBe("es");
    expect(html).toContain("Chat no encontrado");
  });
});

describe("the chatbot's own texts per language", () => {
  it("are set per language, answered, and shown in the frame of that language, else the default language's", async () => {
    const r = await patch({
      appearance: {
        greeting: "Hello! Ask us about orders.",
        texts: [
          { locale: "de", greeting: "Hallo! Fragen Sie uns zu Bestellungen.", rating_prompt: "Wie fanden Sie uns?" },
          { locale: "ar", greeting: "مرحبًا! اسألنا عن الطلبات.", away_message: "فريقنا في إجازة." },
          { locale: "en", rating_prompt: "Rate us!" },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.appearance.texts).toEqual(
      expect.arrayContaining([
        {
          locale: "de",
          greeting: "Hallo! Fragen Sie uns zu Bestellungen.",
          away_message: "",
          rating_prompt: "Wie fanden Sie uns?",
        },
        { locale: "en", greeting: "", away_message: "", rating_prompt: "Rate us!" },
      ]),
    );
    const de = (await frame("de")).html;
    expect(de).toContain("Hallo! Fragen Sie uns zu Bestellungen.");
    expect(stringsOf(de).ratingPrompt).toBe("Wie fanden Sie uns?");
    // Not written in French: the default language's (English) greeting and rating prompt, in the French frame.
    const fr = (await frame("fr")).html;
    expect(fr).toContain("Hello! Ask us about orders.");
    expect(stringsOf(fr).ratingPrompt).toBe("Rate us!");
    expect(stringsOf(fr).sendRating).toBe("Envoyer la note");
    const ar = (await frame("ar")).html;
    expect(ar).toContain("مرحبًا! اسألنا عن الطلبات.");
    expect(stringsOf(ar).away).toBe("فريقنا في إجازة.");
    expect(stringsOf(ar).awayUntil).toBe("فريقنا في إجازة. نعود: {when}.");
  });

  it("keeps the languages left out of an update, and removes one given with empty texts", async () => {
    const r = await patch({ appearance: { texts: [{ locale: "de", greeting: "", rating_prompt: "" }] } });
    expect(r.status).toBe(200);
    const locales = r.body.data.appearance.texts.map((t: { locale: string }) => t.locale).sort();
    expect(locales).toEqual(["ar", "en"]);
    expect((await frame("de")).html).toContain("Hello! Ask us about orders.");
    // An appearance as read can be sent back as it is.
    const read = (await get()).body.data.appearance;
    const back = await patch({ appearance: read });
    expect(back.status).toBe(200);
    expect(back.body.data.appearance).toEqual(read);
    // An update that says nothing of texts leaves them as they are.
    expect((await patch({ appearance: { theme: "light" } })).body.data.appearance.texts).toHaveLength(2);
  });

  it("another account's admin cannot read or set them: not_found, and nothing changes", async () => {
    const before = (await get()).body.data.appearance;
    const other = await fx.s.account();
    const auth = { authorization: `Bearer ${await idToken(fx.s.url, other)}` };
    const path = `/v1/account/chatbots/${fx.a.chatbotId}`;
    const r = await requestJson(fx.s.url, "PATCH", path, auth, {
      appearance: { default_locale: "ar", texts: [{ locale: "en", greeting: "Hijacked" }] },
    });
    expect(r.status).toBe(404);
    expect((await requestJson(fx.s.url, "GET", path, auth)).status).toBe(404);
    expect((await get()).body.data.appearance).toEqual(before);
    expect((await frame("en")).html).not.toContain("Hijacked");
  });

  it("refuses a language it does not speak, a language twice, and over-long texts, naming them, and changes nothing", async () => {
    const before = (await get()).body.data.appearance;
    const cases: [unknown, string][] = [
      [{ default_locale: "it" }, "default_locale"],
      [{ texts: [{ locale: "it", greeting: "Ciao" }] }, "texts[0].locale"],
      [{ texts: [{ locale: "", greeting: "Hi" }] }, "texts[0].locale"],
      [
        {
          texts: [
            { locale: "fr", greeting: "Bonjour" },
            { locale: "fr", greeting: "Salut" },
          ],
        },
        "texts[1].locale",
      ],
      [{ texts: [{ locale: "fr", greeting: "x".repeat(501) }] }, "greeting"],
      [{ texts: [{ locale: "fr", away_message: "x".repeat(501) }] }, "away_message"],
      [{ texts: [{ locale: "fr", rating_prompt: "x".repeat(121) }] }, "rating_prompt"],
      [{ texts: [{ locale: "fr", rating_prompt: "two\nlines" }] }, "rating_prompt"],
    ];
    for (const [appearance, names] of cases) {
      const r = await patch({ appearance });
      expect(r.status, JSON.stringify(appearance)).toBe(400);
      expect(r.body.message).toContain(names);
    }
    expect((await get()).body.data.appearance).toEqual(before);
  });
});
