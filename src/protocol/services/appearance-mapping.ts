import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  ChatbotAppearance as AppearanceMessage,
  ChatbotAppearanceSchema,
} from "../../../gen/aiagent/v1/account_service_pb.js";
import type { AppearanceInput, ChatbotAppearance } from "../../domain/account/appearance.js";

/** A chatbot's appearance as answered. */
export function appearanceOut(a: ChatbotAppearance): MessageInitShape<typeof ChatbotAppearanceSchema> {
  return {
    brandColor: a.brandColor,
    greeting: a.greeting,
    agentName: a.agentName,
    theme: a.theme,
    ...(a.officeHours ? { officeHours: a.officeHours } : {}),
    // Answered as "en" when unset, so an appearance read can be sent back as it is (the contract refuses "").
    defaultLocale: a.defaultLocale || "en",
    texts: Object.entries(a.texts).map(([locale, t]) => ({ locale, ...t })),
  };
}

/** An appearance change as asked for: the parts given; office hours set when given, removed with clear_office_hours. */
export function appearanceIn(m: AppearanceMessage | undefined): AppearanceInput | undefined {
  if (!m) return undefined;
  const hours = m.officeHours
    ? {
        timeZone: m.officeHours.timeZone,
        intervals: m.officeHours.intervals.map((i) => ({ weekday: i.weekday, open: i.open, close: i.close })),
      }
    : undefined;
  return {
    brandColor: m.brandColor,
    greeting: m.greeting,
    agentName: m.agentName,
    theme: m.theme,
    ...(m.clearOfficeHours ? { officeHours: null } : hours ? { officeHours: hours } : {}),
    defaultLocale: m.defaultLocale,
    texts: m.texts.map((t) => ({
      locale: t.locale,
      greeting: t.greeting,
      awayMessage: t.awayMessage,
      ratingPrompt: t.ratingPrompt,
    })),
  };
}
