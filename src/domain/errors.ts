/** The kinds of failure the domain reports; the protocol layer maps each to a wire code. */
export type DomainErrorKind =
  | "invalid_argument"
  | "unauthenticated"
  | "permission_denied"
  | "not_found"
  | "already_exists"
  | "failed_precondition"
  | "resource_exhausted"
  | "unavailable"
  | "internal";

/** Machine-readable causes of a token failure, acted on by the frame. */
export type TokenFailureReason =
  | "TokenExpiredError"
  | "TokenInvalidError"
  | "InvitationInvalidError"
  /** The invited e-mail signs in to another account already (a person belongs to one account at most). */
  | "InvitationEmailInUseError"
  /** A credential the token descends from was revoked (a session, a key, a member, a password, a sign-out). */
  | "TokenRevokedError";

/** A failure the caller can act on; `message` is safe to show, `cause` is for the log only. */
export class DomainError extends Error {
  override readonly name = "DomainError";
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    readonly extra: { field?: string; reason?: TokenFailureReason; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message);
  }
}

/** Guard for DomainError. */
export function isDomainError(e: unknown): e is DomainError {
  return e instanceof DomainError;
}

/** Bad input in one named field. */
export function invalidArgument(field: string, message: string): DomainError {
  return new DomainError("invalid_argument", `${field}: ${message}`, { field });
}

/** A missing, malformed, expired or revoked credential. */
export function unauthenticated(message: string, reason: TokenFailureReason = "TokenInvalidError"): DomainError {
  return new DomainError("unauthenticated", message, { reason });
}

/** The caller is known but may not do this. */
export function permissionDenied(message: string): DomainError {
  return new DomainError("permission_denied", message);
}

/** The object does not exist, or is not the caller's: the two are never told apart. */
export function notFound(what: string): DomainError {
  return new DomainError("not_found", `${what} not found`);
}
