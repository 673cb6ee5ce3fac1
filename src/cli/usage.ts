/** The `aiagent` command's help text. */
export const USAGE = `Usage: aiagent <command> [options]

Commands:
  serve                                  run the service (HTTP/1.1 + HTTP/2 on one port)
  account create --email E [--password P]
  chatbot create --email E --name N [--allowed-origin URL]... [--knowledge FILE.json]
  api-key create --email E               print a new API key (shown once)
  api-key rotate --email E               new key; every older key of the account is revoked
  api-key revoke --email E [--id KEY_ID] revoke one key, or all of the account's keys
  tokens revoke --email E [--chatbot-id ID] [--user-id U]
                                         revoke refresh tokens and stop the users' live access tokens
  keys rotate                            new signing key; older public keys stay published until their tokens expire
  seed --email E [--scale 10k|100k|1m] [--contacts N] [--conversations C] [--messages M]
                                         fill an account with synthetic contacts and messages (benchmarks)

Every command takes --db PATH (default ./data/aiagent.db, or AIAGENT_DB) and --json (print one JSON object).
`;
