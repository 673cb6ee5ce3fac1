import { type DescField, getOption } from "@bufbuild/protobuf";
import {
  ChatbotAppearanceSchema,
  ChatbotTextsSchema,
  CreateSavedReplyRequestSchema,
  KnowledgeSnippetSchema,
  UpdateSavedReplyRequestSchema,
} from "../../gen/aiagent/v1/account_service_pb.js";
import {
  AddConversationNoteRequestSchema,
  RateConversationRequestSchema,
  ReplyToConversationRequestSchema,
  SendMessageRequestSchema,
} from "../../gen/aiagent/v1/conversation_service_pb.js";
import { text } from "../../gen/aiagent/v1/field_options_pb.js";

/**
 * The longest text a field takes, as the contract declares it (`aiagent.v1.text` max_length in proto/): the one
 * place a content limit is written. The gate refuses a longer request before its handler; the domain holds what
 * reaches it another way (the command line, the agent's tools) to the same number, read from here.
 */
function declared(f: DescField): number {
  const n = getOption(f, text).maxLength;
  if (!(n > 0)) throw new Error(`the contract declares no max_length for ${f.parent.typeName}.${f.name}`);
  return n;
}

/** The content limits, by what is written. */
export const LIMITS = {
  /** A customer's message (send_message; send_message_stream declares the same). */
  message: declared(SendMessageRequestSchema.field.content),
  /** An operator's reply. */
  reply: declared(ReplyToConversationRequestSchema.field.content),
  /** An internal note. */
  note: declared(AddConversationNoteRequestSchema.field.content),
  /** A saved reply, as created and as changed. */
  savedReply: declared(CreateSavedReplyRequestSchema.field.content),
  savedReplyUpdate: declared(UpdateSavedReplyRequestSchema.field.content),
  /** A knowledge snippet of a chatbot. */
  snippet: declared(KnowledgeSnippetSchema.field.snippet),
  /** The customer's comment on a rating. */
  ratingComment: declared(RateConversationRequestSchema.field.comment),
  /** The greeting of a chatbot's appearance. */
  appearanceGreeting: declared(ChatbotAppearanceSchema.field.greeting),
  /** A chatbot's texts in one language. */
  greeting: declared(ChatbotTextsSchema.field.greeting),
  awayMessage: declared(ChatbotTextsSchema.field.awayMessage),
  ratingPrompt: declared(ChatbotTextsSchema.field.ratingPrompt),
} as const;
