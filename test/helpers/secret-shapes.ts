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
