/** Versioned schema migrations, applied in order at start; each runs once, in its own transaction. */
export const migrations: readonly { version: number; name: string; sql: string }[] = [
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
];
