import { createHash } from "node:crypto";
import type { AccountCaller } from "../caller.js";
import { notFound } from "../errors.js";
import type { AccountService } from "./account-service.js";
import { requirePicture, type StoredPicture } from "./operator-picture.js";
import type { ChatbotRecord, ChatbotRepository } from "./repository.js";

/** Where the service answers a chatbot's agent picture (the frame's CSP allows the service's own images). */
export function chatbotPicturePath(pictureId: string): string {
  return `/v1/chatbot_pictures/${pictureId}`;
}

/** The address of the chatbot's picture; "" when it has none. */
export function chatbotPictureUrl(c: ChatbotRecord): string {
  return c.pictureId ? chatbotPicturePath(c.pictureId) : "";
}

/**
 * A picture's id: of the chatbot and of the bytes, so a new picture gets a new address (the route lets it be cached
 * for good). Unguessable without the account's id; it tells nothing but the picture, which customers see anyway.
 */
function pictureIdOf(c: ChatbotRecord, bytes: Uint8Array): string {
  return createHash("sha256")
    .update(`chatbot\n${c.accountId}\n${c.chatbotId}\n`)
    .update(bytes)
    .digest("hex")
    .slice(0, 32);
}

/** The agents' pictures: set by the chatbot's admins, served to anyone with the address (its frame's customers). */
export class ChatbotPictures {
  constructor(
    private readonly d: {
      accounts: Pick<AccountService, "chatbot">;
      chatbots: Pick<ChatbotRepository, "setPicture" | "picture">;
    },
  ) {}

  /** Sets the picture of the caller's chatbot; empty bytes remove it. Another account's chatbot is not_found. */
  async set(caller: AccountCaller, chatbotId: string, bytes: Uint8Array): Promise<ChatbotRecord> {
    // The image first, as any input: a bad one is refused alike whoever's the chatbot is.
    const contentType = bytes.length === 0 ? undefined : requirePicture(bytes);
    const c = await this.d.accounts.chatbot(caller, chatbotId);
    const picture: StoredPicture | undefined = contentType && { pictureId: pictureIdOf(c, bytes), contentType, bytes };
    if (!(await this.d.chatbots.setPicture(c.accountId, c.chatbotId, picture)))
      throw notFound(`chatbot ${c.chatbotId}`);
    return { ...c, pictureId: picture?.pictureId ?? "" };
  }

  /** An active chatbot's picture; not_found otherwise (a disabled chatbot's frame shows nothing either). */
  async get(pictureId: string): Promise<StoredPicture> {
    const p = /^[0-9a-f]{32}$/.test(pictureId) ? await this.d.chatbots.picture(pictureId) : undefined;
    if (!p) throw notFound("picture");
    return p;
  }
}
