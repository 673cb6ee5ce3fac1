/**
 * Our credential shapes: an API key, a refresh token, an invitation code, a launch code, a JWT (header.payload.signature, header starting `{"`), a
 * webhook signing secret.
 */
export const SECRET_SHAPES: readonly RegExp[] = [
  /cak_[A-Za-z0-9_-]{8,}/,
  /\brt_[A-Za-z0-9_-]{8,}/,
  /\binv_[A-Za-z0-9_-]{8,}/,
  /\blc_[A-Za-z0-9_-]{8,}/,
  /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
  /whsec_[A-Za-z0-9+/]{16,}/,
];

/** The first credential-shaped string in the text, if any. */
export function findSecretShape(text: string): string | undefined {
  for (const re of SECRET_SHAPES) {
    const m = re.exec(text);
    if (m) return m[0];
  }
  return undefined;
}

/** Our credentials' prefixes: a stored secret stripped of its prefix is still the secret. */
const PREFIXES = /^(?:cak_|rt_|inv_|lc_|whsec_)/;

/**
 * The plain encodings of a secret that a careless store could write instead of a hash: the secret itself, in
 * base64, base64url and hex, with and without its prefix, and its random part's bytes (base64url-decoded) in hex
 * and base64. Finding any of them at rest is finding the secret. Hex appears in lower case: compare case-insensitively.
 */
export function plainEncodings(secret: string): string[] {
  const forms = new Set<string>();
  const bodies = [secret, secret.replace(PREFIXES, "")];
  for (const body of bodies) {
    const bytes = Buffer.from(body, "utf8");
    forms.add(body);
    forms.add(bytes.toString("hex"));
    forms.add(bytes.toString("base64"));
    forms.add(bytes.toString("base64").replace(/=+$/, ""));
    forms.add(bytes.toString("base64url"));
    forms.add(encodeURIComponent(body));
    if (/^[A-Za-z0-9_-]+$/.test(body)) {
      const raw = Buffer.from(body, "base64url");
      forms.add(raw.toString("hex"));
      forms.add(raw.toString("base64"));
    }
  }
  // Too short a form would match by chance.
  return [...forms].filter((f) => f.length >= 12);
}

/**
 * The text with every base64, base64url or hex run decoded beside it: a secret that is only encoded (a "sealed"
 * value that is the plaintext in base64, a hex column) is then found as plainly as one stored in clear.
 */
export function withDecodedRuns(text: string): string {
  const base64 = (text.match(/[A-Za-z0-9+/_-]{16,}/g) ?? []).map((r) => Buffer.from(r, "base64").toString("latin1"));
  // A hex run at either alignment (a run may start one digit into a longer one).
  const hex = (text.match(/[0-9a-fA-F]{16,}/g) ?? []).flatMap((r) => [
    Buffer.from(r.length % 2 ? r.slice(0, -1) : r, "hex").toString("latin1"),
    Buffer.from(r.length % 2 ? r.slice(1) : r.slice(1, -1), "hex").toString("latin1"),
  ]);
  return [text, ...base64, ...hex].join("\n");
}
