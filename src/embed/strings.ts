/**
 * The host script's own words (the launcher's button and panel, the iframe's title) in the frame's five languages.
 * They are a few dozen words, inlined: fetching one language would cost more than carrying all five.
 */
interface EmbedStrings {
  /** The iframe's and the panel's accessible name. */
  chat: string;
  /** The launcher button's name. */
  label: string;
  close: string;
  /** "{label} ({n} new message…)", by Intl.PluralRules category (other when a category is missing). */
  unread: Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };
}

const STRINGS: Record<string, EmbedStrings> = {
  en: {
    chat: "Chat",
    label: "Chat with us",
    close: "Close the chat",
    unread: { one: "{label} ({n} new message)", other: "{label} ({n} new messages)" },
  },
  de: {
    chat: "Chat",
    label: "Schreiben Sie uns",
    close: "Chat schließen",
    unread: { one: "{label} ({n} neue Nachricht)", other: "{label} ({n} neue Nachrichten)" },
  },
  fr: {
    chat: "Chat",
    label: "Discutez avec nous",
    close: "Fermer le chat",
    unread: { one: "{label} ({n} nouveau message)", other: "{label} ({n} nouveaux messages)" },
  },
  es: {
    chat: "Chat",
    label: "Chatea con nosotros",
    close: "Cerrar el chat",
    unread: { one: "{label} ({n} mensaje nuevo)", other: "{label} ({n} mensajes nuevos)" },
  },
  ar: {
    chat: "الدردشة",
    label: "تحدّث معنا",
    close: "إغلاق الدردشة",
    unread: {
      one: "{label} (رسالة جديدة واحدة)",
      two: "{label} (رسالتان جديدتان)",
      few: "{label} ({n} رسائل جديدة)",
      many: "{label} ({n} رسالة جديدة)",
      other: "{label} ({n} رسالة جديدة)",
    },
  },
};

/** The frame's language for a tag ("de-AT" → "de"), or undefined when it speaks none that matches. */
export function embedLocale(tag: unknown): string | undefined {
  if (typeof tag !== "string") return undefined;
  const primary = tag.split("-")[0]!.toLowerCase();
  return Object.keys(STRINGS).includes(primary) ? primary : undefined;
}

/** The host page's choice, else the first of the browser's languages the frame speaks, else English. */
export function pickLocale(asked: string | undefined): string {
  return (
    embedLocale(asked) ??
    (typeof navigator === "undefined" ? [] : (navigator.languages ?? [navigator.language]))
      .map(embedLocale)
      .find((l) => l !== undefined) ??
    "en"
  );
}

export function stringsFor(locale: string): EmbedStrings {
  return STRINGS[locale] ?? STRINGS.en!;
}

/** The launcher button's name with `n` unread messages. */
export function unreadLabel(locale: string, label: string, n: number): string {
  const forms = stringsFor(locale).unread;
  const form = forms[new Intl.PluralRules(locale).select(n)] ?? forms.other;
  return form.replace("{label}", label).replace("{n}", n.toLocaleString(locale));
}
