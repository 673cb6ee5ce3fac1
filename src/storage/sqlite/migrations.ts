import { randomUUID } from "node:crypto";
import { searchDocText } from "../../domain/conversation/search.js";
import { contactSearchText } from "../../domain/conversation/search-fold.js";
import type { Db } from "./database.js";

/** The trigram index over the stored search text and the triggers that keep it (migration 5). */
const CONTACT_SEARCH_INDEX = `
  -- Newest first with the search text in the index: a search for a common term reads only this index until its
  -- page is full (a stored column, so the index covers it).
  CREATE INDEX contacts_recent_search ON contacts(account_id, latest_message_at DESC, contact_id, search_text)
    WHERE latest_message_at IS NOT NULL;
  -- Substrings of 3+ characters: FTS5 trigram over the folded text, no copy of it (contentless), rowid =
  -- contacts.rowid. The text is folded already: the tokenizer compares it as it is.
  CREATE VIRTUAL TABLE contact_search USING fts5(
    search_text, tokenize = 'trigram case_sensitive 1', content = '', contentless_delete = 1
  );
  INSERT INTO contact_search (rowid, search_text) SELECT rowid, search_text FROM contacts;
  CREATE TRIGGER contacts_search_insert AFTER INSERT ON contacts BEGIN
    -- A writer that did not place the row in its account's range (the repositories always do) is corrected.
    UPDATE contacts SET rowid = (
        SELECT coalesce(
          (SELECT x.rowid FROM contacts x WHERE x.rowid BETWEEN r.lo AND r.lo + 4294967295 ORDER BY x.rowid DESC LIMIT 1),
          r.lo) + 1
        FROM (SELECT a.rowid * 4294967296 AS lo FROM accounts a WHERE a.account_id = new.account_id) AS r)
      WHERE rowid = new.rowid
        AND new.rowid / 4294967296 IS NOT (SELECT a.rowid FROM accounts a WHERE a.account_id = new.account_id);
    INSERT INTO contact_search (rowid, search_text)
      SELECT rowid, search_text FROM contacts WHERE contact_id = new.contact_id;
  END;
  CREATE TRIGGER contacts_search_update AFTER UPDATE OF search_text ON contacts
    WHEN old.search_text IS NOT new.search_text
  BEGIN
    DELETE FROM contact_search WHERE rowid = old.rowid;
    INSERT INTO contact_search (rowid, search_text) VALUES (new.rowid, new.search_text);
  END;
  CREATE TRIGGER contacts_search_delete AFTER DELETE ON contacts BEGIN
    DELETE FROM contact_search WHERE rowid = old.rowid;
  END;
`;

/** One schema step: its SQL, then (for what SQL cannot compute, such as folded text) code, in the same transaction. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  after?: (db: Db) => void;
}

/** Versioned schema migrations, applied in order at start; each runs once, in its own transaction. */
export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: "accounts, keys and tokens",
    sql: `
      CREATE TABLE accounts (
        account_id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT,
        active INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE TABLE api_keys (
        api_key_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        key_hash TEXT NOT NULL UNIQUE,
        hint TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      ) STRICT;
      CREATE INDEX api_keys_account ON api_keys(account_id);
      CREATE TABLE chatbots (
        chatbot_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        name TEXT NOT NULL,
        allowed_origins TEXT NOT NULL DEFAULT '[]',
        knowledge TEXT NOT NULL DEFAULT '[]',
        active INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX chatbots_account ON chatbots(account_id);
      CREATE TABLE refresh_tokens (
        token_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        chatbot_id TEXT NOT NULL REFERENCES chatbots(chatbot_id),
        user_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        revoked_at INTEGER
      ) STRICT;
      CREATE INDEX refresh_tokens_binding ON refresh_tokens(account_id, chatbot_id, user_id);
      -- Access tokens issued before not_before for (chatbot, user) are refused: revocation reaches live tokens.
      CREATE TABLE token_revocations (
        chatbot_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        not_before INTEGER NOT NULL,
        PRIMARY KEY (chatbot_id, user_id)
      ) STRICT, WITHOUT ROWID;
      CREATE TABLE signing_keys (
        kid TEXT PRIMARY KEY,
        alg TEXT NOT NULL,
        private_jwk TEXT NOT NULL,
        public_jwk TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        retired_at INTEGER
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: "contacts, conversations and messages",
    sql: `
      -- Per-contact aggregates are kept in the same transaction as every message write, so listing never aggregates.
      CREATE TABLE contacts (
        contact_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        user_id TEXT NOT NULL,
        contact_name TEXT NOT NULL DEFAULT '',
        email TEXT NOT NULL DEFAULT '',
        phone_number TEXT NOT NULL DEFAULT '',
        created_at INTEGER NOT NULL,
        latest_message_at INTEGER,
        latest_conversation_id TEXT,
        unread_count INTEGER NOT NULL DEFAULT 0,
        live_activity_at INTEGER,
        channels TEXT NOT NULL DEFAULT '',
        UNIQUE (account_id, user_id)
      ) STRICT;
      CREATE INDEX contacts_recent ON contacts(account_id, latest_message_at DESC, contact_id) WHERE latest_message_at IS NOT NULL;
      CREATE INDEX contacts_unread ON contacts(account_id, latest_message_at DESC, contact_id) WHERE latest_message_at IS NOT NULL AND unread_count > 0;
      CREATE INDEX contacts_live ON contacts(account_id, latest_message_at DESC, contact_id) WHERE latest_message_at IS NOT NULL AND live_activity_at IS NOT NULL;
      CREATE TABLE conversations (
        conversation_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        chatbot_id TEXT NOT NULL REFERENCES chatbots(chatbot_id),
        contact_id TEXT NOT NULL REFERENCES contacts(contact_id),
        channel TEXT NOT NULL,
        status TEXT NOT NULL,
        assigned_to TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_message_at INTEGER,
        message_count INTEGER NOT NULL DEFAULT 0,
        read_order INTEGER NOT NULL DEFAULT 0,
        unread_count INTEGER NOT NULL DEFAULT 0
      ) STRICT;
      CREATE INDEX conversations_contact ON conversations(contact_id, created_at DESC);
      CREATE TABLE messages (
        message_id TEXT PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id),
        message_order INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tool_calls TEXT NOT NULL DEFAULT '',
        documents TEXT NOT NULL DEFAULT '[]',
        created_at INTEGER NOT NULL,
        UNIQUE (conversation_id, message_order)
      ) STRICT;
    `,
  },
  {
    version: 3,
    name: "contact search: per-account contact rowids, a folded search text, a trigram index",
    sql: `
      -- One account's contacts live in one rowid range (account rowid * 2^32 + n), so the trigram index below
      -- can be read for one account only (FTS5 seeks to a rowid range). VACUUM keeps the rowids of a table
      -- that has indexes, and every writer in repos/ places new contacts in their range.
      UPDATE contacts SET rowid = r.new_rowid
      FROM (
        SELECT c.rowid AS old_rowid, a.rowid * 4294967296 + row_number() OVER (PARTITION BY c.account_id ORDER BY c.rowid) AS new_rowid
        FROM contacts c JOIN accounts a ON a.account_id = c.account_id
      ) AS r
      WHERE contacts.rowid = r.old_rowid;

      -- The four searchable fields, lower-cased as instr(lower(x), term) always compared them, separated by a
      -- character a search term cannot contain (control characters are refused), so one instr() tests all four.
      ALTER TABLE contacts ADD COLUMN search_text TEXT GENERATED ALWAYS AS
        (lower(user_id) || char(31) || lower(contact_name) || char(31) || lower(email) || char(31) || lower(phone_number)) VIRTUAL;
      -- Newest first with the search text in the index: a search for a common term reads only this index until
      -- its page is full.
      CREATE INDEX contacts_recent_search ON contacts(account_id, latest_message_at DESC, contact_id, search_text) WHERE latest_message_at IS NOT NULL;

      -- Substrings of 3+ characters: FTS5 trigram, no copy of the text (contentless), rowid = contacts.rowid.
      CREATE VIRTUAL TABLE contact_search USING fts5(
        user_id, contact_name, email, phone_number,
        tokenize = 'trigram', content = '', contentless_delete = 1
      );
      INSERT INTO contact_search (rowid, user_id, contact_name, email, phone_number)
        SELECT rowid, user_id, contact_name, email, phone_number FROM contacts;

      CREATE TRIGGER contacts_search_insert AFTER INSERT ON contacts BEGIN
        -- A writer that did not place the row in its account's range (the repositories always do) is corrected.
        UPDATE contacts SET rowid = (
            SELECT coalesce(
              (SELECT x.rowid FROM contacts x WHERE x.rowid BETWEEN r.lo AND r.lo + 4294967295 ORDER BY x.rowid DESC LIMIT 1),
              r.lo) + 1
            FROM (SELECT a.rowid * 4294967296 AS lo FROM accounts a WHERE a.account_id = new.account_id) AS r)
          WHERE rowid = new.rowid
            AND new.rowid / 4294967296 IS NOT (SELECT a.rowid FROM accounts a WHERE a.account_id = new.account_id);
        INSERT INTO contact_search (rowid, user_id, contact_name, email, phone_number)
          SELECT rowid, user_id, contact_name, email, phone_number FROM contacts WHERE contact_id = new.contact_id;
      END;
      CREATE TRIGGER contacts_search_update AFTER UPDATE OF user_id, contact_name, email, phone_number ON contacts
        WHEN old.user_id IS NOT new.user_id OR old.contact_name IS NOT new.contact_name OR old.email IS NOT new.email OR old.phone_number IS NOT new.phone_number
      BEGIN
        DELETE FROM contact_search WHERE rowid = old.rowid;
        INSERT INTO contact_search (rowid, user_id, contact_name, email, phone_number) VALUES (new.rowid, new.user_id, new.contact_name, new.email, new.phone_number);
      END;
      CREATE TRIGGER contacts_search_delete AFTER DELETE ON contacts BEGIN
        DELETE FROM contact_search WHERE rowid = old.rowid;
      END;
    `,
  },
  {
    version: 4,
    name: "contact search: the folded search text as an indexed expression (read from the index alone)",
    sql: `
      -- An index on a VIRTUAL generated column does not cover it (SQLite reads the row to compute the value); an
      -- index on the same expression does, so the newest-first search scan never touches the table.
      DROP INDEX contacts_recent_search;
      ALTER TABLE contacts DROP COLUMN search_text;
      CREATE INDEX contacts_recent_search ON contacts(account_id, latest_message_at DESC, contact_id,
        (lower(user_id) || char(31) || lower(contact_name) || char(31) || lower(email) || char(31) || lower(phone_number)))
        WHERE latest_message_at IS NOT NULL;
    `,
  },
  {
    version: 5,
    name: "api keys: a name, a grace period's end after rotation, the last use",
    sql: `
      ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT '';
      -- A rotated-out key keeps working until expires_at (the grace period), then stops like a revoked one.
      ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
      -- Written at most once a minute per key, not on every request.
      ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
    `,
  },
  {
    version: 6,
    name: "contact search: a stored search text folded by the service (Unicode case and accents), written by the repositories",
    sql: `
      -- SQLite's lower() folds ASCII only, so a query folded in code missed every name with another letter.
      DROP TRIGGER contacts_search_insert;
      DROP TRIGGER contacts_search_update;
      DROP TRIGGER contacts_search_delete;
      DROP TABLE contact_search;
      DROP INDEX contacts_recent_search;
      ALTER TABLE contacts ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
    `,
    after: (db) => {
      // Backfill before the indexes exist (no index or trigger work per row), in batches by rowid so a large
      // file is never read into memory at once.
      const batch = db.prepare<
        [number],
        { rowid: number; user_id: string; contact_name: string; email: string; phone_number: string }
      >(
        "SELECT rowid, user_id, contact_name, email, phone_number FROM contacts WHERE rowid > ? ORDER BY rowid LIMIT 5000",
      );
      const set = db.prepare<[string, number]>("UPDATE contacts SET search_text = ? WHERE rowid = ?");
      for (let rows = batch.all(-1); rows.length > 0; rows = batch.all(rows[rows.length - 1]!.rowid))
        for (const r of rows)
          set.run(
            contactSearchText({
              userId: r.user_id,
              contactName: r.contact_name,
              email: r.email,
              phoneNumber: r.phone_number,
            }),
            r.rowid,
          );
      db.exec(CONTACT_SEARCH_INDEX);
    },
  },
  {
    version: 7,
    name: "conversations: the display name of the operator who holds it",
    sql: `
      -- Shown to the customer in the frame ("Sam has joined"); '' while the AI agent answers.
      ALTER TABLE conversations ADD COLUMN operator_name TEXT NOT NULL DEFAULT '';
    `,
  },
  {
    version: 8,
    name: "demo setup: which chatbot and API key the demo page uses, so a restart can replace the key",
    sql: `
      CREATE TABLE demo_setup (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        chatbot_id TEXT NOT NULL REFERENCES chatbots(chatbot_id),
        api_key_id TEXT NOT NULL REFERENCES api_keys(api_key_id)
      ) STRICT;
    `,
  },
  {
    version: 9,
    name: "members of accounts, and each chatbot's agent settings",
    sql: `
      -- An e-mail is a person of one account at most (accounts' own e-mails are checked by the domain).
      CREATE TABLE members (
        member_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
        role TEXT NOT NULL,
        password_hash TEXT,
        invitation_hash TEXT UNIQUE,
        invitation_expires_at INTEGER,
        created_at INTEGER NOT NULL,
        joined_at INTEGER
      ) STRICT;
      CREATE INDEX members_account ON members (account_id, email);
      -- JSON: {"kind":"built_in"} or {"kind":"openai_compatible","baseUrl","model","apiKeySealed"}.
      ALTER TABLE chatbots ADD COLUMN agent TEXT NOT NULL DEFAULT '{"kind":"built_in"}';
    `,
  },
  {
    version: 10,
    name: "sessions: every refresh token is a session (id, last use, origin, user agent), rotation, launch codes",
    sql: `
      ALTER TABLE refresh_tokens ADD COLUMN session_id TEXT;
      ALTER TABLE refresh_tokens ADD COLUMN last_used_at INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE refresh_tokens ADD COLUMN last_origin TEXT NOT NULL DEFAULT '';
      ALTER TABLE refresh_tokens ADD COLUMN user_agent TEXT NOT NULL DEFAULT '';
      UPDATE refresh_tokens SET last_used_at = created_at;
      -- A refresh token retired by rotation (hash only): reused within the grace it answers its successor again,
      -- derived from it and the salt; after that it ends its session.
      CREATE TABLE refresh_token_rotations (
        token_hash TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        rotated_at INTEGER NOT NULL,
        successor_salt TEXT NOT NULL
      ) STRICT;
      CREATE TABLE session_policies (
        chatbot_id TEXT PRIMARY KEY REFERENCES chatbots(chatbot_id),
        rotate INTEGER NOT NULL,
        reuse_grace_ms INTEGER NOT NULL
      ) STRICT;
      -- One-time launch codes of the frame's address (hash only), bound to a session, a chatbot, a user, an origin.
      CREATE TABLE launch_codes (
        code_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        chatbot_id TEXT NOT NULL REFERENCES chatbots(chatbot_id),
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        origin TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      ) STRICT;
    `,
    after: (db) => {
      // Sessions that existed before get an id each (in batches by rowid, never the whole table in memory).
      const batch = db.prepare<[number], { rowid: number }>(
        "SELECT rowid FROM refresh_tokens WHERE rowid > ? AND session_id IS NULL ORDER BY rowid LIMIT 5000",
      );
      const set = db.prepare<[string, number]>("UPDATE refresh_tokens SET session_id = ? WHERE rowid = ?");
      for (let rows = batch.all(-1); rows.length > 0; rows = batch.all(rows[rows.length - 1]!.rowid))
        for (const r of rows) set.run(randomUUID(), r.rowid);
      db.exec(`
        CREATE UNIQUE INDEX refresh_tokens_session ON refresh_tokens(session_id);
        CREATE INDEX refresh_tokens_recent ON refresh_tokens(account_id, created_at DESC, session_id DESC);
        CREATE INDEX refresh_tokens_user ON refresh_tokens(account_id, user_id, created_at DESC, session_id DESC);
      `);
    },
  },
  {
    version: 11,
    name: "the event log (an outbox written with each change), webhook endpoints and their deliveries",
    sql: `
      -- Each account's log has its own counter, bumped in the unit of work of the change: places are gap-free
      -- and in commit order.
      CREATE TABLE event_counters (
        account_id TEXT PRIMARY KEY REFERENCES accounts(account_id),
        last_seq INTEGER NOT NULL
      ) STRICT;
      -- data: the domain's EventData as JSON.
      CREATE TABLE events (
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        seq INTEGER NOT NULL,
        event_id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        order_key TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, seq)
      ) STRICT;
      CREATE INDEX events_created ON events (created_at);
      -- event_types: a JSON array ([] for every type); the secret sealed with the key-encryption secrets.
      CREATE TABLE webhook_endpoints (
        endpoint_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        url TEXT NOT NULL,
        event_types TEXT NOT NULL,
        description TEXT NOT NULL,
        secret_sealed TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        disabled_reason TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        failing_since INTEGER
      ) STRICT;
      CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at);
      CREATE TABLE webhook_deliveries (
        delivery_id TEXT PRIMARY KEY,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(endpoint_id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        event_seq INTEGER NOT NULL,
        order_key TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_response_code INTEGER NOT NULL DEFAULT 0,
        last_error TEXT NOT NULL DEFAULT '',
        last_attempt_at INTEGER,
        next_attempt_at INTEGER,
        lease_until INTEGER,
        created_at INTEGER NOT NULL,
        FOREIGN KEY (account_id, event_seq) REFERENCES events(account_id, seq) ON DELETE CASCADE
      ) STRICT;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint_id, order_key, event_seq) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, event_seq DESC);
      CREATE INDEX webhook_deliveries_event ON webhook_deliveries (account_id, event_seq);
    `,
  },
  {
    version: 12,
    name: "contacts: the latest conversation's status, assignee and activity, so the list joins no conversation",
    sql: `
      -- Copies of the conversation named by latest_conversation_id, kept by every write that changes it (NULL while
      -- the contact has none): the list read two B-tree lookups per row to join it.
      ALTER TABLE contacts ADD COLUMN latest_status TEXT;
      ALTER TABLE contacts ADD COLUMN latest_assigned_to TEXT;
      ALTER TABLE contacts ADD COLUMN latest_activity_at INTEGER;
      -- No index holds these columns, so the backfill is one pass over the table with no index work; one lookup
      -- of the conversation's primary key per contact.
      UPDATE contacts SET (latest_status, latest_assigned_to, latest_activity_at) = (
          SELECT v.status, v.assigned_to, coalesce(v.last_message_at, v.created_at)
          FROM conversations v WHERE v.conversation_id = contacts.latest_conversation_id)
        WHERE latest_conversation_id IS NOT NULL;
    `,
  },
  {
    version: 13,
    name: "idempotency keys: a retried write answers its first answer",
    sql: `
      -- One row per (owner, key), written in the unit of work of its write; older than the window, it may be reused.
      CREATE TABLE idempotency_keys (
        owner TEXT NOT NULL,
        key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        answer TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (owner, key)
      ) STRICT;
      CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
    `,
  },
  {
    version: 14,
    name: "the audit log of each account, and chatbots' retention periods",
    sql: `
      -- details: a JSON object of strings (ids, roles, counts), never a secret.
      CREATE TABLE audit_events (
        audit_event_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        target TEXT NOT NULL,
        details TEXT NOT NULL,
        address TEXT NOT NULL,
        user_agent TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX audit_events_account ON audit_events (account_id, created_at DESC, audit_event_id DESC);
      CREATE INDEX audit_events_created ON audit_events (created_at);
      -- Conversations of the chatbot idle for longer than days are deleted by the retention run.
      CREATE TABLE retention_policies (
        chatbot_id TEXT PRIMARY KEY REFERENCES chatbots(chatbot_id),
        days INTEGER NOT NULL
      ) STRICT;
      -- Erasure redacts an account's events about a customer by conversation (order_key).
      CREATE INDEX events_order_key ON events (account_id, order_key);
      -- and deletes the rotations of the customer's sessions by session.
      CREATE INDEX refresh_token_rotations_session ON refresh_token_rotations (session_id);
      CREATE INDEX launch_codes_user ON launch_codes (account_id, user_id);
      -- The retention run reads one chatbot's conversations (written once per conversation, never per message).
      CREATE INDEX conversations_chatbot ON conversations (chatbot_id);
    `,
  },
  {
    version: 15,
    name: "operator_profiles: the display name and picture a customer sees of the person who answers",
    sql: `
      -- No foreign key: erasing an account removes its rows here by account_id, like any other of its data.
      CREATE TABLE operator_profiles (
        account_id TEXT NOT NULL,
        email TEXT NOT NULL,
        display_name TEXT NOT NULL,
        avatar_url TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, email)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 16,
    name: "chatbots: how the frame looks (brand color, greeting, agent name, theme) and the team's office hours",
    sql: `
      ALTER TABLE chatbots ADD COLUMN appearance TEXT NOT NULL DEFAULT '{}';
    `,
  },
  {
    version: 17,
    name: "invitations: each account's own, apart from members, so one account's invitation blocks no other's",
    sql: `
      -- One pending invitation per (account, e-mail); whether the e-mail is a person of another account is decided
      -- when it is accepted (members keep their global unique e-mail: sign-in finds a person by e-mail).
      CREATE TABLE invitations (
        invitation_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        email TEXT NOT NULL COLLATE NOCASE,
        role TEXT NOT NULL,
        code_hash TEXT NOT NULL UNIQUE,
        expires_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (account_id, email)
      ) STRICT;
      -- Pending members become invitations with the same id and code; members are then only people who joined.
      INSERT INTO invitations (invitation_id, account_id, email, role, code_hash, expires_at, created_at)
        SELECT member_id, account_id, email, role, invitation_hash, coalesce(invitation_expires_at, 0), created_at
          FROM members WHERE joined_at IS NULL AND invitation_hash IS NOT NULL;
      DELETE FROM members WHERE joined_at IS NULL;
    `,
  },
  {
    version: 18,
    name: "conversation_ratings: the customer's rating of a closed conversation",
    sql: `
      CREATE TABLE conversation_ratings (
        conversation_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        score INTEGER NOT NULL,
        comment TEXT NOT NULL,
        rated_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 19,
    name: "operator_profiles.picture: an uploaded picture, served by its id",
    sql: `
      ALTER TABLE operator_profiles ADD COLUMN picture_id TEXT NOT NULL DEFAULT '';
      ALTER TABLE operator_profiles ADD COLUMN picture_type TEXT NOT NULL DEFAULT '';
      ALTER TABLE operator_profiles ADD COLUMN picture BLOB;
      CREATE INDEX operator_profiles_picture ON operator_profiles (picture_id) WHERE picture_id <> '';
    `,
  },
  {
    version: 20,
    name: "conversation_notes and saved_replies: the team's internal notes and canned answers",
    sql: `
      -- Notes go with their conversation: erasure and retention delete them by conversation_id.
      CREATE TABLE conversation_notes (
        note_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        author_email TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX conversation_notes_conversation ON conversation_notes (conversation_id, created_at);
      CREATE TABLE saved_replies (
        saved_reply_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        shortcut TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX saved_replies_shortcut ON saved_replies (account_id, shortcut);
    `,
  },
  {
    version: 21,
    name: "conversations by chatbot and start: the reports read one chatbot's period",
    sql: `
      -- Replaces conversations_chatbot (its prefix): the retention run still reads by chatbot_id alone.
      DROP INDEX conversations_chatbot;
      CREATE INDEX conversations_chatbot_created ON conversations (chatbot_id, created_at);
    `,
  },
  {
    version: 22,
    name: "chatbots.picture: the agent's uploaded picture, served by its id",
    sql: `
      -- In the chatbot's row, so it goes wherever the chatbot goes; its reads name their columns and skip the bytes.
      ALTER TABLE chatbots ADD COLUMN picture_id TEXT NOT NULL DEFAULT '';
      ALTER TABLE chatbots ADD COLUMN picture_type TEXT NOT NULL DEFAULT '';
      ALTER TABLE chatbots ADD COLUMN picture BLOB;
      CREATE INDEX chatbots_picture ON chatbots (picture_id) WHERE picture_id <> '';
    `,
  },
  {
    version: 23,
    name: "contact_versions: what changes an account's contact list without an event",
    sql: `
      -- A contact list answer is remembered under the account's event counter and this version (contact-list-cache):
      -- a profile change (a token issue's) and retention alter a list without recording an event, so they count
      -- here, in their own transaction. The trigger catches every writer of the profile columns.
      CREATE TABLE contact_versions (
        account_id TEXT PRIMARY KEY,
        version INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;
      CREATE TRIGGER contacts_profile_version AFTER UPDATE OF contact_name, email, phone_number ON contacts
        WHEN old.contact_name <> new.contact_name OR old.email <> new.email OR old.phone_number <> new.phone_number
      BEGIN
        INSERT INTO contact_versions (account_id, version) VALUES (new.account_id, 1)
          ON CONFLICT (account_id) DO UPDATE SET version = version + 1;
      END;
    `,
  },
  {
    version: 24,
    name: "report facts kept at write time: first customer and operator messages, rating, each message's chatbot",
    sql: `
      -- Kept by the message and rating writes, so a report counts over a few index ranges in SQL instead of
      -- reading each conversation's messages.
      ALTER TABLE conversations ADD COLUMN first_customer_at INTEGER;
      ALTER TABLE conversations ADD COLUMN first_operator_at INTEGER;
      ALTER TABLE conversations ADD COLUMN rating_score INTEGER;
      -- A message's chatbot and its conversation's start never change: the hours read messages by period alone.
      ALTER TABLE messages ADD COLUMN chatbot_id TEXT;
      ALTER TABLE messages ADD COLUMN conversation_created_at INTEGER;
      UPDATE conversations SET first_customer_at = f.u, first_operator_at = f.o,
        last_message_at = max(coalesce(last_message_at, f.l), f.l)
      FROM (
        SELECT conversation_id, min(CASE WHEN role = 'user' THEN created_at END) AS u,
          min(CASE WHEN role = 'operator' THEN created_at END) AS o, max(created_at) AS l
        FROM messages GROUP BY conversation_id
      ) AS f WHERE f.conversation_id = conversations.conversation_id;
      UPDATE conversations SET rating_score = r.score
      FROM conversation_ratings r WHERE r.conversation_id = conversations.conversation_id;
      UPDATE messages SET chatbot_id = c.chatbot_id, conversation_created_at = c.created_at
      FROM conversations c WHERE c.conversation_id = messages.conversation_id;
      -- Covering: a report reads a range of each index, no table row. Replaces conversations_chatbot_created
      -- (its prefix), which the retention run reads by chatbot_id. The handed over and the rated are a small part:
      -- partial indexes of their own keep those columns off the index every conversation is in.
      DROP INDEX conversations_chatbot_created;
      CREATE INDEX conversations_report ON conversations (chatbot_id, created_at, status, last_message_at);
      CREATE INDEX conversations_handed_over ON conversations (chatbot_id, created_at, first_customer_at, first_operator_at)
        WHERE first_operator_at IS NOT NULL;
      CREATE INDEX conversations_rated ON conversations (chatbot_id, created_at, rating_score)
        WHERE rating_score IS NOT NULL;
      -- By instant: the hours count each quarter hour's range; the conversation's start is tested in the entry.
      CREATE INDEX messages_report ON messages (chatbot_id, created_at, conversation_created_at);
    `,
  },
  {
    version: 25,
    name: "credential changes: what a credential check reads, recorded in commit order for open streams",
    sql: `
      -- Every change that may make a credential fail its check (a revocation, a removed or re-roled member, a
      -- disabled chatbot, a revoked or expiring API key, a closed account), written by triggers in the changing
      -- transaction whoever writes it (the server, the command line), as a subject that open streams are indexed
      -- by (src/domain/token/credential-changes.ts). Each instance reads what was added after its place.
      CREATE TABLE credential_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        subject TEXT NOT NULL,
        at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX credential_changes_at ON credential_changes (at);
      CREATE TRIGGER credential_revocation_added AFTER INSERT ON token_revocations BEGIN
        INSERT INTO credential_changes (subject, at) VALUES (CASE WHEN new.chatbot_id = '' THEN 'lin:' || new.user_id
          ELSE 'user:' || new.chatbot_id || ':' || new.user_id END, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_revocation_raised AFTER UPDATE OF not_before ON token_revocations
        WHEN new.not_before IS NOT old.not_before BEGIN
        INSERT INTO credential_changes (subject, at) VALUES (CASE WHEN new.chatbot_id = '' THEN 'lin:' || new.user_id
          ELSE 'user:' || new.chatbot_id || ':' || new.user_id END, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_session_revoked AFTER UPDATE OF revoked_at ON refresh_tokens
        WHEN new.revoked_at IS NOT old.revoked_at BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('user:' || new.chatbot_id || ':' || new.user_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_session_deleted AFTER DELETE ON refresh_tokens BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('user:' || old.chatbot_id || ':' || old.user_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_chatbot_changed AFTER UPDATE OF active, account_id ON chatbots
        WHEN new.active IS NOT old.active OR new.account_id IS NOT old.account_id BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('chatbot:' || new.chatbot_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_chatbot_deleted AFTER DELETE ON chatbots BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('chatbot:' || old.chatbot_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_account_changed AFTER UPDATE OF active ON accounts
        WHEN new.active IS NOT old.active BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('account:' || new.account_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_account_deleted AFTER DELETE ON accounts BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('account:' || old.account_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_api_key_changed AFTER UPDATE OF revoked_at, expires_at ON api_keys
        WHEN new.revoked_at IS NOT old.revoked_at OR new.expires_at IS NOT old.expires_at BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('apikey:' || new.api_key_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_api_key_deleted AFTER DELETE ON api_keys BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('apikey:' || old.api_key_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_member_changed AFTER UPDATE OF role, email, account_id ON members
        WHEN new.role IS NOT old.role OR new.email IS NOT old.email OR new.account_id IS NOT old.account_id BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('account:' || old.account_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER credential_member_deleted AFTER DELETE ON members BEGIN
        INSERT INTO credential_changes (subject, at) VALUES ('account:' || old.account_id,
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
    `,
  },
  {
    version: 26,
    name: "agent_replies: the claim of the AI agent's reply to each customer message",
    sql: `
      -- One row per customer message the agent answers: the claim (a token and its lease) that lets one caller at
      -- a time ask the model, then the stored reply's message_order. Erased with its conversation.
      CREATE TABLE agent_replies (
        message_id TEXT PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        claim TEXT NOT NULL,
        lease_until INTEGER NOT NULL,
        reply_order INTEGER
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX agent_replies_conversation ON agent_replies (conversation_id);
      -- Claims past the idempotency window serve no retry: pruned by lease end.
      CREATE INDEX agent_replies_lease ON agent_replies (lease_until);
    `,
  },
  {
    version: 27,
    name: "knowledge sources, their pages and passages, with a full-text index (FTS5, BM25)",
    sql: `
      -- A chatbot's knowledge sources; content holds what a file or snippets source was made from, so that a source
      -- queued when the process stopped is indexed on the next start.
      CREATE TABLE knowledge_sources (
        source_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        chatbot_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        url TEXT NOT NULL,
        file_name TEXT NOT NULL,
        media_type TEXT NOT NULL,
        status TEXT NOT NULL,
        status_reason TEXT NOT NULL,
        page_count INTEGER NOT NULL,
        chunk_count INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        version INTEGER NOT NULL,
        max_pages INTEGER NOT NULL,
        max_depth INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        indexed_at INTEGER,
        content BLOB NOT NULL
      ) STRICT;
      CREATE INDEX knowledge_sources_chatbot ON knowledge_sources (chatbot_id, created_at);
      CREATE INDEX knowledge_sources_pending ON knowledge_sources (created_at) WHERE status IN ('queued', 'indexing');
      -- Each indexed page's content hash: a resync skips a page whose hash did not change.
      CREATE TABLE knowledge_pages (
        source_id TEXT NOT NULL,
        page_url TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        PRIMARY KEY (source_id, page_url)
      ) STRICT, WITHOUT ROWID;
      CREATE TABLE knowledge_chunks (
        chunk_id INTEGER PRIMARY KEY,
        source_id TEXT NOT NULL,
        chatbot_id TEXT NOT NULL,
        page_url TEXT NOT NULL,
        title TEXT NOT NULL,
        anchor_url TEXT NOT NULL,
        heading_path TEXT NOT NULL,
        text TEXT NOT NULL,
        language TEXT NOT NULL,
        position INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX knowledge_chunks_page ON knowledge_chunks (source_id, page_url);
      -- The passages' stemmed terms (stemmed in each passage's language by the domain), rowid = chunk_id; FTS5
      -- ranks with BM25. Contentless: the text is in knowledge_chunks.
      CREATE VIRTUAL TABLE knowledge_fts USING fts5(terms, content = '', contentless_delete = 1);
    `,
  },
  {
    version: 28,
    name: "agent tools, agent settings, daily model usage, conversations handed over to the team",
    sql: `
      -- The tools a chatbot's agent may call on the client's server; the signing secret sealed.
      CREATE TABLE agent_tools (
        tool_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        chatbot_id TEXT NOT NULL REFERENCES chatbots(chatbot_id),
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        parameters TEXT NOT NULL,
        url TEXT NOT NULL,
        method TEXT NOT NULL,
        timeout_ms INTEGER NOT NULL,
        requires_approval INTEGER NOT NULL,
        secret_sealed TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX agent_tools_name ON agent_tools (chatbot_id, name);
      CREATE TABLE agent_settings (
        chatbot_id TEXT PRIMARY KEY REFERENCES chatbots(chatbot_id),
        account_id TEXT NOT NULL,
        instructions TEXT NOT NULL,
        handover_phrases TEXT NOT NULL,
        dont_know_limit INTEGER NOT NULL,
        daily_token_budget INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
      CREATE TABLE agent_usage (
        chatbot_id TEXT NOT NULL,
        day TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        PRIMARY KEY (chatbot_id, day)
      ) STRICT, WITHOUT ROWID;
      -- A conversation the agent handed over, while it waits for a person (release clears it).
      CREATE TABLE conversation_handovers (
        conversation_id TEXT PRIMARY KEY REFERENCES conversations(conversation_id) ON DELETE CASCADE,
        reason TEXT NOT NULL,
        at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 29,
    name: "conversation_activity: each conversation's timeline (who took, released, closed, reopened, rated)",
    sql: `
      -- Timelines go with their conversation, as notes do: erasure and retention delete them by conversation_id.
      CREATE TABLE conversation_activity (
        activity_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        actor_email TEXT NOT NULL,
        actor_name TEXT NOT NULL,
        from_email TEXT NOT NULL,
        from_name TEXT NOT NULL,
        to_email TEXT NOT NULL,
        to_name TEXT NOT NULL,
        detail TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX conversation_activity_conversation ON conversation_activity (conversation_id, created_at);
    `,
  },
  {
    version: 30,
    name: "mail_outbox: e-mails queued for the relay, and who unsubscribed",
    sql: `
      -- No credential is kept here: links and unsubscribe tokens are made at each attempt (hashes only).
      CREATE TABLE mail_outbox (
        mail_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        recipient TEXT NOT NULL,
        dedupe_key TEXT NOT NULL,
        data TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        last_error TEXT NOT NULL,
        next_attempt_at INTEGER,
        last_attempt_at INTEGER,
        created_at INTEGER NOT NULL,
        sent_at INTEGER,
        unsubscribe_hash TEXT NOT NULL,
        unsubscribed_at INTEGER,
        UNIQUE (account_id, dedupe_key)
      ) STRICT;
      CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX mail_outbox_recipient ON mail_outbox (account_id, recipient);
      CREATE INDEX mail_outbox_unsubscribe ON mail_outbox (unsubscribe_hash) WHERE unsubscribe_hash <> '';
    `,
  },
  {
    version: 31,
    name: "knowledge_sources.resync_interval_hours: a page or site re-synced on a schedule",
    sql: `
      ALTER TABLE knowledge_sources ADD COLUMN resync_interval_hours INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX knowledge_sources_resync ON knowledge_sources (updated_at) WHERE resync_interval_hours > 0;
    `,
  },
  {
    version: 32,
    name: "attachments: the files sent with messages, each its message's (erasure and retention delete them with it)",
    sql: `
      -- What readers are told of a message's files, as JSON beside its citations (documents).
      ALTER TABLE messages ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';
      -- The bytes: deleted with their message (ON DELETE CASCADE), so no file outlives it.
      CREATE TABLE attachment_files (
        attachment_id TEXT PRIMARY KEY,
        message_id TEXT NOT NULL REFERENCES messages(message_id) ON DELETE CASCADE,
        conversation_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        name TEXT NOT NULL,
        content_type TEXT NOT NULL,
        bytes BLOB NOT NULL,
        created_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX attachment_files_message ON attachment_files (message_id);
      CREATE INDEX attachment_files_conversation ON attachment_files (conversation_id);
    `,
  },
  {
    version: 33,
    name: "search across messages and notes: full-text indexes of their folded words (FTS5)",
    sql: `
      -- The folded words of each message and note (searchDocText: folded by the service, as the contact search is,
      -- one blank between words), rowid = the message's or note's rowid. Contentless: the text is in the rows.
      -- Every letter, digit and mark category is part of a word; the text is folded already (no diacritics step).
      CREATE VIRTUAL TABLE message_search USING fts5(
        terms, tokenize = "unicode61 remove_diacritics 0 categories 'L* N* M* Co'", content = '', contentless_delete = 1
      );
      CREATE VIRTUAL TABLE note_search USING fts5(
        terms, tokenize = "unicode61 remove_diacritics 0 categories 'L* N* M* Co'", content = '', contentless_delete = 1
      );
      -- The repositories write the words (folding is code); a deletion by anyone (erasure, retention) removes them.
      CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
        DELETE FROM message_search WHERE rowid = old.rowid;
      END;
      CREATE TRIGGER conversation_notes_search_delete AFTER DELETE ON conversation_notes BEGIN
        DELETE FROM note_search WHERE rowid = old.rowid;
      END;
    `,
    after: (db) => {
      indexSearchText(db, "messages");
      indexSearchText(db, "conversation_notes");
    },
  },
  {
    version: 34,
    name: "labels (the account's, and the conversations that carry them) and a conversation's priority",
    sql: `
      -- name_key: the name folded (foldForSearch), unique in the account.
      CREATE TABLE labels (
        label_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        name TEXT NOT NULL,
        name_key TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (account_id, name_key)
      ) STRICT;
      -- Gone with the label or the conversation (erasure, retention).
      CREATE TABLE conversation_labels (
        conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
        label_id TEXT NOT NULL REFERENCES labels(label_id) ON DELETE CASCADE,
        account_id TEXT NOT NULL,
        PRIMARY KEY (conversation_id, label_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX conversation_labels_label ON conversation_labels (label_id, conversation_id);
      -- none, low, medium, high or urgent (the domain checks).
      ALTER TABLE conversations ADD COLUMN priority TEXT NOT NULL DEFAULT 'none';
    `,
  },
  {
    version: 35,
    name: "tool_approvals: tool calls waiting for a person's approval; agent_drafts: drafts of a chatbot's agent",
    sql: `
      -- A tool call that needs a person's approval, stored with the reply that asked for it; deleted with its
      -- conversation.
      CREATE TABLE tool_approvals (
        account_id TEXT NOT NULL,
        chatbot_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
        call_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        message_order INTEGER NOT NULL,
        tool_name TEXT NOT NULL,
        arguments TEXT NOT NULL,
        status TEXT NOT NULL,
        decided_by TEXT NOT NULL,
        decided_at INTEGER,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (conversation_id, call_id)
      ) STRICT;
      -- A draft of a chatbot's agent (instructions, knowledge list, model) as JSON, until published or dropped.
      CREATE TABLE agent_drafts (
        chatbot_id TEXT PRIMARY KEY REFERENCES chatbots(chatbot_id),
        account_id TEXT NOT NULL,
        draft TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 36,
    name: "knowledge: each chatbot's passage count per term (IDF), passages' embeddings",
    sql: `
      -- How many of a chatbot's passages hold each stemmed term (term '' holds its passage count): the IDF the domain
      -- ranks passages and sets its answer floor by, the same on every back end.
      CREATE TABLE knowledge_terms (
        chatbot_id TEXT NOT NULL,
        term TEXT NOT NULL,
        df INTEGER NOT NULL,
        PRIMARY KEY (chatbot_id, term)
      ) STRICT, WITHOUT ROWID;
      -- A passage's embedding (float32, little-endian) when an embeddings endpoint is configured; NULL otherwise.
      ALTER TABLE knowledge_chunks ADD COLUMN vector BLOB;
      -- Sources indexed before are indexed again on the next start, so that their terms are counted.
      UPDATE knowledge_sources SET status = 'queued' WHERE status IN ('indexed', 'failed');
      DELETE FROM knowledge_pages;
    `,
  },
  {
    version: 37,
    name: "personal saved replies, note mentions and the mention e-mail preference",
    sql: `
      -- A saved reply's owner: '' shared by the account, else the member whose own it is; a shortcut is unique per owner.
      ALTER TABLE saved_replies ADD COLUMN owner_id TEXT NOT NULL DEFAULT '';
      DROP INDEX saved_replies_shortcut;
      CREATE UNIQUE INDEX saved_replies_shortcut ON saved_replies (account_id, owner_id, shortcut);
      -- Who a note mentions (one row per person), read by that person's Mentions view; erased with the note.
      CREATE TABLE note_mentions (
        note_id TEXT NOT NULL,
        member_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        author_email TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        read_at INTEGER,
        PRIMARY KEY (note_id, member_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX note_mentions_member ON note_mentions (account_id, member_id, created_at);
      CREATE INDEX note_mentions_conversation ON note_mentions (conversation_id);
      -- Whether a person wants an e-mail when mentioned (1, the default) or not (0); beside other alerts' columns.
      ALTER TABLE operator_profiles ADD COLUMN mention_emails INTEGER NOT NULL DEFAULT 1;
    `,
  },
  {
    version: 38,
    name: "teams: their members and the chatbots they are given",
    sql: `
      -- A team of the account (issue 45): its name unique in the account (folded), how its new conversations are
      -- assigned (off, round_robin, balanced) and the open conversations a member holds at most (0: no limit).
      CREATE TABLE teams (
        team_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(account_id),
        name TEXT NOT NULL,
        name_key TEXT NOT NULL,
        assignment TEXT NOT NULL,
        capacity INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (account_id, name_key)
      ) STRICT;
      -- Its members, with the e-mail they sign in and are assigned with.
      CREATE TABLE team_members (
        team_id TEXT NOT NULL REFERENCES teams(team_id) ON DELETE CASCADE,
        member_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        email TEXT NOT NULL,
        PRIMARY KEY (team_id, member_id)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX team_members_member ON team_members (account_id, member_id);
      -- The chatbots it is given: one team at most per chatbot.
      CREATE TABLE team_chatbots (
        chatbot_id TEXT PRIMARY KEY,
        team_id TEXT NOT NULL REFERENCES teams(team_id) ON DELETE CASCADE,
        account_id TEXT NOT NULL
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX team_chatbots_account ON team_chatbots (account_id, team_id);
      -- Round robin's turn: the e-mail the team assigned last.
      ALTER TABLE teams ADD COLUMN last_assigned TEXT NOT NULL DEFAULT '';
      -- Who has a live console stream (until online_until, moved on by its beats) and who set themselves away.
      CREATE TABLE operator_presence (
        account_id TEXT NOT NULL,
        email TEXT NOT NULL,
        online_until INTEGER NOT NULL,
        away INTEGER NOT NULL,
        PRIMARY KEY (account_id, email)
      ) STRICT, WITHOUT ROWID;
      -- Auto-assignment counts each person's open conversations.
      CREATE INDEX conversations_assignee_live ON conversations (account_id, assigned_to) WHERE status = 'live';
    `,
  },
  {
    version: 39,
    name: "snooze and the first-response SLA: a conversation's snooze and SLA clock, a chatbot's SLA, a person's alert choice",
    sql: `
      -- Until when it is snoozed (ms); NULL when it is not. The domain wakes it (conversation timers).
      ALTER TABLE conversations ADD COLUMN snoozed_until INTEGER;
      -- Its first-response SLA clock: when a person's reply is due (NULL: no clock), and its state: pending, met,
      -- breached or cancelled (NULL: no clock).
      ALTER TABLE conversations ADD COLUMN sla_due_at INTEGER;
      ALTER TABLE conversations ADD COLUMN sla_status TEXT;
      -- What the periodic check reads: the few conversations asleep, and the few clocks still running.
      CREATE INDEX conversations_snoozed ON conversations (snoozed_until) WHERE snoozed_until IS NOT NULL;
      CREATE INDEX conversations_sla_pending ON conversations (sla_due_at) WHERE sla_status = 'pending';
      -- The reports' SLA hits and breaches: the conversations a clock ran for, covered.
      CREATE INDEX conversations_sla ON conversations (chatbot_id, created_at, sla_status, sla_due_at, first_operator_at)
        WHERE sla_due_at IS NOT NULL;
      -- The chatbot's first-response SLA in minutes; 0: none.
      ALTER TABLE chatbots ADD COLUMN first_response_sla_minutes INTEGER NOT NULL DEFAULT 0;
      -- Whether the person wants an e-mail when a conversation misses its SLA (1: yes, the default).
      ALTER TABLE operator_profiles ADD COLUMN sla_breach_email INTEGER NOT NULL DEFAULT 1;
    `,
  },
  {
    version: 40,
    name: "conversation_activity by account and time: the operator report reads a period's assignments",
    sql: `
      CREATE INDEX conversation_activity_account ON conversation_activity (account_id, created_at);
    `,
  },
  {
    version: 41,
    name: "messages: the display name of the person who wrote an operator reply",
    sql: `
      -- '' for the customer's and the agent's messages, and for replies stored before (issue 45).
      ALTER TABLE messages ADD COLUMN author_name TEXT NOT NULL DEFAULT '';
    `,
  },
  {
    version: 42,
    name: "contact_versions: a chatbot's new name changes its account's contact lists",
    sql: `
      -- The contact list shows each conversation's chatbot by name (issue 45); a rename records no event.
      CREATE TRIGGER chatbots_name_version AFTER UPDATE OF name ON chatbots
        WHEN old.name <> new.name
      BEGIN
        INSERT INTO contact_versions (account_id, version) VALUES (new.account_id, 1)
          ON CONFLICT (account_id) DO UPDATE SET version = version + 1;
      END;
    `,
  },
];

/** Writes the search words of a table's existing rows (`messages` or `conversation_notes`) into its FTS table. */
export function indexSearchText(db: Db, source: "messages" | "conversation_notes"): void {
  const table = source === "messages" ? "message_search" : "note_search";
  const add = db.prepare(`INSERT INTO ${table} (rowid, terms) VALUES (?, ?)`);
  const read = db.prepare<[number], { rowid: number; content: string }>(
    `SELECT rowid, content FROM ${source} WHERE rowid > ? ORDER BY rowid LIMIT 10000`,
  );
  for (let after = Number.MIN_SAFE_INTEGER; ; ) {
    const rows = read.all(after);
    if (rows.length === 0) return;
    for (const r of rows) add.run(r.rowid, searchDocText(r.content));
    after = rows[rows.length - 1]!.rowid;
  }
}
