import type { MailService as MailServiceDesc } from "../../../gen/aiagent/v1/mail_service_pb.js";
import type { MailDesk } from "../../domain/mail/mail-desk.js";
import { isoTime } from "../../domain/time.js";
import { accountCaller, anyCaller, frameCaller } from "../auth.js";
import type { Handlers } from "../call.js";

/** The MailService methods: the frame user's own address, transcripts, and the account's outbox for its admins. */
export function mailHandlers(desk: MailDesk): Handlers<typeof MailServiceDesc> {
  return {
    async getFrameContact(_req, call) {
      return { data: await desk.frameContact(frameCaller(call.auth)) };
    },
    async setFrameContactEmail(req, call) {
      return { data: await desk.setFrameEmail(frameCaller(call.auth), req.email) };
    },
    async sendTranscript(req, call) {
      return { data: await desk.sendTranscript(anyCaller(call.auth), req.conversationId, req.locale) };
    },
    async getMailStatus(_req, call) {
      const s = await desk.status(accountCaller(call.auth));
      return {
        data: {
          relayConfigured: s.relayConfigured,
          pending: s.pending,
          failed: s.failed,
          lastError: s.lastError,
          lastErrorAt: s.lastErrorAt === null ? "" : isoTime(s.lastErrorAt),
        },
      };
    },
  };
}
