import { type Locale, localeOf, RTL_LOCALES } from "../account/languages.js";
import type { ChatbotRecord } from "../account/repository.js";
import type { ActivityRecord, ConversationRecord, ConversationRef, MessageRecord } from "../conversation/repository.js";
import type { ContactRecord } from "../privacy/repository.js";
import type { TranscriptMailData } from "./mail-desk.js";
import { type Composed, escapeHtml, type FooterWords } from "./mailer.js";
import type { MailRecord } from "./repository.js";

export interface TranscriptMailDeps {
  conversations: {
    byId(conversationId: string): Promise<ConversationRecord | undefined>;
    messages(
      conv: ConversationRef,
      limit: number,
      offset: number,
    ): Promise<{ messages: MessageRecord[]; hasMore: boolean }>;
  };
  chatbots: { byId(chatbotId: string): Promise<ChatbotRecord | undefined> };
  activities: { forConversation(conversationId: string, limit: number): Promise<ActivityRecord[]> };
  contact(accountId: string, userId: string): Promise<ContactRecord | undefined>;
}

/** A transcript's own words in one language ({bot}, {at}, {n}: filled in). */
interface TranscriptWords {
  footer: FooterWords;
  subject: string;
  intro: string;
  omitted: string;
  you: string;
  team: string;
}

/** The transcript's words in each of the frame's languages: the customer reads it in the one they chatted in. */
export const TRANSCRIPT_WORDS: Record<Locale, TranscriptWords> = {
  en: {
    footer: {
      text: "To receive no more e-mail from us:",
      html: "To receive no more e-mail from us,",
      link: "unsubscribe",
    },
    subject: "Your conversation with {bot}",
    intro: "Your conversation with {bot}, started {at}.",
    omitted: "({n} earlier messages are not included.)",
    you: "You",
    team: "Support team",
  },
  de: {
    footer: {
      text: "Um keine E-Mails mehr von uns zu erhalten:",
      html: "Um keine E-Mails mehr von uns zu erhalten,",
      link: "abmelden",
    },
    subject: "Ihr Gespräch mit {bot}",
    intro: "Ihr Gespräch mit {bot}, begonnen am {at}.",
    omitted: "({n} frühere Nachrichten sind nicht enthalten.)",
    you: "Sie",
    team: "Support-Team",
  },
  fr: {
    footer: {
      text: "Pour ne plus recevoir d’e-mails de notre part :",
      html: "Pour ne plus recevoir d’e-mails de notre part,",
      link: "désabonnez-vous",
    },
    subject: "Votre conversation avec {bot}",
    intro: "Votre conversation avec {bot}, commencée le {at}.",
    omitted: "({n} messages plus anciens ne sont pas inclus.)",
    you: "Vous",
    team: "Équipe d’assistance",
  },
  es: {
    footer: {
      text: "Para no recibir más correos nuestros:",
      html: "Para no recibir más correos nuestros,",
      link: "cancela la suscripción",
    },
    subject: "Tu conversación con {bot}",
    intro: "Tu conversación con {bot}, iniciada el {at}.",
    omitted: "({n} mensajes anteriores no se incluyen.)",
    you: "Tú",
    team: "Equipo de soporte",
  },
  ar: {
    footer: { text: "لإيقاف تلقي رسائلنا:", html: "لإيقاف تلقي رسائلنا،", link: "ألغِ الاشتراك" },
    subject: "محادثتك مع {bot}",
    intro: "محادثتك مع {bot}، بدأت في {at}.",
    omitted: "(لم يتم تضمين {n} من الرسائل السابقة.)",
    you: "أنت",
    team: "فريق الدعم",
  },
};

const fill = (t: string, v: Record<string, string>) => t.replace(/\{(\w+)\}/g, (m, k: string) => v[k] ?? m);

const PAGE = 200;
/** The most messages a transcript holds (the newest are kept when a conversation is longer). */
const MAX_MESSAGES = 2000;
/** The most characters of messages a transcript quotes (the message is bounded by the relay's size cap). */
const MAX_CHARS = 150_000;

/** Who wrote a message, by name: the customer, the agent (its appearance's name), or the person who held it then. */
function authors(
  chatbot: ChatbotRecord,
  contact: ContactRecord | undefined,
  activity: ActivityRecord[],
  words: TranscriptWords,
) {
  const agent = chatbot.appearance.agentName || chatbot.name;
  const customer = contact?.contactName || words.you;
  // Who held the conversation at an instant, from its timeline (taken over, assigned, released).
  const holders = activity
    .filter((a) => a.kind === "taken_over" || a.kind === "assigned" || a.kind === "released")
    .map((a) => ({ at: a.createdAt, name: a.kind === "released" || a.toEmail === "ai_agent" ? "" : a.toName }));
  const operatorAt = (at: number) => {
    let name = "";
    for (const h of holders) if (h.at <= at) name = h.name;
    return name || words.team;
  };
  return (m: MessageRecord) => (m.role === "user" ? customer : m.role === "operator" ? operatorAt(m.createdAt) : agent);
}

/**
 * The mail of a transcript: every message of the conversation (never the team's internal notes, which live apart
 * from messages), each with its author's name and its time (Intl, in the team's time zone when office hours name
 * one, else UTC), in the customer's language: the one asked for (the frame's), else the chatbot's default. Made when
 * it is sent, so it holds the conversation as it then stands.
 */
export function transcriptMail(d: TranscriptMailDeps): (m: MailRecord) => Promise<Composed> {
  return async (m) => {
    const r = JSON.parse(m.data) as TranscriptMailData;
    const conv = await d.conversations.byId(r.conversationId);
    if (!conv || conv.accountId !== m.accountId) return { cancel: "the conversation is gone" };
    const chatbot = await d.chatbots.byId(conv.chatbotId);
    if (!chatbot || chatbot.accountId !== m.accountId) return { cancel: "the chatbot is gone" };
    const messages: MessageRecord[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await d.conversations.messages(conv, PAGE, offset);
      messages.push(...page.messages);
      if (!page.hasMore || page.messages.length === 0) break;
    }
    let kept = messages.slice(-MAX_MESSAGES);
    let chars = 0;
    for (let i = kept.length - 1; i >= 0; i--) {
      chars += kept[i]!.content.length;
      if (chars > MAX_CHARS) {
        kept = kept.slice(i + 1);
        break;
      }
    }
    const omitted = messages.length - kept.length;
    const locale = r.locale ?? localeOf(chatbot.appearance.defaultLocale) ?? "en";
    const words = TRANSCRIPT_WORDS[locale];
    const who = authors(
      chatbot,
      await d.contact(m.accountId, conv.userId),
      await d.activities.forConversation(conv.conversationId, 1000),
      words,
    );
    const timeZone = chatbot.appearance.officeHours?.timeZone || "UTC";
    const when = new Intl.DateTimeFormat(locale, {
      dateStyle: "medium",
      timeStyle: "short",
      timeZone,
    });
    const at = (t: number) => `${when.format(new Date(t))} (${timeZone})`;
    const intro = fill(words.intro, { bot: chatbot.name, at: at(conv.createdAt) });
    const skipped = omitted > 0 ? fill(words.omitted, { n: new Intl.NumberFormat(locale).format(omitted) }) : "";
    const text =
      `${intro}\n${skipped ? `${skipped}\n` : ""}\n` +
      kept.map((x) => `${who(x)} · ${at(x.createdAt)}\n${x.content}\n`).join("\n");
    const html =
      `<p>${escapeHtml(intro)}</p>${skipped ? `<p>${escapeHtml(skipped)}</p>` : ""}` +
      kept
        .map(
          (x) =>
            `<div style="margin:0 0 12px"><div style="font-size:12px;color:#555"><strong>${escapeHtml(who(x))}</strong>` +
            ` · ${escapeHtml(at(x.createdAt))}</div><div style="white-space:pre-wrap">${escapeHtml(x.content)}</div></div>`,
        )
        .join("");
    const dir = RTL_LOCALES.has(locale) ? "rtl" : "ltr";
    return {
      subject: fill(words.subject, { bot: chatbot.name }),
      text,
      html: `<div lang="${locale}" dir="${dir}">${html}</div>`,
      footer: words.footer,
    };
  };
}
