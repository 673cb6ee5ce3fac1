import type { MessageInitShape } from "@bufbuild/protobuf";
import type { SavedReplySchema } from "../../../gen/aiagent/v1/account_service_pb.js";
import type { SavedReplies, SavedReplyRecord } from "../../domain/account/saved-replies.js";
import { isoTime } from "../../domain/time.js";
import { accountCaller } from "../auth.js";
import type { AuthorizedCall } from "../call.js";

function savedReply(r: SavedReplyRecord): MessageInitShape<typeof SavedReplySchema> {
  return {
    personal: r.ownerId !== "",
    savedReplyId: r.savedReplyId,
    shortcut: r.shortcut,
    content: r.content,
    createdAt: isoTime(r.createdAt),
    updatedAt: isoTime(r.updatedAt),
  };
}

/**
 * The AccountService's saved-reply methods; the gate admits every person, the domain keeps the shared ones' writes to
 * admins and each personal one to its owner.
 */
export function savedReplyHandlers(replies: SavedReplies) {
  return {
    async listSavedReplies(_req: unknown, call: AuthorizedCall) {
      return { data: { savedReplies: (await replies.list(accountCaller(call.auth))).map(savedReply) } };
    },
    async createSavedReply(req: { shortcut: string; content: string; personal: boolean }, call: AuthorizedCall) {
      return { data: savedReply(await replies.create(accountCaller(call.auth), req)) };
    },
    async updateSavedReply(
      req: { savedReplyId: string; shortcut?: string | undefined; content?: string | undefined },
      call: AuthorizedCall,
    ) {
      const r = await replies.update(accountCaller(call.auth), {
        savedReplyId: req.savedReplyId,
        shortcut: req.shortcut,
        content: req.content,
      });
      return { data: savedReply(r) };
    },
    async deleteSavedReply(req: { savedReplyId: string }, call: AuthorizedCall) {
      await replies.remove(accountCaller(call.auth), req.savedReplyId);
      return {};
    },
  };
}
