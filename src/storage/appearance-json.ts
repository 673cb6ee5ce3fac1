import { type ChatbotAppearance, DEFAULT_APPEARANCE } from "../domain/account/appearance.js";

/** A chatbot's appearance as both back ends store it: one JSON text, parts left out meaning the default. */
export const appearanceToJson = (a: ChatbotAppearance): string => JSON.stringify(a);

export const appearanceFromJson = (text: string): ChatbotAppearance => ({
  ...DEFAULT_APPEARANCE,
  ...(JSON.parse(text) as Partial<ChatbotAppearance>),
});
