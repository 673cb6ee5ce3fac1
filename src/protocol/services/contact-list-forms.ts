import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type ContactSchema,
  GetContactConversationsResponseSchema,
} from "../../../gen/aiagent/v1/conversation_service_pb.js";
import type { ContactListForm, ContactPage } from "../../domain/conversation/contact-list-cache.js";
import type { ContactView } from "../../domain/conversation/repository.js";
import { isoTime } from "../../domain/time.js";
import { EncodedAnswer } from "../encoded-answer.js";

/** A contact as the list answers it. */
export function contact(c: ContactView): MessageInitShape<typeof ContactSchema> {
  return {
    contactId: c.contactId,
    contactName: c.contactName,
    phoneNumber: c.phoneNumber,
    email: c.email,
    conversationStatus: c.conversationStatus,
    assignedTo: c.assignedTo,
    unreadMessageCount: String(c.unreadCount),
    latestMessageTime: isoTime(c.latestMessageAt),
    channels: c.channels,
    userId: c.userId,
    latestConversationId: c.latestConversationId,
    latestMessagePreview: c.latestMessagePreview,
    latestMessageRole: c.latestMessageRole,
    chatbotId: c.chatbotId,
    snoozedUntil: c.snoozedUntil === null ? "" : isoTime(c.snoozedUntil),
    firstResponseDueAt: c.firstResponseDueAt === null ? "" : isoTime(c.firstResponseDueAt),
    firstResponseStatus: c.firstResponseStatus,
    priority: c.priority,
    chatbotName: c.chatbotName,
  };
}

const str = JSON.stringify;

/**
 * A contact in the documented JSON, written straight from the page: no message init, no documented-JSON object,
 * no generic stringify of them (the three were most of a list page's encoding). Fields in the message's order, every
 * one present, as the JSON routes' generic encoder writes them (test/api/contact-list-json.test.ts holds the two to
 * the same bytes).
 */
function contactJson(c: ContactView): string {
  return `{"contact_id":${str(c.contactId)},"contact_name":${str(c.contactName)},"phone_number":${str(c.phoneNumber)},"email":${str(c.email)},"conversation_status":${str(c.conversationStatus)},"assigned_to":${str(c.assignedTo)},"unread_message_count":"${c.unreadCount}","latest_message_time":"${isoTime(c.latestMessageAt)}","channels":${str(c.channels)},"user_id":${str(c.userId)},"latest_conversation_id":${str(c.latestConversationId)},"latest_message_preview":${str(c.latestMessagePreview)},"latest_message_role":${str(c.latestMessageRole)},"chatbot_id":${str(c.chatbotId)},"snoozed_until":"${c.snoozedUntil === null ? "" : isoTime(c.snoozedUntil)}","first_response_due_at":"${c.firstResponseDueAt === null ? "" : isoTime(c.firstResponseDueAt)}","first_response_status":"${c.firstResponseStatus}","priority":"${c.priority}","chatbot_name":${str(c.chatbotName)}}`;
}

/** The page's JSON answer (the `data.data` envelope). */
export function contactPageJson(p: ContactPage): string {
  let out = '{"data":{"data":{"contacts":[';
  for (let i = 0; i < p.contacts.length; i++) out += (i === 0 ? "" : ",") + contactJson(p.contacts[i]!);
  return `${out}],"has_more":${p.hasMore}}}}`;
}

/**
 * The forms a contact list page is answered in, which the list cache keeps: a JSON route gets its bytes (outside
 * the JavaScript heap), Connect and gRPC a message made once (the framework would make one of an init on every call).
 */
export const contactListForms = {
  json: {
    build: (p) => new EncodedAnswer(Buffer.from(contactPageJson(p))),
    perContact: 300,
  } satisfies ContactListForm<EncodedAnswer>,
  message: {
    build: (p) =>
      create(GetContactConversationsResponseSchema, {
        data: { data: { contacts: p.contacts.map(contact), hasMore: p.hasMore } },
      }),
    perContact: 500,
  } satisfies ContactListForm<MessageInitShape<typeof GetContactConversationsResponseSchema>>,
};
