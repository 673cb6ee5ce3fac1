import { verifyPassword } from "../account/password.js";
import type { CallOrigin } from "../caller.js";
import { invalidArgument, unauthenticated } from "../errors.js";
import { newId } from "../ids.js";
import { requireId } from "../validate.js";
import {
  accountForKey,
  BAD_ID_CREDENTIAL,
  MAX_PASSWORD,
  type TokenServiceDeps,
  UNUSABLE_HASH,
  UnknownCredentialError,
} from "./credentials.js";

/** Issuing ID tokens for the account API: from an API key or a person's password. */
export class IdTokens {
  constructor(
    private readonly d: Pick<
      TokenServiceDeps,
      "accounts" | "admit" | "apiKeys" | "audit" | "clock" | "jwt" | "members" | "ttl"
    >,
  ) {}

  /**
   * Issues an ID token for the account API: from an API key (servers, with the account's e-mail), or from a
   * person's e-mail and password (the account's owner, or a member who has accepted their invitation).
   */
  async getIdToken(input: {
    email: string;
    clientApiKey?: string | undefined;
    password?: string | undefined;
    /** Where the sign-in came from, for the audit log. */
    origin?: CallOrigin | undefined;
  }): Promise<{ idToken: string; expiresAt: number }> {
    const email = requireId("user_email_id", input.email);
    if (!input.clientApiKey && !input.password) throw invalidArgument("client_api_key", "is required (or password)");
    if (input.password && input.password.length > MAX_PASSWORD)
      throw invalidArgument("password", `must be at most ${MAX_PASSWORD} characters`);
    let account = await this.d.accounts.byEmail(email);
    let person = account?.email;
    let ok = false;
    let markUsed: (() => Promise<void> | undefined) | undefined;
    let apiKeyId: string | undefined;
    /** The account the sender proved to be, whatever e-mail it named. */
    let sender: { accountId: string; email: string } | undefined;
    if (input.clientApiKey) {
      const keyAccount = await accountForKey(this.d, input.clientApiKey);
      sender = keyAccount;
      ok = !!account && keyAccount?.accountId === account.accountId;
      markUsed = keyAccount?.markUsed;
      apiKeyId = keyAccount?.apiKeyId;
    } else if (input.password) {
      const member = account ? undefined : await this.d.members.byEmail(email);
      if (member?.joinedAt != null) {
        account = await this.d.accounts.byId(member.accountId);
        person = member.email;
      }
      // Hash even for an unknown e-mail, so timing does not tell which e-mails exist.
      const stored = (member ? member.passwordHash : account?.passwordHash) ?? UNUSABLE_HASH;
      ok = (await verifyPassword(input.password, stored)) && stored !== UNUSABLE_HASH && !!account;
    }
    const method = input.clientApiKey ? "api_key" : "password";
    if (!ok || !account || !person) {
      // Counted against the sender, never against the account the request names: anyone can name an e-mail, so a
      // failure is recorded only in the log of an account the sender proved to be (a usable API key of that account,
      // sent with an e-mail it does not sign in as). A wrong password or an unknown key proves nothing: no account's
      // log records it (the sign-in throttle counts it, per address and per e-mail).
      if (sender) {
        const who = {
          kind: "service" as const,
          accountId: sender.accountId,
          actor: sender.email,
          origin: input.origin,
        };
        await this.d.audit?.note(who, "sign_in.failed", "", { method });
      }
      throw new UnknownCredentialError(BAD_ID_CREDENTIAL);
    }
    if (!account.active) throw unauthenticated(BAD_ID_CREDENTIAL);
    await this.d.admit?.(account.accountId);
    await markUsed?.();
    const who = { kind: "service" as const, accountId: account.accountId, actor: person, origin: input.origin };
    await this.d.audit?.note(who, "sign_in.succeeded", "", { method });
    // Its own session; minted with the API key, or else with the password. Revoking either revokes it.
    const parent = apiKeyId ? { apiKeyId } : { viaPassword: true };
    const t = await this.d.jwt.signId(
      { accountId: account.accountId, email: person, sessionId: newId(), ...parent },
      this.d.ttl.id,
    );
    return { idToken: t.token, expiresAt: t.expiresAt };
  }
}
