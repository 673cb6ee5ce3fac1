import type { AccountRepository, ApiKeyRepository } from "../../domain/account/repository.js";
import { contactSearchText, foldForSearch } from "../../domain/conversation/search-fold.js";
import { newId } from "../../domain/ids.js";
import { originOf } from "../../domain/token/credentials.js";
import type {
  LaunchCodeRepository,
  RefreshTokenRepository,
  SessionIssue,
  SessionIssued,
} from "../../domain/token/repository.js";
import {
  launchCodeValues,
  refreshTokenValues,
  TOKEN_WITH_ACCOUNT,
  toLaunchCode,
  toRefreshToken,
  toRefreshTokenWithAccount,
  toRotation,
} from "../token-rows.js";
import { CONTACT, foldedSearchText, PROFILE_CHANGED, PROFILE_MERGED } from "./conversations.js";
import type { PgDb } from "./db.js";
import { all, execute, first } from "./query.js";

const RAISE =
  "INSERT INTO token_revocations (chatbot_id, user_id, not_before) VALUES ($1, $2, $3) ON CONFLICT (chatbot_id, user_id) DO UPDATE SET not_before = greatest(token_revocations.not_before, excluded.not_before)";
const SCOPE = "account_id = $1 AND ($2::text IS NULL OR chatbot_id = $2) AND ($3::text IS NULL OR user_id = $3)";

/** The reads of other repositories an ID token's check makes with the lineage's (idTokenAccess). */
export interface IdTokenReads {
  accounts: Pick<AccountRepository, "byId">;
  apiKeys: Pick<ApiKeyRepository, "listForAccount">;
}

/** Refresh tokens, the sessions they are, their rotation, and the per-user "not before" instants. */
export function pgRefreshTokens(db: PgDb, reads: IdTokenReads): RefreshTokenRepository {
  const repo: RefreshTokenRepository = {
    insert: (r) =>
      db.write(
        "rt_insert",
        `INSERT INTO refresh_tokens (token_hash, session_id, account_id, chatbot_id, user_id, created_at, expires_at,
           revoked_at, last_used_at, last_origin, user_agent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [...refreshTokenValues(r)],
      ),
    byHash: (h) => first(db, "rt_by_hash", "SELECT * FROM refresh_tokens WHERE token_hash = $1", [h], toRefreshToken),
    byHashWithAccount: (h) => first(db, "rt_with_account", `${TOKEN_WITH_ACCOUNT}$1`, [h], toRefreshTokenWithAccount),
    revoke: (s, at) =>
      db.unit(async () => {
        const scope = [s.accountId, s.chatbotId ?? null, s.userId ?? null];
        const pairs = await db.rows(
          "rt_pairs",
          `SELECT DISTINCT chatbot_id, user_id FROM refresh_tokens WHERE ${SCOPE}`,
          scope,
        );
        for (const p of pairs) await db.count("rt_raise", RAISE, [p.chatbot_id, p.user_id, at]);
        // A named (chatbot, user) is stopped even if it never had a refresh token stored here.
        if (s.chatbotId && s.userId) await db.count("rt_raise", RAISE, [s.chatbotId, s.userId, at]);
        return db.count(
          "rt_revoke",
          `UPDATE refresh_tokens SET revoked_at = $4 WHERE revoked_at IS NULL AND ${SCOPE}`,
          [...scope, at],
        );
      }),
    // Credential lineages share the revocations table under the chatbot id "" (no chatbot has it): no new table.
    revokeLineage: (ids, at) =>
      db.unit(async () => {
        for (const id of ids) await db.count("rt_raise", RAISE, ["", id, at]);
      }),
    lineageNotBefore: async (ids) => {
      const [r] = await db.rows(
        "rt_lineage",
        "SELECT max(not_before) AS not_before FROM token_revocations WHERE chatbot_id = '' AND user_id = ANY($1::text[])",
        [ids],
      );
      return r && r.not_before !== null ? Number(r.not_before) : undefined;
    },
    // The three reads side by side, as before they were one call (one round trip's wait, not three).
    idTokenAccess: async (accountId, ids, withKeys) => {
      const [account, notBefore, keys] = await Promise.all([
        reads.accounts.byId(accountId),
        repo.lineageNotBefore(ids),
        withKeys ? reads.apiKeys.listForAccount(accountId) : undefined,
      ]);
      return { account, notBefore, keys };
    },
    notBefore: async (chatbotId, userId, sessionId) => {
      const [r] =
        sessionId === undefined
          ? await db.rows(
              "rt_not_before",
              "SELECT not_before FROM token_revocations WHERE chatbot_id = $1 AND user_id = $2",
              [chatbotId, userId],
            )
          : await db.rows(
              "rt_not_before_session",
              `SELECT greatest(
                 (SELECT not_before FROM token_revocations WHERE chatbot_id = $1 AND user_id = $2),
                 (SELECT revoked_at FROM refresh_tokens WHERE session_id = $3)) AS not_before`,
              [chatbotId, userId, sessionId],
            );
      return r && r.not_before !== null ? Number(r.not_before) : undefined;
    },
    frameAccess: async (chatbotId, userId, sessionId) => {
      // One round trip instead of two: the revocation instants and the chatbot, in one snapshot.
      const [r] = await db.rows(
        "rt_frame_access",
        // …and the session's own lineage mark, which outlives its refresh token when the customer is erased.
        `SELECT b.account_id, b.active, greatest(
           (SELECT not_before FROM token_revocations WHERE chatbot_id = $1 AND user_id = $2),
           (SELECT revoked_at FROM refresh_tokens WHERE session_id = $3::text),
           (SELECT not_before FROM token_revocations WHERE chatbot_id = '' AND user_id = 'session:' || $3::text))
           AS not_before
         FROM (SELECT 1) AS one LEFT JOIN chatbots b ON b.chatbot_id = $1`,
        [chatbotId, userId, sessionId ?? null],
      );
      return {
        notBefore: r && r.not_before !== null ? Number(r.not_before) : undefined,
        chatbot:
          r && r.account_id !== null ? { accountId: r.account_id as string, active: r.active as boolean } : undefined,
      };
    },
    bySession: (id) =>
      first(db, "rt_by_session", "SELECT * FROM refresh_tokens WHERE session_id = $1", [id], toRefreshToken),
    list: (s, limit, offset) =>
      all(
        db,
        "rt_list",
        `SELECT * FROM refresh_tokens WHERE ${SCOPE} ORDER BY created_at DESC, session_id DESC LIMIT $4 OFFSET $5`,
        [s.accountId, s.chatbotId ?? null, s.userId ?? null, limit, offset],
        toRefreshToken,
      ),
    revokeSession: async (accountId, sessionId, at) =>
      (await db.count(
        "rt_revoke_session",
        "UPDATE refresh_tokens SET revoked_at = $1 WHERE account_id = $2 AND session_id = $3 AND revoked_at IS NULL",
        [at, accountId, sessionId],
      )) === 1,
    touch: (sessionId, at, origin, userAgent) =>
      execute(
        db,
        "rt_touch",
        `UPDATE refresh_tokens SET last_used_at = greatest(last_used_at, $1), last_origin = coalesce($2, last_origin),
           user_agent = coalesce($3, user_agent) WHERE session_id = $4`,
        [at, origin, userAgent, sessionId],
      ),
    rotate: (sessionId, fromHash, toHash, salt, at) =>
      db.unit(async () => {
        const swapped = await db.count(
          "rt_swap",
          "UPDATE refresh_tokens SET token_hash = $1 WHERE session_id = $2 AND token_hash = $3",
          [toHash, sessionId, fromHash],
        );
        if (swapped !== 1) return false;
        await db.count(
          "rt_retire",
          "INSERT INTO refresh_token_rotations (token_hash, session_id, rotated_at, successor_salt) VALUES ($1, $2, $3, $4)",
          [fromHash, sessionId, at, salt],
        );
        return true;
      }),
    rotated: (h) =>
      first(db, "rt_rotated", "SELECT * FROM refresh_token_rotations WHERE token_hash = $1", [h], toRotation),
    policy: async (chatbotId) => {
      const [r] = await db.rows("session_policy", "SELECT * FROM session_policies WHERE chatbot_id = $1", [chatbotId]);
      return (
        r && { chatbotId: r.chatbot_id as string, rotate: r.rotate as boolean, reuseGraceMs: Number(r.reuse_grace_ms) }
      );
    },
    setPolicy: (p) =>
      execute(
        db,
        "session_policy_set",
        "INSERT INTO session_policies (chatbot_id, rotate, reuse_grace_ms) VALUES ($1, $2, $3) ON CONFLICT (chatbot_id) DO UPDATE SET rotate = excluded.rotate, reuse_grace_ms = excluded.reuse_grace_ms",
        [p.chatbotId, p.rotate, p.reuseGraceMs],
      ),
  };
  return repo;
}

/** One-time launch codes of the chat frame (hashes only), shared by every instance. */
export function pgLaunchCodes(db: PgDb): LaunchCodeRepository {
  return {
    insert: (r) =>
      db.write(
        "launch_insert",
        `INSERT INTO launch_codes (code_hash, account_id, chatbot_id, user_id, session_id, origin, created_at,
           expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [...launchCodeValues(r)],
      ),
    byHash: (h) => first(db, "launch_by_hash", "SELECT * FROM launch_codes WHERE code_hash = $1", [h], toLaunchCode),
    markUsed: async (h, at) =>
      (await db.count("launch_use", "UPDATE launch_codes SET used_at = $1 WHERE code_hash = $2 AND used_at IS NULL", [
        at,
        h,
      ])) === 1,
  };
}

/**
 * Store.issueSession in one statement (one round trip, its own transaction): the key, its account and the chatbot
 * read in the statement's snapshot, the refresh token inserted and the contact ensured only where all three pass,
 * so a refused issue writes nothing. With a launch code, the chatbot's allowed origins are read too and the code is
 * stored with the session only where the origin asked is one of them (embedOrigin's rule: "" asks for the only one).
 * The contact's upsert is ContactRepository.ensure's: with no profile, a known user's row is locked, not changed;
 * with one, its fields are merged as the upsert merges them, and its search text with them, field by field (the
 * stored text is the four fields folded, joined by SEARCH_FIELD_SEPARATOR; each field's fold is the domain's, made
 * here). One row answers: the key's id and last use, or why it was refused, and the contact as merged.
 */
function issueStatement(launch: boolean, profile: boolean): { name: string; text: string } {
  // $1–$11 the refresh token, $12 the key's hash, $13 a new contact's id, $14 its search text; then the launch
  // code's (origin asked, hash, expiry) and the profile's (three fields, each folded).
  let n = 14;
  const next = () => `$${++n}`;
  const [asked, codeHash, codeExpires] = launch ? [next(), next(), next()] : [];
  const [name, email, phone, nameFold, emailFold, phoneFold] = profile
    ? [next(), next(), next(), next(), next(), next()]
    : [];
  const go = launch ? "k.usable AND k.bound AND k.origin IS NOT NULL" : "k.usable AND k.bound";
  const key = launch
    ? `SELECT k.api_key_id, k.last_used_at,
      k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $6::bigint) AS usable,
      coalesce(a.active, false) AND b.chatbot_id IS NOT NULL AS bound, b.allowed_origins,
      CASE WHEN ${asked}::text = '' THEN
          CASE WHEN jsonb_array_length(b.allowed_origins::jsonb) = 1 THEN b.allowed_origins::jsonb ->> 0 END
        WHEN b.allowed_origins::jsonb ? ${asked}::text THEN ${asked}::text END AS origin
    FROM api_keys k LEFT JOIN accounts a ON a.account_id = k.account_id
      LEFT JOIN chatbots b ON b.chatbot_id = $4::text AND b.account_id = k.account_id AND b.active`
    : `SELECT k.api_key_id, k.last_used_at,
      k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $6::bigint) AS usable,
      coalesce(a.active, false) AND EXISTS (SELECT 1 FROM chatbots b
        WHERE b.chatbot_id = $4::text AND b.account_id = k.account_id AND b.active) AS bound
    FROM api_keys k LEFT JOIN accounts a ON a.account_id = k.account_id`;
  const part = (i: number) => `split_part(contacts.search_text, chr(31), ${i})`;
  const contact = profile
    ? `INSERT INTO contacts (contact_id, account_id, user_id, contact_name, email, phone_number, created_at, search_text)
    SELECT $13::text, $3::text, $5::text, ${name}::text, ${email}::text, ${phone}::text, $6::bigint, $14::text
    FROM k WHERE ${go}
    ON CONFLICT (account_id, user_id) DO UPDATE SET
      ${PROFILE_MERGED},
      search_text = concat_ws(chr(31), ${part(1)},
        CASE WHEN excluded.contact_name <> '' THEN ${nameFold}::text ELSE ${part(2)} END,
        CASE WHEN excluded.email <> '' THEN ${emailFold}::text ELSE ${part(3)} END,
        CASE WHEN excluded.phone_number <> '' THEN ${phoneFold}::text ELSE ${part(4)} END)
    WHERE ${PROFILE_CHANGED}
    RETURNING ${CONTACT}`
    : `INSERT INTO contacts (contact_id, account_id, user_id, contact_name, email, phone_number, created_at, search_text)
    SELECT $13::text, $3::text, $5::text, '', '', '', $6::bigint, $14::text FROM k WHERE ${go}
    ON CONFLICT (account_id, user_id) DO UPDATE SET contact_name = contacts.contact_name WHERE false
    RETURNING 1`;
  const code = launch
    ? `,
  lc AS (
    INSERT INTO launch_codes (code_hash, account_id, chatbot_id, user_id, session_id, origin, created_at, expires_at,
      used_at)
    SELECT ${codeHash}::text, $3::text, $4::text, $5::text, $2::text, k.origin, $6::bigint, ${codeExpires}::bigint, NULL
    FROM k WHERE ${go}
  )`
    : "";
  return {
    name: `session_issue${launch ? "_launch" : ""}${profile ? "_profile" : ""}`,
    text: `WITH k AS (
    ${key}
    WHERE k.key_hash = $12::text AND k.account_id = $3::text
  ),
  rt AS (
    INSERT INTO refresh_tokens (token_hash, session_id, account_id, chatbot_id, user_id, created_at, expires_at,
      revoked_at, last_used_at, last_origin, user_agent)
    SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::bigint, $7::bigint, $8::bigint, $9::bigint, $10::text,
      $11::text
    FROM k WHERE ${go}
    RETURNING 1
  ),
  ct AS (
    ${contact}
  )${code}
  SELECT k.api_key_id, k.last_used_at, k.usable${launch ? ", k.bound, k.allowed_origins, k.origin" : ""},
    (SELECT count(*) FROM rt) AS issued${profile ? ", c.*" : ""}
  FROM (SELECT 1) AS one LEFT JOIN k ON true${profile ? " LEFT JOIN ct AS c ON true" : ""}`,
  };
}

const ISSUE = [
  issueStatement(false, false),
  issueStatement(false, true),
  issueStatement(true, false),
  issueStatement(true, true),
];

/** Store.issueSession on PostgreSQL (see issueStatement). */
export async function pgIssueSession(db: PgDb, s: SessionIssue): Promise<SessionIssued> {
  const t = s.token;
  const { launch, profile } = s;
  const values: unknown[] = [
    ...refreshTokenValues(t),
    s.keyHash,
    newId(),
    contactSearchText({
      userId: t.userId,
      contactName: profile?.contactName ?? "",
      email: profile?.email ?? "",
      phoneNumber: profile?.phoneNumber ?? "",
    }),
  ];
  if (launch)
    values.push(
      launch.embedOrigin === "" ? "" : (originOf(launch.embedOrigin) ?? null),
      launch.codeHash,
      launch.expiresAt,
    );
  if (profile)
    values.push(
      profile.contactName,
      profile.email,
      profile.phoneNumber,
      foldForSearch(profile.contactName),
      foldForSearch(profile.email),
      foldForSearch(profile.phoneNumber),
    );
  const { name, text } = ISSUE[(launch ? 2 : 0) + (profile ? 1 : 0)]!;
  const [r] = await db.rows(name, text, values);
  if (r && Number(r.issued) === 1) {
    // The merged contact's search text is the domain's fold of its fields wherever every writer stored it so; one
    // that was not is folded again here (only where its fields are still those just merged).
    if (profile && r.contact_id != null) {
      const folded = foldedSearchText(r);
      if (folded !== r.search_text)
        await db.count(
          "contact_search_text_refold",
          `UPDATE contacts SET search_text = $1 WHERE contact_id = $2 AND contact_name = $3 AND email = $4
             AND phone_number = $5`,
          [folded, r.contact_id, r.contact_name, r.email, r.phone_number],
        );
    }
    return {
      issued: true,
      apiKeyId: r.api_key_id as string,
      keyLastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
      launchOrigin: launch ? (r.origin as string) : undefined,
    };
  }
  const keyFine = r?.api_key_id != null && r.usable === true;
  return {
    issued: false,
    revoked: r?.api_key_id != null && r.usable === false,
    allowedOrigins:
      launch && keyFine && r.bound === true ? (JSON.parse(r.allowed_origins as string) as string[]) : undefined,
  };
}
