import type { ScriptStrings } from "../i18n/catalogue.js";

/**
 * The frame's words in its one language, written into the page by the server (`<script type="application/json"
 * id="strings">`): the script carries no catalogue of its own, so only the language in use is ever loaded.
 */
export const T: ScriptStrings = JSON.parse(document.getElementById("strings")?.textContent || "{}");

/** The page's language (the server chose it), for Intl's dates and times. */
export const LANG = document.documentElement.lang || "en";

/** Fills `{key}` in one of T's texts. */
export function f(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (m, k: string) => values[k] ?? m);
}
