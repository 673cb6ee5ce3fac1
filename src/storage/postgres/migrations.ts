/** The PostgreSQL schema, one numbered step at a time; each applies in its own transaction. */
export interface PgMigration {
  version: number;
  sql: string;
}

// Times are epoch milliseconds (bigint, read back as numbers). The search text is folded by the domain and stored;
// the trigram index answers substring searches over it.
export const pgMigrations: PgMigration[] = [
  {
    version: 1,
    sql: `
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
      CREATE TABLE accounts (
        account_id text PRIMARY KEY,
        email text NOT NULL,
        password_hash text,
        active boolean NOT NULL DEFAULT true,
        created_at bigint NOT NULL
      );
      CREATE UNIQUE INDEX accounts_email ON accounts ((lower(email) COLLATE "C"));
      CREATE TABLE api_keys (
        api_key_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        key_hash text NOT NULL UNIQUE,
        hint text NOT NULL,
        name text NOT NULL DEFAULT '',
        created_at bigint NOT NULL,
        revoked_at bigint,
        expires_at bigint,
        last_used_at bigint
      );
      CREATE INDEX api_keys_account ON api_keys (account_id, created_at, api_key_id);
      CREATE TABLE chatbots (
        chatbot_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        name text NOT NULL,
        allowed_origins text NOT NULL DEFAULT '[]',
        knowledge text NOT NULL DEFAULT '[]',
        active boolean NOT NULL DEFAULT true,
        created_at bigint NOT NULL
      );
      CREATE INDEX chatbots_account ON chatbots (account_id, created_at);
      CREATE TABLE refresh_tokens (
        token_hash text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        chatbot_id text NOT NULL REFERENCES chatbots(chatbot_id),
        user_id text NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        revoked_at bigint
      );
      CREATE INDEX refresh_tokens_binding ON refresh_tokens (account_id, chatbot_id, user_id);
      CREATE TABLE token_revocations (
        chatbot_id text NOT NULL,
        user_id text NOT NULL,
        not_before bigint NOT NULL,
        PRIMARY KEY (chatbot_id, user_id)
      );
      CREATE TABLE signing_keys (
        kid text PRIMARY KEY,
        alg text NOT NULL,
        private_jwk text NOT NULL,
        public_jwk text NOT NULL,
        created_at bigint NOT NULL,
        retired_at bigint
      );
      CREATE TABLE contacts (
        contact_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        user_id text NOT NULL,
        contact_name text NOT NULL DEFAULT '',
        email text NOT NULL DEFAULT '',
        phone_number text NOT NULL DEFAULT '',
        created_at bigint NOT NULL,
        latest_message_at bigint,
        latest_conversation_id text,
        unread_count integer NOT NULL DEFAULT 0,
        live_activity_at bigint,
        channels text NOT NULL DEFAULT '',
        search_text text NOT NULL DEFAULT '',
        UNIQUE (account_id, user_id)
      );
      CREATE INDEX contacts_recent ON contacts (account_id, latest_message_at DESC, contact_id) WHERE latest_message_at IS NOT NULL;
      CREATE INDEX contacts_unread ON contacts (account_id, latest_message_at DESC, contact_id) WHERE latest_message_at IS NOT NULL AND unread_count > 0;
      CREATE INDEX contacts_live ON contacts (account_id, latest_message_at DESC, contact_id) WHERE latest_message_at IS NOT NULL AND live_activity_at IS NOT NULL;
      CREATE INDEX contacts_search ON contacts USING gin (search_text gin_trgm_ops);
      CREATE TABLE conversations (
        conversation_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        chatbot_id text NOT NULL REFERENCES chatbots(chatbot_id),
        contact_id text NOT NULL REFERENCES contacts(contact_id),
        channel text NOT NULL,
        status text NOT NULL,
        assigned_to text NOT NULL,
        operator_name text NOT NULL DEFAULT '',
        created_at bigint NOT NULL,
        last_message_at bigint,
        message_count integer NOT NULL DEFAULT 0,
        read_order integer NOT NULL DEFAULT 0,
        unread_count integer NOT NULL DEFAULT 0
      );
      CREATE INDEX conversations_contact ON conversations (contact_id, created_at DESC, conversation_id DESC);
      CREATE TABLE messages (
        message_id text PRIMARY KEY,
        conversation_id text NOT NULL REFERENCES conversations(conversation_id),
        message_order integer NOT NULL,
        role text NOT NULL,
        content text NOT NULL,
        tool_calls text NOT NULL DEFAULT '',
        documents text NOT NULL DEFAULT '[]',
        created_at bigint NOT NULL,
        UNIQUE (conversation_id, message_order)
      );
      CREATE TABLE demo_setup (
        id integer PRIMARY KEY CHECK (id = 1),
        account_id text NOT NULL REFERENCES accounts(account_id),
        chatbot_id text NOT NULL REFERENCES chatbots(chatbot_id),
        api_key_id text NOT NULL REFERENCES api_keys(api_key_id)
      );`,
  },
  {
    version: 2,
    // rate-limiter-flexible's table (its own layout): the token routes' abuse counters, shared by every instance.
    sql: `CREATE TABLE rate_limits (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint);`,
  },
  {
    version: 3,
    // Members of accounts (an e-mail is a person of one account at most), and each chatbot's agent settings (JSON).
    sql: `
      CREATE TABLE members (
        member_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        email text NOT NULL,
        role text NOT NULL,
        password_hash text,
        invitation_hash text UNIQUE,
        invitation_expires_at bigint,
        created_at bigint NOT NULL,
        joined_at bigint
      );
      CREATE UNIQUE INDEX members_email ON members ((lower(email) COLLATE "C"));
      CREATE INDEX members_account ON members (account_id, (lower(email) COLLATE "C"));
      ALTER TABLE chatbots ADD COLUMN agent text NOT NULL DEFAULT '{"kind":"built_in"}';`,
  },
  {
    version: 4,
    // Every refresh token is a session (id, last use, origin, user agent); rotation keeps retired tokens' hashes;
    // per-chatbot session policies; one-time launch codes of the frame's address (hashes only).
    sql: `
      ALTER TABLE refresh_tokens ADD COLUMN session_id text;
      ALTER TABLE refresh_tokens ADD COLUMN last_used_at bigint NOT NULL DEFAULT 0;
      ALTER TABLE refresh_tokens ADD COLUMN last_origin text NOT NULL DEFAULT '';
      ALTER TABLE refresh_tokens ADD COLUMN user_agent text NOT NULL DEFAULT '';
      UPDATE refresh_tokens SET session_id = gen_random_uuid()::text, last_used_at = created_at;
      ALTER TABLE refresh_tokens ALTER COLUMN session_id SET NOT NULL;
      CREATE UNIQUE INDEX refresh_tokens_session ON refresh_tokens (session_id);
      CREATE INDEX refresh_tokens_recent ON refresh_tokens (account_id, created_at DESC, session_id DESC);
      CREATE INDEX refresh_tokens_user ON refresh_tokens (account_id, user_id, created_at DESC, session_id DESC);
      CREATE TABLE refresh_token_rotations (
        token_hash text PRIMARY KEY,
        session_id text NOT NULL,
        rotated_at bigint NOT NULL,
        successor_salt text NOT NULL
      );
      CREATE TABLE session_policies (
        chatbot_id text PRIMARY KEY REFERENCES chatbots(chatbot_id),
        rotate boolean NOT NULL,
        reuse_grace_ms bigint NOT NULL
      );
      CREATE TABLE launch_codes (
        code_hash text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        chatbot_id text NOT NULL REFERENCES chatbots(chatbot_id),
        user_id text NOT NULL,
        session_id text NOT NULL,
        origin text NOT NULL,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );`,
  },
  {
    version: 5,
    // The event log (an outbox written with each change; each account's counter row, locked to the commit, makes
    // places gap-free and in commit order), webhook endpoints (secrets sealed) and their deliveries.
    sql: `
      CREATE TABLE event_counters (
        account_id text PRIMARY KEY REFERENCES accounts(account_id),
        last_seq bigint NOT NULL
      );
      CREATE TABLE events (
        account_id text NOT NULL REFERENCES accounts(account_id),
        seq bigint NOT NULL,
        event_id text NOT NULL UNIQUE,
        type text NOT NULL,
        order_key text NOT NULL,
        data text NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (account_id, seq)
      );
      CREATE INDEX events_created ON events (created_at);
      CREATE TABLE webhook_endpoints (
        endpoint_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        url text NOT NULL,
        event_types text NOT NULL,
        description text NOT NULL,
        secret_sealed text NOT NULL,
        enabled boolean NOT NULL,
        disabled_reason text NOT NULL,
        created_at bigint NOT NULL,
        failing_since bigint
      );
      CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at);
      CREATE TABLE webhook_deliveries (
        delivery_id text PRIMARY KEY,
        endpoint_id text NOT NULL REFERENCES webhook_endpoints(endpoint_id) ON DELETE CASCADE,
        account_id text NOT NULL,
        event_seq bigint NOT NULL,
        order_key text NOT NULL,
        status text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        last_response_code integer NOT NULL DEFAULT 0,
        last_error text NOT NULL DEFAULT '',
        last_attempt_at bigint,
        next_attempt_at bigint,
        lease_until bigint,
        created_at bigint NOT NULL,
        FOREIGN KEY (account_id, event_seq) REFERENCES events(account_id, seq) ON DELETE CASCADE
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint_id, order_key, event_seq) WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, event_seq DESC);
      CREATE INDEX webhook_deliveries_event ON webhook_deliveries (account_id, event_seq);`,
  },
  {
    version: 6,
    // The latest conversation's status, assignee and activity copied onto the contact (NULL while it has none) and
    // kept by every write that changes them, so the list joins no conversation (two index lookups per row).
    sql: `
      ALTER TABLE contacts ADD COLUMN latest_status text;
      ALTER TABLE contacts ADD COLUMN latest_assigned_to text;
      ALTER TABLE contacts ADD COLUMN latest_activity_at bigint;
      UPDATE contacts c SET latest_status = v.status, latest_assigned_to = v.assigned_to,
          latest_activity_at = coalesce(v.last_message_at, v.created_at)
        FROM conversations v WHERE v.conversation_id = c.latest_conversation_id;`,
  },
  {
    version: 7,
    // Idempotency keys: one row per (owner, key), written in the unit of work of its write.
    sql: `
      CREATE TABLE idempotency_keys (
        owner text NOT NULL,
        key text NOT NULL,
        request_hash text NOT NULL,
        answer text NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (owner, key)
      );
      CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);`,
  },
  {
    version: 8,
    // The audit log of each account (details: JSON of strings, never a secret), chatbots' retention periods, and
    // the index erasure redacts an account's events by (order_key: the conversation).
    sql: `
      CREATE TABLE audit_events (
        audit_event_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        kind text NOT NULL,
        actor text NOT NULL,
        target text NOT NULL,
        details text NOT NULL,
        address text NOT NULL,
        user_agent text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX audit_events_account ON audit_events (account_id, created_at DESC, audit_event_id DESC);
      CREATE INDEX audit_events_created ON audit_events (created_at);
      CREATE TABLE retention_policies (
        chatbot_id text PRIMARY KEY REFERENCES chatbots(chatbot_id),
        days integer NOT NULL
      );
      CREATE INDEX events_order_key ON events (account_id, order_key);
      CREATE INDEX refresh_token_rotations_session ON refresh_token_rotations (session_id);
      CREATE INDEX launch_codes_user ON launch_codes (account_id, user_id);
      CREATE INDEX conversations_chatbot ON conversations (chatbot_id);`,
  },
  {
    version: 9,
    // The display name and picture a customer sees of the person who answers, per (account, lower-cased e-mail).
    sql: `
      CREATE TABLE operator_profiles (
        account_id text NOT NULL,
        email text NOT NULL,
        display_name text NOT NULL,
        avatar_url text NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (account_id, email)
      );`,
  },
  {
    version: 10,
    // How a chatbot's frame looks (brand color, greeting, agent name, theme) and its team's office hours, as JSON.
    sql: `ALTER TABLE chatbots ADD COLUMN appearance text NOT NULL DEFAULT '{}';`,
  },
  {
    version: 11,
    // Invitations: each account's own, one per (account, e-mail), apart from members (whose e-mail stays unique:
    // sign-in finds a person by e-mail); pending members become invitations with the same id and code.
    sql: `
      CREATE TABLE invitations (
        invitation_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        email text NOT NULL,
        role text NOT NULL,
        code_hash text NOT NULL UNIQUE,
        expires_at bigint NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE UNIQUE INDEX invitations_account_email ON invitations (account_id, (lower(email) COLLATE "C"));
      INSERT INTO invitations (invitation_id, account_id, email, role, code_hash, expires_at, created_at)
        SELECT member_id, account_id, email, role, invitation_hash, coalesce(invitation_expires_at, 0), created_at
          FROM members WHERE joined_at IS NULL AND invitation_hash IS NOT NULL;
      DELETE FROM members WHERE joined_at IS NULL;`,
  },
  {
    version: 12,
    // The customer's rating of a closed conversation, one per conversation.
    sql: `
      CREATE TABLE conversation_ratings (
        conversation_id text PRIMARY KEY,
        account_id text NOT NULL,
        score integer NOT NULL,
        comment text NOT NULL,
        rated_at bigint NOT NULL
      );`,
  },
  {
    version: 13,
    // An uploaded picture of the person, served by its id.
    sql: `
      ALTER TABLE operator_profiles ADD COLUMN picture_id text NOT NULL DEFAULT '';
      ALTER TABLE operator_profiles ADD COLUMN picture_type text NOT NULL DEFAULT '';
      ALTER TABLE operator_profiles ADD COLUMN picture bytea;
      CREATE INDEX operator_profiles_picture ON operator_profiles (picture_id) WHERE picture_id <> '';`,
  },
  {
    version: 14,
    // The team's internal notes (deleted with their conversation) and canned answers (a shortcut unique per account).
    sql: `
      CREATE TABLE conversation_notes (
        note_id text PRIMARY KEY,
        account_id text NOT NULL,
        conversation_id text NOT NULL,
        author_email text NOT NULL,
        content text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX conversation_notes_conversation ON conversation_notes (conversation_id, created_at);
      CREATE TABLE saved_replies (
        saved_reply_id text PRIMARY KEY,
        account_id text NOT NULL,
        shortcut text NOT NULL,
        content text NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL
      );
      CREATE UNIQUE INDEX saved_replies_shortcut ON saved_replies (account_id, shortcut);`,
  },
  {
    version: 15,
    // The reports read one chatbot's period; replaces conversations_chatbot (its prefix), which retention reads.
    sql: `
      DROP INDEX conversations_chatbot;
      CREATE INDEX conversations_chatbot_created ON conversations (chatbot_id, created_at);`,
  },
  {
    version: 16,
    // The agent's uploaded picture, in the chatbot's row (its reads name their columns and skip the bytes).
    sql: `
      ALTER TABLE chatbots ADD COLUMN picture_id text NOT NULL DEFAULT '';
      ALTER TABLE chatbots ADD COLUMN picture_type text NOT NULL DEFAULT '';
      ALTER TABLE chatbots ADD COLUMN picture bytea;
      CREATE INDEX chatbots_picture ON chatbots (picture_id) WHERE picture_id <> '';`,
  },
  {
    version: 17,
    // What changes an account's contact list without an event: a profile change (a token issue's, caught by the
    // trigger whoever writes it) and retention count here, in their own transaction. A list answer is remembered
    // under the account's event counter and this version (contact-list-cache); the row lock orders the bumps.
    sql: `
      CREATE TABLE contact_versions (
        account_id text PRIMARY KEY,
        version bigint NOT NULL
      );
      CREATE FUNCTION contact_profile_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO contact_versions (account_id, version) VALUES (NEW.account_id, 1)
          ON CONFLICT (account_id) DO UPDATE SET version = contact_versions.version + 1;
        RETURN NULL;
      END $$;
      CREATE TRIGGER contacts_profile_version AFTER UPDATE OF contact_name, email, phone_number ON contacts
        FOR EACH ROW WHEN (OLD.contact_name IS DISTINCT FROM NEW.contact_name OR OLD.email IS DISTINCT FROM NEW.email
          OR OLD.phone_number IS DISTINCT FROM NEW.phone_number)
        EXECUTE FUNCTION contact_profile_changed();`,
  },
  {
    version: 18,
    // Report facts kept by the message and rating writes: a report reads index ranges and counts in SQL. The
    // period's conversations are read by conversations_chatbot_created and the heap (last_message_at stays out of
    // every index: each message moves it, and an indexed column would make each message's conversation update a
    // non-HOT one, writing every index of the table); the handed over and the rated have partial indexes.
    sql: `
      ALTER TABLE conversations ADD COLUMN first_customer_at bigint, ADD COLUMN first_operator_at bigint,
        ADD COLUMN rating_score integer;
      ALTER TABLE messages ADD COLUMN chatbot_id text, ADD COLUMN conversation_created_at bigint;
      UPDATE conversations v SET first_customer_at = f.u, first_operator_at = f.o,
        last_message_at = greatest(v.last_message_at, f.l)
      FROM (
        SELECT conversation_id, min(created_at) FILTER (WHERE role = 'user') AS u,
          min(created_at) FILTER (WHERE role = 'operator') AS o, max(created_at) AS l
        FROM messages GROUP BY conversation_id
      ) f WHERE f.conversation_id = v.conversation_id;
      UPDATE conversations v SET rating_score = r.score FROM conversation_ratings r
      WHERE r.conversation_id = v.conversation_id;
      UPDATE messages m SET chatbot_id = v.chatbot_id, conversation_created_at = v.created_at
      FROM conversations v WHERE v.conversation_id = m.conversation_id;
      CREATE INDEX conversations_handed_over ON conversations (chatbot_id, created_at)
        INCLUDE (first_customer_at, first_operator_at) WHERE first_operator_at IS NOT NULL;
      CREATE INDEX conversations_rated ON conversations (chatbot_id, created_at) INCLUDE (rating_score)
        WHERE rating_score IS NOT NULL;
      CREATE INDEX messages_report ON messages (chatbot_id, conversation_created_at, created_at);`,
  },
  {
    version: 19,
    // Credential changes (see the SQLite migration 25): written by triggers in the changing transaction, whoever
    // writes it, and announced on aiagent_credentials (heard only on commit; one payload per transaction). A
    // bigserial's places can commit out of order: readers keep the places they skipped and ask for them again.
    sql: `
      CREATE TABLE credential_changes (
        seq bigserial PRIMARY KEY,
        subject text NOT NULL,
        at bigint NOT NULL
      );
      CREATE INDEX credential_changes_at ON credential_changes (at);
      CREATE FUNCTION credential_changed(subject text) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO credential_changes (subject, at)
          VALUES (subject, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
        PERFORM pg_notify('aiagent_credentials', '');
      END $$;
      CREATE FUNCTION credential_row_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE r record;
      BEGIN
        IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
        IF TG_TABLE_NAME = 'token_revocations' THEN
          PERFORM credential_changed(CASE WHEN r.chatbot_id = '' THEN 'lin:' || r.user_id
            ELSE 'user:' || r.chatbot_id || ':' || r.user_id END);
        ELSIF TG_TABLE_NAME = 'refresh_tokens' THEN
          PERFORM credential_changed('user:' || r.chatbot_id || ':' || r.user_id);
        ELSIF TG_TABLE_NAME = 'chatbots' THEN
          PERFORM credential_changed('chatbot:' || r.chatbot_id);
        ELSIF TG_TABLE_NAME = 'accounts' THEN
          PERFORM credential_changed('account:' || r.account_id);
        ELSIF TG_TABLE_NAME = 'api_keys' THEN
          PERFORM credential_changed('apikey:' || r.api_key_id);
        ELSIF TG_TABLE_NAME = 'members' THEN
          PERFORM credential_changed('account:' || OLD.account_id);
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER credential_revocation_added AFTER INSERT ON token_revocations
        FOR EACH ROW EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_revocation_raised AFTER UPDATE OF not_before ON token_revocations
        FOR EACH ROW WHEN (new.not_before IS DISTINCT FROM old.not_before) EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_session_revoked AFTER UPDATE OF revoked_at ON refresh_tokens
        FOR EACH ROW WHEN (new.revoked_at IS DISTINCT FROM old.revoked_at) EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_session_deleted AFTER DELETE ON refresh_tokens
        FOR EACH ROW EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_chatbot_changed AFTER UPDATE OF active, account_id ON chatbots
        FOR EACH ROW WHEN (new.active IS DISTINCT FROM old.active OR new.account_id IS DISTINCT FROM old.account_id)
        EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_chatbot_deleted AFTER DELETE ON chatbots
        FOR EACH ROW EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_account_changed AFTER UPDATE OF active ON accounts
        FOR EACH ROW WHEN (new.active IS DISTINCT FROM old.active) EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_account_deleted AFTER DELETE ON accounts
        FOR EACH ROW EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_api_key_changed AFTER UPDATE OF revoked_at, expires_at ON api_keys
        FOR EACH ROW WHEN (new.revoked_at IS DISTINCT FROM old.revoked_at OR new.expires_at IS DISTINCT FROM old.expires_at)
        EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_api_key_deleted AFTER DELETE ON api_keys
        FOR EACH ROW EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_member_changed AFTER UPDATE OF role, email, account_id ON members
        FOR EACH ROW WHEN (new.role IS DISTINCT FROM old.role OR new.email IS DISTINCT FROM old.email
          OR new.account_id IS DISTINCT FROM old.account_id)
        EXECUTE FUNCTION credential_row_changed();
      CREATE TRIGGER credential_member_deleted AFTER DELETE ON members
        FOR EACH ROW EXECUTE FUNCTION credential_row_changed();`,
  },
  {
    version: 20,
    // The claim of the AI agent's reply to each customer message (a token and its lease: one caller at a time asks
    // the model, on any instance), then the stored reply's message_order. Erased with its conversation.
    sql: `
      CREATE TABLE agent_replies (
        message_id text PRIMARY KEY,
        conversation_id text NOT NULL,
        claim text NOT NULL,
        lease_until bigint NOT NULL,
        reply_order integer
      );
      CREATE INDEX agent_replies_conversation ON agent_replies (conversation_id);
      CREATE INDEX agent_replies_lease ON agent_replies (lease_until);`,
  },
  {
    version: 21,
    // Knowledge sources, their pages' content hashes, and their passages with a tsvector made in each passage's
    // language (english, german, french, spanish or simple), GIN-indexed; content keeps what a file or snippets
    // source was made from, so a source queued when the process stopped is indexed on the next start.
    sql: `
      CREATE TABLE knowledge_sources (
        source_id text PRIMARY KEY,
        account_id text NOT NULL,
        chatbot_id text NOT NULL,
        kind text NOT NULL,
        title text NOT NULL,
        url text NOT NULL,
        file_name text NOT NULL,
        media_type text NOT NULL,
        status text NOT NULL,
        status_reason text NOT NULL,
        page_count integer NOT NULL,
        chunk_count integer NOT NULL,
        content_hash text NOT NULL,
        version integer NOT NULL,
        max_pages integer NOT NULL,
        max_depth integer NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        indexed_at bigint,
        content bytea NOT NULL
      );
      CREATE INDEX knowledge_sources_chatbot ON knowledge_sources (chatbot_id, created_at);
      CREATE INDEX knowledge_sources_pending ON knowledge_sources (created_at) WHERE status IN ('queued', 'indexing');
      CREATE TABLE knowledge_pages (
        source_id text NOT NULL,
        page_url text NOT NULL,
        content_hash text NOT NULL,
        PRIMARY KEY (source_id, page_url)
      );
      CREATE TABLE knowledge_chunks (
        chunk_id bigserial PRIMARY KEY,
        source_id text NOT NULL,
        chatbot_id text NOT NULL,
        page_url text NOT NULL,
        title text NOT NULL,
        anchor_url text NOT NULL,
        heading_path text NOT NULL,
        text text NOT NULL,
        language text NOT NULL,
        position integer NOT NULL,
        tsv tsvector NOT NULL
      );
      CREATE INDEX knowledge_chunks_page ON knowledge_chunks (source_id, page_url);
      CREATE INDEX knowledge_chunks_chatbot ON knowledge_chunks (chatbot_id);
      CREATE INDEX knowledge_chunks_tsv ON knowledge_chunks USING gin (tsv);`,
  },
  {
    version: 22,
    // Agent tools (the signing secret sealed), agent settings, daily model usage, and the conversations handed over
    // to the team while they wait for a person (release clears them).
    sql: `
      CREATE TABLE agent_tools (
        tool_id text PRIMARY KEY,
        account_id text NOT NULL,
        chatbot_id text NOT NULL REFERENCES chatbots(chatbot_id),
        name text NOT NULL,
        description text NOT NULL,
        parameters text NOT NULL,
        url text NOT NULL,
        method text NOT NULL,
        timeout_ms integer NOT NULL,
        requires_approval boolean NOT NULL,
        secret_sealed text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE UNIQUE INDEX agent_tools_name ON agent_tools (chatbot_id, name);
      CREATE TABLE agent_settings (
        chatbot_id text PRIMARY KEY REFERENCES chatbots(chatbot_id),
        account_id text NOT NULL,
        instructions text NOT NULL,
        handover_phrases text NOT NULL,
        dont_know_limit integer NOT NULL,
        daily_token_budget bigint NOT NULL,
        updated_at bigint NOT NULL
      );
      CREATE TABLE agent_usage (
        chatbot_id text NOT NULL,
        day text NOT NULL,
        tokens bigint NOT NULL,
        PRIMARY KEY (chatbot_id, day)
      );
      CREATE TABLE conversation_handovers (
        conversation_id text PRIMARY KEY REFERENCES conversations(conversation_id) ON DELETE CASCADE,
        reason text NOT NULL,
        at bigint NOT NULL
      );`,
  },
  {
    version: 23,
    // Each conversation's timeline (who took, released, closed, reopened, rated); deleted with its conversation.
    sql: `
      CREATE TABLE conversation_activity (
        activity_id text PRIMARY KEY,
        account_id text NOT NULL,
        conversation_id text NOT NULL,
        kind text NOT NULL,
        actor_email text NOT NULL,
        actor_name text NOT NULL,
        from_email text NOT NULL,
        from_name text NOT NULL,
        to_email text NOT NULL,
        to_name text NOT NULL,
        detail text NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX conversation_activity_conversation ON conversation_activity (conversation_id, created_at);`,
  },
  {
    version: 24,
    // E-mails queued for the relay, and who unsubscribed; no credential is kept (links are made at each attempt).
    sql: `
      CREATE TABLE mail_outbox (
        mail_id text PRIMARY KEY,
        account_id text NOT NULL,
        kind text NOT NULL,
        recipient text NOT NULL,
        dedupe_key text NOT NULL,
        data text NOT NULL,
        status text NOT NULL,
        attempts integer NOT NULL,
        last_error text NOT NULL,
        next_attempt_at bigint,
        last_attempt_at bigint,
        created_at bigint NOT NULL,
        sent_at bigint,
        unsubscribe_hash text NOT NULL,
        unsubscribed_at bigint,
        UNIQUE (account_id, dedupe_key)
      );
      CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE status = 'pending';
      CREATE INDEX mail_outbox_recipient ON mail_outbox (account_id, recipient);
      CREATE INDEX mail_outbox_unsubscribe ON mail_outbox (unsubscribe_hash) WHERE unsubscribe_hash <> '';`,
  },
  {
    version: 25,
    // A page or site source re-synced on a schedule (0: only on demand).
    sql: `
      ALTER TABLE knowledge_sources ADD COLUMN resync_interval_hours integer NOT NULL DEFAULT 0;
      CREATE INDEX knowledge_sources_resync ON knowledge_sources (updated_at) WHERE resync_interval_hours > 0;`,
  },
  {
    version: 26,
    // The files sent with messages: what readers are told of them beside the citations, and their bytes, deleted with
    // their message (ON DELETE CASCADE), so erasure and retention leave no file behind.
    sql: `
      ALTER TABLE messages ADD COLUMN attachments text NOT NULL DEFAULT '[]';
      CREATE TABLE attachment_files (
        attachment_id text PRIMARY KEY,
        message_id text NOT NULL REFERENCES messages(message_id) ON DELETE CASCADE,
        conversation_id text NOT NULL,
        account_id text NOT NULL,
        name text NOT NULL,
        content_type text NOT NULL,
        bytes bytea NOT NULL,
        created_at bigint NOT NULL
      );
      CREATE INDEX attachment_files_message ON attachment_files (message_id);
      CREATE INDEX attachment_files_conversation ON attachment_files (conversation_id);`,
  },
  {
    version: 27,
    // Search across messages and notes: each one's folded words (searchDocText, written by the service with the row)
    // as a tsvector of the 'simple' configuration (no stemming, no stop words: the words as folded), GIN-indexed.
    // Rows written before this version are indexed from their text lower-cased (accents as written).
    sql: `
      ALTER TABLE messages ADD COLUMN search_words tsvector;
      ALTER TABLE conversation_notes ADD COLUMN search_words tsvector;
      UPDATE messages SET search_words = to_tsvector('simple', lower(regexp_replace(content, '[^[:alnum:]]+', ' ', 'g')));
      UPDATE conversation_notes SET search_words =
        to_tsvector('simple', lower(regexp_replace(content, '[^[:alnum:]]+', ' ', 'g')));
      CREATE INDEX messages_search ON messages USING gin (search_words);
      CREATE INDEX conversation_notes_search ON conversation_notes USING gin (search_words);`,
  },
  {
    version: 28,
    // Labels: the account's, name_key the name folded (foldForSearch), unique in the account; the conversations
    // that carry them, gone with the label or the conversation (erasure, retention).
    sql: `
      CREATE TABLE labels (
        label_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        name text NOT NULL,
        name_key text NOT NULL,
        created_at bigint NOT NULL,
        UNIQUE (account_id, name_key)
      );
      CREATE TABLE conversation_labels (
        conversation_id text NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
        label_id text NOT NULL REFERENCES labels(label_id) ON DELETE CASCADE,
        account_id text NOT NULL,
        PRIMARY KEY (conversation_id, label_id)
      );
      CREATE INDEX conversation_labels_label ON conversation_labels (label_id, conversation_id);
      -- A conversation's priority: none, low, medium, high or urgent (the domain checks).
      ALTER TABLE conversations ADD COLUMN priority text NOT NULL DEFAULT 'none';`,
  },
  {
    version: 29,
    // A tool call that needs a person's approval, stored with the reply that asked for it; deleted with its
    // conversation. A draft of a chatbot's agent (instructions, knowledge list, model) as JSON.
    sql: `
      CREATE TABLE tool_approvals (
        account_id text NOT NULL,
        chatbot_id text NOT NULL,
        conversation_id text NOT NULL REFERENCES conversations(conversation_id) ON DELETE CASCADE,
        call_id text NOT NULL,
        message_id text NOT NULL,
        message_order bigint NOT NULL,
        tool_name text NOT NULL,
        arguments text NOT NULL,
        status text NOT NULL,
        decided_by text NOT NULL,
        decided_at bigint,
        created_at bigint NOT NULL,
        PRIMARY KEY (conversation_id, call_id)
      );
      CREATE TABLE agent_drafts (
        chatbot_id text PRIMARY KEY REFERENCES chatbots(chatbot_id),
        account_id text NOT NULL,
        draft text NOT NULL,
        updated_at bigint NOT NULL
      );`,
  },
  {
    version: 30,
    // How many of a chatbot's passages hold each stemmed term (term '' holds its passage count): the IDF the domain
    // ranks passages and sets its answer floor by. A passage's embedding (float32, little-endian) when an embeddings
    // endpoint is configured. Sources indexed before are indexed again on the next start, so their terms are counted.
    sql: `
      CREATE TABLE knowledge_terms (
        chatbot_id text NOT NULL,
        term text NOT NULL,
        df integer NOT NULL,
        PRIMARY KEY (chatbot_id, term)
      );
      ALTER TABLE knowledge_chunks ADD COLUMN vector bytea;
      UPDATE knowledge_sources SET status = 'queued' WHERE status IN ('indexed', 'failed');
      DELETE FROM knowledge_pages;`,
  },
  {
    version: 31,
    // A saved reply's owner ('' shared, else the member whose own it is; a shortcut unique per owner); who a note
    // mentions, read by that person's Mentions view and erased with the note; whether a person wants an e-mail when
    // mentioned (the default) or not.
    sql: `
      ALTER TABLE saved_replies ADD COLUMN owner_id text NOT NULL DEFAULT '';
      DROP INDEX saved_replies_shortcut;
      CREATE UNIQUE INDEX saved_replies_shortcut ON saved_replies (account_id, owner_id, shortcut);
      CREATE TABLE note_mentions (
        note_id text NOT NULL,
        member_id text NOT NULL,
        account_id text NOT NULL,
        conversation_id text NOT NULL,
        author_email text NOT NULL,
        created_at bigint NOT NULL,
        read_at bigint,
        PRIMARY KEY (note_id, member_id)
      );
      CREATE INDEX note_mentions_member ON note_mentions (account_id, member_id, created_at);
      CREATE INDEX note_mentions_conversation ON note_mentions (conversation_id);
      ALTER TABLE operator_profiles ADD COLUMN mention_emails boolean NOT NULL DEFAULT true;`,
  },
  {
    version: 32,
    // Teams (issue 45): a name unique in the account (folded), how new conversations are assigned (off,
    // round_robin, balanced) and the open conversations a member holds at most (0: no limit); their members with the
    // e-mail they are assigned with; the chatbots they are given, one team at most per chatbot.
    sql: `
      CREATE TABLE teams (
        team_id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        name text NOT NULL,
        name_key text NOT NULL,
        assignment text NOT NULL,
        capacity integer NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        UNIQUE (account_id, name_key)
      );
      CREATE TABLE team_members (
        team_id text NOT NULL REFERENCES teams(team_id) ON DELETE CASCADE,
        member_id text NOT NULL,
        account_id text NOT NULL,
        email text NOT NULL,
        PRIMARY KEY (team_id, member_id)
      );
      CREATE INDEX team_members_member ON team_members (account_id, member_id);
      CREATE TABLE team_chatbots (
        chatbot_id text PRIMARY KEY,
        team_id text NOT NULL REFERENCES teams(team_id) ON DELETE CASCADE,
        account_id text NOT NULL
      );
      CREATE INDEX team_chatbots_account ON team_chatbots (account_id, team_id);
      ALTER TABLE teams ADD COLUMN last_assigned text NOT NULL DEFAULT '';
      CREATE TABLE operator_presence (
        account_id text NOT NULL,
        email text NOT NULL,
        online_until bigint NOT NULL,
        away boolean NOT NULL,
        PRIMARY KEY (account_id, email)
      );
      CREATE INDEX conversations_assignee_live ON conversations (account_id, assigned_to) WHERE status = 'live';`,
  },
  {
    version: 33,
    // Snooze and the first-response SLA: until when a conversation is snoozed, its SLA clock (due instant and state:
    // pending, met, breached, cancelled), the chatbot's SLA in minutes (0: none), and whether a person wants the SLA
    // alert by e-mail (on by default). The partial indexes hold only the sleeping conversations and running clocks.
    sql: `
      ALTER TABLE conversations ADD COLUMN snoozed_until bigint;
      ALTER TABLE conversations ADD COLUMN sla_due_at bigint;
      ALTER TABLE conversations ADD COLUMN sla_status text;
      CREATE INDEX conversations_snoozed ON conversations (snoozed_until) WHERE snoozed_until IS NOT NULL;
      CREATE INDEX conversations_sla_pending ON conversations (sla_due_at) WHERE sla_status = 'pending';
      CREATE INDEX conversations_sla ON conversations (chatbot_id, created_at) WHERE sla_due_at IS NOT NULL;
      ALTER TABLE chatbots ADD COLUMN first_response_sla_minutes integer NOT NULL DEFAULT 0;
      ALTER TABLE operator_profiles ADD COLUMN sla_breach_email boolean NOT NULL DEFAULT true;`,
  },
  {
    version: 34,
    // The operator report reads one account's assignments of a period (issue 45).
    sql: `CREATE INDEX conversation_activity_account ON conversation_activity (account_id, created_at);`,
  },
  {
    version: 35,
    // The display name of the person who wrote an operator reply; '' for the customer's and the agent's messages,
    // and for replies stored before (issue 45). A constant default: no table rewrite.
    sql: `ALTER TABLE messages ADD COLUMN author_name text NOT NULL DEFAULT '';`,
  },
  {
    version: 36,
    // The contact list shows each conversation's chatbot by name (issue 45): a rename records no event, so it moves
    // the account's contact_versions like a profile change (contact_profile_changed reads NEW.account_id).
    sql: `
      CREATE TRIGGER chatbots_name_version AFTER UPDATE OF name ON chatbots
        FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
        EXECUTE FUNCTION contact_profile_changed();`,
  },
  {
    version: 37,
    // Log positions without a lock held across a writer's commit (issue 44, W5): a unit of work queues its events
    // here (id: their order, from a sequence), and right after its commit one short transaction per account, under
    // an advisory lock, moves every queued event of the account into `events` at the next dense places, with its
    // deliveries (sequencer.ts). A queued event is read by nobody; one a dead process left is moved by the next
    // write of its account or the sweep.
    sql: `
      CREATE TABLE event_queue (
        id bigserial PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(account_id),
        event_id text NOT NULL,
        type text NOT NULL,
        order_key text NOT NULL,
        data text NOT NULL,
        created_at bigint NOT NULL,
        delivery_ids text[] NOT NULL,
        endpoint_ids text[] NOT NULL
      );
      CREATE INDEX event_queue_account ON event_queue (account_id, id);`,
  },
  {
    version: 38,
    // A queued event's account is checked where it is placed (the foreign key of `events`), so the queue's own check
    // goes (session 22, W5): every writer of an account took a key-share lock on the account's row for it, and
    // writers side by side share that lock through a multixact, which each of them extends. PostgreSQL only: SQLite
    // has no queue (it places in the writer's transaction).
    sql: "ALTER TABLE event_queue DROP CONSTRAINT event_queue_account_id_fkey;",
  },
  {
    version: 39,
    // A message's conversation is not checked by a key of its own (session 23, the send: about 45 µs of PostgreSQL's
    // CPU per message, a lookup and a key-share lock of a row the append has just updated). The append is the only
    // writer of messages, and it inserts from the row its own UPDATE returned, locked to the commit: no row, no
    // message. A conversation is deleted only by an erasure or its expiry (privacy.ts), each of which locks the row
    // FOR UPDATE before it deletes its messages, so an append waits for it and then finds no row; conversation_id is
    // never updated. SQLite keeps its key: there it is one index probe in the writer's process.
    sql: "ALTER TABLE messages DROP CONSTRAINT messages_conversation_id_fkey;",
  },
];
