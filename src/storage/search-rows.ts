import type { SearchHit } from "../domain/conversation/search.js";

/** A search hit as both back ends read it: the message or note, with its conversation and contact. */
export interface HitRow {
  id: string;
  conversation_id: string;
  role: string;
  author_email: string;
  content: string;
  created_at: string | number;
  chatbot_id: string;
  contact_id: string;
  status: string;
  assigned_to: string;
  user_id: string;
  contact_name: string;
  chatbot_name: string | null;
}

/** A hit row as the domain reads it; `position` is the back end's own cursor after it. */
export function toSearchHit(source: SearchHit["source"], r: HitRow, position: string): SearchHit {
  return {
    source,
    id: r.id,
    conversationId: r.conversation_id,
    chatbotId: r.chatbot_id,
    chatbotName: r.chatbot_name ?? "",
    contactId: r.contact_id,
    userId: r.user_id,
    contactName: r.contact_name,
    status: r.status as SearchHit["status"],
    assignedTo: r.assigned_to,
    role: r.role,
    authorEmail: r.author_email,
    content: r.content,
    createdAt: Number(r.created_at),
    position,
  };
}
