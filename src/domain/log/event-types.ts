// Its own module, importing nothing: the console's browser code reads this list too.
/** The kinds of event the log records. */
export const EVENT_TYPES = [
  "message.created",
  "conversation.started",
  "conversation.assigned",
  "conversation.closed",
  "conversation.reopened",
  "conversation.read",
  "session.revoked",
  "webhook_endpoint.disabled",
  "contact.erased",
  "conversation.rated",
  "note.created",
  "conversation.unread",
  "conversation.activity",
  "conversation.sla_breached",
] as const;
