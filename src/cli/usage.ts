/** The `aiagent` command's help text. */
export const USAGE = `Usage: aiagent <command> [options]

Commands:
  serve [--port N] [--host H]            run the service (HTTP/1.1 + HTTP/2 on one port)
  account create --email E [--password P]
  account password --email E --password P
                                         set or reset the owner's password (the console's sign-in)
  account list
  chatbot create --email E --name N --allowed-origin URL [--allowed-origin URL]... [--knowledge FILE.json]
  chatbot update --email E --chatbot-id ID [--name N] [--allowed-origin URL]... [--knowledge FILE.json]
                                         origins and knowledge given replace the old ones
  chatbot list --email E
  api-key create --email E [--name N]    print a new API key (shown once)
  api-key list --email E                 prefix, name, status, created, last used; never the key
  api-key rotate --email E [--name N] [--grace SECONDS]
                                         new key; older keys keep working for the grace period
                                         (default AIAGENT_API_KEY_GRACE, 86400), then stop
  api-key revoke --email E (--id KEY_ID | --all)
                                         stop one key, or every key of the account, at once
  tokens revoke --email E [--chatbot-id ID] [--user-id U]
                                         revoke refresh tokens and stop the users' live access tokens
  contact export --email E (--contact-id ID | --user-id U)
                                         print everything kept about one customer as one JSON document
  contact erase --email E (--contact-id ID | --user-id U)
                                         erase one customer: conversations, messages, sessions go; events
                                         about them are redacted; a contact.erased event is published
  retention set --email E --chatbot-id ID --days N
                                         delete the chatbot's conversations idle for N days (0: keep them)
  retention run                          apply every retention period and the audit log's now
  keys rotate                            new signing key; running servers switch to it within
                                         AIAGENT_SIGNING_KEY_REFRESH seconds (default 30); older public
                                         keys stay published until their tokens expire
  backup FILE                            a consistent copy of the SQLite database into the new FILE,
                                         while the server runs (PostgreSQL: pg_dump, docs/operations.md)
  restore FILE                           put the backup FILE in place as the database; refused while a
                                         server holds it (the database replaced is kept beside it)

Every command takes --db PATH (default ./data/aiagent.db, or AIAGENT_DB) and --json (print one JSON object).
--knowledge takes a JSON array of {"title", "url", "snippet"} objects.
Exit status: 0 done, 2 the command line is wrong (unknown command or option, missing or malformed value),
1 the command was refused (the message says why).
`;
