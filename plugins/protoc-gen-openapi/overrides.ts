/**
 * Facts the contract's comments do not state in words the plugin reads, keyed by the field's full name.
 * Keep this small: prefer writing the fact into the proto comment ("Optional.", "1 to 100", "when absent").
 */
export const FIELD_OVERRIDES: Readonly<Record<string, { optional?: boolean }>> = {
  // The documented contract lists `search` as optional with no default; its comment only describes the match.
  "aiagent.v1.GetContactConversationsRequest.search": { optional: true },
};
