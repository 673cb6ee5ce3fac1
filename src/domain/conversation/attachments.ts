import { createHash, randomBytes } from "node:crypto";
import type { AccountCaller, FrameCaller } from "../caller.js";
import type { Clock } from "../clock.js";
import { DomainError, invalidArgument, notFound } from "../errors.js";
import { newId, requireUuid } from "../ids.js";
import { LIMITS } from "../limits.js";
import { optionalContent } from "../validate.js";
import { type NameOf, nameFor } from "./activity.js";
import type { ConversationCore } from "./conversation-core.js";
import type { CustomerLimits } from "./customer-limits.js";
import { webConversation } from "./customer-messages.js";
import type {
  AttachmentRepository,
  MessageAttachment,
  MessageRecord,
  MessageRole,
  NewConversation,
  NewMessage,
} from "./repository.js";

/** A file as it is to be stored: its type told by its content, an image re-encoded without its metadata. */
export interface InspectedFile {
  contentType: string;
  bytes: Uint8Array;
  width: number;
  height: number;
}

/**
 * Tells a file's type by its content and makes it safe to keep and serve (an image re-encoded, its metadata gone);
 * throws invalid_argument naming `file` for anything else. Implemented outside the domain (src/attachments/).
 */
export type FileInspector = (bytes: Uint8Array) => Promise<InspectedFile>;

/** A file sent in a request. */
export interface FileInput {
  conversationId: string;
  fileName: string;
  file: Uint8Array;
  content: string;
  idempotencyKey?: string;
}

/** Where the service serves an attachment. */
export function attachmentPath(attachmentId: string): string {
  return `/v1/attachments/${attachmentId}`;
}

/** An attachment's id: 128 random bits, so its address cannot be guessed. */
const ATTACHMENT_ID = /^[0-9a-f]{32}$/;

/**
 * The file's name as stored: its last path segment (a folder, `..` included, is dropped), without leading dots or
 * spaces; `file` when nothing is left.
 */
export function safeFileName(name: string): string {
  const last = name.split(/[/\\]/).pop() ?? "";
  const cleaned = last.replace(/^[.\s]+/, "").trim();
  return cleaned === "" ? "file" : cleaned;
}

/** The files customers and operators send: checked, stored with their message, served to its readers. */
export class Attachments {
  constructor(
    private readonly c: Pick<
      ConversationCore,
      "append" | "effectiveStatus" | "frameConversation" | "accountConversation" | "keys"
    >,
    private readonly d: {
      clock: Clock;
      files: Pick<AttachmentRepository, "file">;
      inspect: FileInspector;
      /** The largest file, in bytes (AIAGENT_ATTACHMENT_MAX_BYTES). */
      maxBytes: number;
      /** A person's display name (an operator's file names its author). */
      displayNameOf?: NameOf;
      customerLimits?: CustomerLimits;
    },
  ) {}

  /** A customer's file, in one of their conversations (a new one when none is named). */
  async send(caller: FrameCaller, input: FileInput): Promise<MessageRecord> {
    const file = await this.inspected(input.file);
    const { name, content, keyed } = this.checked(caller, "send_attachment", input);
    let start: NewConversation | undefined;
    let conversationId: string;
    let reopens = false;
    if (input.conversationId === "") {
      conversationId = newId();
      start = webConversation(caller, conversationId);
    } else {
      conversationId = requireUuid("conversation_id", input.conversationId);
      const conv = await this.c.frameConversation(caller, conversationId);
      reopens = this.c.effectiveStatus(conv) === "closed";
    }
    const { message } = await this.c.keys.once(keyed, async () => {
      await this.d.customerLimits?.message(caller.accountId, caller.userId, start !== undefined);
      return this.store(caller.accountId, conversationId, "user", name, content, file, keyed, start, reopens);
    });
    return message;
  }

  /** An operator's file; a closed conversation must be reopened first. */
  async reply(caller: AccountCaller, input: FileInput): Promise<MessageRecord> {
    const file = await this.inspected(input.file);
    const { name, content, keyed } = this.checked(caller, "reply_with_attachment", input);
    const conv = await this.c.accountConversation(caller, requireUuid("conversation_id", input.conversationId));
    const { message } = await this.c.keys.once(keyed, async () => {
      if (this.c.effectiveStatus(conv) === "closed")
        throw new DomainError("failed_precondition", "the conversation is closed; reopen it before replying");
      const author = await nameFor(this.d.displayNameOf, caller.accountId, caller.email);
      return this.store(
        caller.accountId,
        conv.conversationId,
        "operator",
        name,
        content,
        file,
        keyed,
        undefined,
        false,
        author,
      );
    });
    return message;
  }

  /** A stored file by its id (its address); not_found for any other. */
  async file(attachmentId: string) {
    const f = ATTACHMENT_ID.test(attachmentId) ? await this.d.files.file(attachmentId) : undefined;
    if (!f) throw notFound("attachment");
    return f;
  }

  private checked(caller: FrameCaller | AccountCaller, operation: string, input: FileInput) {
    if (input.fileName.trim() === "") throw invalidArgument("file_name", "is required");
    const name = safeFileName(input.fileName);
    const content = optionalContent("content", input.content, LIMITS.message);
    const keyed = this.c.keys.request(caller, input.idempotencyKey, operation, {
      conversationId: input.conversationId,
      name,
      content,
      file: createHash("sha256").update(input.file).digest("base64url"),
    });
    return { name, content, keyed };
  }

  /** The file checked first, so that a refused file is told as such whatever else the request lacks. */
  private async inspected(bytes: Uint8Array) {
    if (bytes.length === 0) throw invalidArgument("file", "is required");
    if (bytes.length > this.d.maxBytes)
      throw invalidArgument("file", `must be at most ${this.d.maxBytes} bytes (${bytes.length} given)`);
    const f = await this.d.inspect(bytes);
    // A re-encoded image may grow (a small palette PNG as a full one): the cap holds for what is kept.
    if (f.bytes.length > this.d.maxBytes)
      throw invalidArgument("file", `must be at most ${this.d.maxBytes} bytes once re-encoded (${f.bytes.length})`);
    return f;
  }

  private store(
    accountId: string,
    conversationId: string,
    role: MessageRole,
    name: string,
    content: string,
    file: InspectedFile,
    keyed: Parameters<ConversationCore["append"]>[5],
    start?: NewConversation,
    reopens = false,
    authorName = "",
  ) {
    const attachment: MessageAttachment = {
      attachmentId: randomBytes(16).toString("hex"),
      name,
      contentType: file.contentType,
      size: file.bytes.length,
      width: file.width,
      height: file.height,
    };
    const now = this.d.clock.now();
    const m: NewMessage = {
      messageId: newId(),
      role,
      content,
      toolCalls: "",
      documents: [],
      createdAt: now,
      attachments: [attachment],
      ...(authorName ? { authorName } : {}),
    };
    return this.c.append(accountId, conversationId, m, start, reopens, keyed, 0, (tx, message) =>
      tx.attachments.put({
        attachmentId: attachment.attachmentId,
        name,
        contentType: file.contentType,
        bytes: file.bytes,
        messageId: message.messageId,
        conversationId,
        accountId,
        createdAt: now,
      }),
    );
  }
}
