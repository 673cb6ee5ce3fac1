/** How much data one seeded account gets, and the sizes the bench names. */

export interface SeedSize {
  contacts: number;
  conversations: number;
  messages: number;
  /** Messages of the one long conversation (part of `messages`; 0 for none). */
  longConversation: number;
  /** Conversations of SAMPLE_LENGTH messages, one per sample user, for reading pages (part of `messages`). */
  samples: number;
  /** Further accounts of SMALL_ACCOUNT_CONTACTS contacts each, so the account is not alone in the file. */
  smallAccounts: number;
}

/** The sizes `--scale` names. */
export const SCALES: Record<string, SeedSize> = {
  "1k": {
    contacts: 1_000,
    conversations: 2_000,
    messages: 10_000,
    longConversation: 2_020,
    samples: 32,
    smallAccounts: 1,
  },
  "10k": {
    contacts: 10_000,
    conversations: 20_000,
    messages: 100_000,
    longConversation: 10_020,
    samples: 64,
    smallAccounts: 2,
  },
  "100k": {
    contacts: 100_000,
    conversations: 200_000,
    messages: 1_000_000,
    longConversation: 100_020,
    samples: 64,
    smallAccounts: 3,
  },
  // The growth point: as many contacts again tenfold, lighter per contact so it builds in well under a minute.
  "1m": {
    contacts: 1_000_000,
    conversations: 1_000_000,
    messages: 1_200_000,
    longConversation: 0,
    samples: 16,
    smallAccounts: 0,
  },
};

/** The size a --scale names. */
export function seedSize(scale: string): SeedSize {
  const size = SCALES[scale.toLowerCase()];
  if (!size) throw new Error(`--scale must be one of ${Object.keys(SCALES).join(", ")}`);
  return size;
}
