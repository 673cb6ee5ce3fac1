import { useState } from "preact/hooks";
import type { Chatbot } from "../../../../gen/aiagent/v1/account_service_pb.js";
import { contrastRatio, textOn } from "../../../domain/account/appearance.js";
import { accounts } from "../api.js";
import { ErrorNote, Field, Link, Loading, PageTitle, useAction, useLoad } from "../ui.js";
import { AgentPicture } from "./agent-picture.js";

/** The frame's languages, named in their own words. */
const LANGUAGES: [string, string][] = [
  ["en", "English"],
  ["de", "Deutsch"],
  ["fr", "Français"],
  ["es", "Español"],
  ["ar", "العربية"],
];

interface Texts {
  greeting: string;
  awayMessage: string;
  ratingPrompt: string;
}
const NO_TEXTS: Texts = { greeting: "", awayMessage: "", ratingPrompt: "" };

const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const DEFAULT_COLOR = "#2456d6";
const FRAME_BACKGROUND = { light: "#ffffff", dark: "#12161c" };

interface Day {
  open: boolean;
  from: string;
  to: string;
}

/** A chatbot's look in the frame and its team's office hours, with a preview that follows every change. */
export function ChatbotAppearancePage({ chatbotId }: { chatbotId: string }) {
  const [loaded, reload] = useLoad(async () => (await accounts.getChatbot({ chatbotId })).data, [chatbotId]);
  if (loaded.state === "loading") return <Loading what="the chatbot" />;
  if (loaded.state === "error") return <ErrorNote error={loaded.error} onRetry={reload} />;
  return <AppearanceForm chatbot={loaded.data!} />;
}

function AppearanceForm({ chatbot }: { chatbot: Chatbot }) {
  const a = chatbot.appearance;
  const [color, setColor] = useState(a?.brandColor || DEFAULT_COLOR);
  const [agentName, setAgentName] = useState(a?.agentName ?? "");
  const [greeting, setGreeting] = useState(a?.greeting ?? "");
  const [theme, setTheme] = useState(a?.theme || "auto");
  const [picture, setPicture] = useState(chatbot.pictureUrl);
  const hours = a?.officeHours;
  const [useHours, setUseHours] = useState(hours !== undefined);
  const [timeZone, setTimeZone] = useState(hours?.timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone);
  const [days, setDays] = useState<Day[]>(
    DAYS.map((_, i) => {
      const d = hours?.intervals.find((x) => x.weekday === i + 1);
      return d ? { open: true, from: d.open, to: d.close } : { open: !hours && i < 5, from: "09:00", to: "17:00" };
    }),
  );
  const [defaultLocale, setDefaultLocale] = useState(a?.defaultLocale || "en");
  const [texts, setTexts] = useState<Record<string, Texts>>(
    Object.fromEntries(
      LANGUAGES.map(([l]) => {
        const t = a?.texts.find((x) => x.locale === l);
        return [l, t ? { greeting: t.greeting, awayMessage: t.awayMessage, ratingPrompt: t.ratingPrompt } : NO_TEXTS];
      }),
    ),
  );
  const [editing, setEditing] = useState(a?.defaultLocale || "en");
  const setText = (k: keyof Texts, v: string) => setTexts({ ...texts, [editing]: { ...texts[editing]!, [k]: v } });
  const [saved, setSaved] = useState(false);
  const act = useAction();
  const setDay = (i: number, d: Partial<Day>) => setDays(days.map((x, j) => (j === i ? { ...x, ...d } : x)));

  const background = theme === "dark" ? FRAME_BACKGROUND.dark : FRAME_BACKGROUND.light;
  const against = contrastRatio(color, background);
  const text = textOn(color);
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void act.run(async () => {
      await accounts.updateChatbot({
        chatbotId: chatbot.chatbotId,
        appearance: {
          brandColor: color,
          agentName,
          greeting,
          theme,
          defaultLocale,
          // Every language: an empty one is removed.
          texts: LANGUAGES.map(([locale]) => ({ locale, ...texts[locale]! })),
          ...(useHours
            ? {
                officeHours: {
                  timeZone,
                  intervals: days.flatMap((d, i) => (d.open ? [{ weekday: i + 1, open: d.from, close: d.to }] : [])),
                },
              }
            : { clearOfficeHours: true }),
        },
      });
      setSaved(true);
    });
  };
  const name = agentName || chatbot.name;
  return (
    <section>
      <PageTitle>{`Appearance of ${chatbot.name}`}</PageTitle>
      <p>
        <Link href={`/chatbots/${chatbot.chatbotId}`}>Back to its settings</Link>
      </p>
      <div class="appearance">
        <form class="card" onSubmit={submit}>
          <Field label="Brand color" id="look-color" hint="The header, the customer's messages and the send button.">
            <input
              id="look-color"
              type="color"
              aria-describedby="look-color-hint look-color-contrast"
              value={color}
              onInput={(e) => setColor(e.currentTarget.value)}
            />
          </Field>
          <p
            id="look-color-contrast"
            class={against < 3 ? "warning" : "muted"}
            role={against < 3 ? "alert" : undefined}
          >
            {against < 3
              ? `Low contrast: ${color} stands only ${against.toFixed(1)}:1 against the chat's background; ` +
                "WCAG AA asks 3:1 for buttons. Choose a darker or stronger color."
              : `Contrast ${against.toFixed(1)}:1 against the chat's background; its text is ` +
                `${text === "#000000" ? "black" : "white"} (${contrastRatio(color, text).toFixed(1)}:1).`}
          </p>
          <Field label="Agent name" id="look-agent" hint={`Shown in the chat's header; empty: ${chatbot.name}.`}>
            <input
              id="look-agent"
              maxLength={80}
              aria-describedby="look-agent-hint"
              value={agentName}
              onInput={(e) => setAgentName(e.currentTarget.value)}
            />
          </Field>
          <AgentPicture chatbotId={chatbot.chatbotId} url={picture} name={name} onUrl={setPicture} />
          <Field label="Greeting" id="look-greeting" hint="The first line a customer sees before writing.">
            <textarea
              id="look-greeting"
              maxLength={500}
              rows={3}
              aria-describedby="look-greeting-hint"
              value={greeting}
              onInput={(e) => setGreeting(e.currentTarget.value)}
            />
          </Field>
          <fieldset class="languages">
            <legend>Languages</legend>
            <Field
              label="Default language"
              id="look-locale"
              hint="The chat's language when neither your page's locale option nor the visitor's browser names one it speaks."
            >
              <LanguageSelect id="look-locale" value={defaultLocale} onChange={setDefaultLocale} />
            </Field>
            <Field
              label="Texts in"
              id="look-texts-locale"
              hint="The greeting, away message and rating prompt in each language; left empty, the default language's are shown, else the chat's own words."
            >
              <LanguageSelect id="look-texts-locale" value={editing} onChange={setEditing} />
            </Field>
            <div lang={editing} dir={editing === "ar" ? "rtl" : "ltr"}>
              <Field label="Greeting in this language" id="look-text-greeting">
                <textarea
                  id="look-text-greeting"
                  maxLength={500}
                  rows={2}
                  value={texts[editing]!.greeting}
                  onInput={(e) => setText("greeting", e.currentTarget.value)}
                />
              </Field>
              <Field label="Away message in this language" id="look-text-away">
                <textarea
                  id="look-text-away"
                  maxLength={500}
                  rows={2}
                  value={texts[editing]!.awayMessage}
                  onInput={(e) => setText("awayMessage", e.currentTarget.value)}
                />
              </Field>
              <Field label="Rating prompt in this language" id="look-text-rating">
                <input
                  id="look-text-rating"
                  maxLength={120}
                  value={texts[editing]!.ratingPrompt}
                  onInput={(e) => setText("ratingPrompt", e.currentTarget.value)}
                />
              </Field>
            </div>
          </fieldset>
          <Field label="Theme" id="look-theme">
            <select id="look-theme" value={theme} onChange={(e) => setTheme(e.currentTarget.value)}>
              <option value="auto">Follow the visitor's light or dark setting</option>
              <option value="light">Always light</option>
              <option value="dark">Always dark</option>
            </select>
          </Field>
          <fieldset class="hours">
            <legend>Office hours</legend>
            <label class="check">
              <input type="checkbox" checked={useHours} onChange={(e) => setUseHours(e.currentTarget.checked)} />
              The team answers only at these times (outside them the chat says when it is back)
            </label>
            {useHours && (
              <>
                <Field label="Time zone" id="look-tz" hint="An IANA time zone, e.g. Europe/Berlin.">
                  <input
                    id="look-tz"
                    aria-describedby="look-tz-hint"
                    value={timeZone}
                    onInput={(e) => setTimeZone(e.currentTarget.value)}
                  />
                </Field>
                {days.map((d, i) => (
                  <div class="hours__day" key={DAYS[i]}>
                    <label class="check">
                      <input
                        type="checkbox"
                        checked={d.open}
                        onChange={(e) => setDay(i, { open: e.currentTarget.checked })}
                      />
                      {DAYS[i]}
                    </label>
                    <DayTime
                      label={`${DAYS[i]} opens at`}
                      value={d.from}
                      disabled={!d.open}
                      onValue={(from) => setDay(i, { from })}
                    />
                    <DayTime
                      label={`${DAYS[i]} closes at`}
                      value={d.to}
                      disabled={!d.open}
                      onValue={(to) => setDay(i, { to })}
                    />
                  </div>
                ))}
              </>
            )}
          </fieldset>
          {act.error !== undefined && <ErrorNote error={act.error} />}
          <p class="actions">
            <button class="button button--primary" type="submit" disabled={act.busy}>
              Save appearance
            </button>
            {saved && <span role="status">Saved.</span>}
          </p>
        </form>
        <figure class="preview" aria-label="Preview">
          <div class={`preview__frame preview__frame--${theme === "dark" ? "dark" : "light"}`}>
            <div class="preview__head">
              <span class="preview__avatar" style={{ background: color, color: text }} aria-hidden="true">
                {picture ? <img src={picture} alt={name} /> : ([...name.trim()][0]?.toUpperCase() ?? "?")}
              </span>
              <span>
                <strong>{name}</strong>
                <br />
                <small>AI assistant</small>
              </span>
            </div>
            <p class="preview__greeting" lang={editing} dir={editing === "ar" ? "rtl" : "ltr"}>
              {texts[editing]!.greeting ||
                texts[defaultLocale]?.greeting ||
                greeting ||
                `Ask ${name} a question to start the conversation.`}
            </p>
            <p class="preview__bubble" style={{ background: color, color: text }}>
              Hello! Where is my order?
            </p>
            <div class="preview__reply">
              {picture && <img src={picture} alt={name} data-testid="preview-agent-picture" />}
              <p class="preview__agent">It left our warehouse this morning.</p>
            </div>
          </div>
          <figcaption class="muted">Preview: how the chat looks with these settings (saved or not).</figcaption>
        </figure>
      </div>
    </section>
  );
}

/** One end of a day's opening hours: a time input named for screen readers by its day and end. */
function DayTime(props: { label: string; value: string; disabled: boolean; onValue: (v: string) => void }) {
  return (
    <label>
      <span class="sr-only">{props.label}</span>
      <input
        type="time"
        value={props.value}
        disabled={props.disabled}
        onInput={(e) => props.onValue(e.currentTarget.value)}
      />
    </label>
  );
}

/** A choice of one of the frame's languages (its hint is the field's, `${id}-hint`). */
function LanguageSelect(p: { id: string; value: string; onChange: (locale: string) => void }) {
  return (
    <select
      id={p.id}
      aria-describedby={`${p.id}-hint`}
      value={p.value}
      onChange={(e) => p.onChange(e.currentTarget.value)}
    >
      {LANGUAGES.map(([l, n]) => (
        <option key={l} value={l}>
          {n}
        </option>
      ))}
    </select>
  );
}
