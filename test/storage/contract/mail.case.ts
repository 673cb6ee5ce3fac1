import { describe, expect, it } from "vitest";
import { newId } from "../../../src/domain/ids.js";
import type { MailRecord } from "../../../src/domain/mail/repository.js";
import type { Harness } from "./harness.js";

const mail = (accountId: string, recipient: string, dedupeKey: string, at: number): MailRecord => ({
  mailId: newId(),
  accountId,
  kind: "reply",
  recipient,
  dedupeKey,
  data: "{}",
  status: "pending",
  attempts: 0,
  lastError: "",
  nextAttemptAt: at,
  lastAttemptAt: null,
  createdAt: at,
  sentAt: null,
  unsubscribeHash: "",
  unsubscribedAt: null,
});

/** The e-mail outbox: queued once per key, leased to one sender, retried, unsubscribed, counted per account. */
export function mailCases(h: () => Harness) {
  describe("mail outbox", () => {
    it("queues a key once, leases due mails to one sender, and records sends and failures", async () => {
      const { store } = h();
      const [a, b] = [newId(), newId()];
      const first = mail(a, "ann@example.com", "reply:1", 100);
      expect(await store.mail.enqueue(first)).toBe(true);
      expect(await store.mail.enqueue({ ...mail(a, "ann@example.com", "reply:1", 100) })).toBe(false);
      expect(await store.mail.enqueue(mail(b, "ann@example.com", "reply:1", 100))).toBe(true);
      const later = mail(a, "bob@example.com", "reply:2", 500);
      await store.mail.enqueue(later);

      expect(await store.mail.claim(99, 200, 10)).toEqual([]);
      const claimed = await store.mail.claim(100, 200, 10);
      expect(claimed.map((m) => m.accountId).sort()).toEqual([a, b].sort());
      expect(claimed.every((m) => m.attempts === 1 && m.nextAttemptAt === 200)).toBe(true);
      // Leased: nobody else takes them before the lease ends.
      expect(await store.mail.claim(150, 300, 10)).toEqual([]);

      const bs = claimed.find((m) => m.accountId === b)!;
      await store.mail.markSent(bs.mailId, 150);
      await store.mail.markFailed(first.mailId, "relay refused", 150, 400);
      expect(await store.mail.counts(a)).toEqual({
        pending: 2,
        failed: 0,
        lastError: "relay refused",
        lastErrorAt: 150,
      });
      const again = await store.mail.claim(450, 600, 10);
      expect(again.map((m) => m.mailId)).toEqual([first.mailId]);
      expect(again[0]!.attempts).toBe(2);
      await store.mail.markSent(first.mailId, 460);
      const sent = await store.mail.get(a, first.mailId);
      expect(sent).toMatchObject({ status: "sent", sentAt: 460, nextAttemptAt: null, attempts: 2 });
      // Another account's mail is not read through this one.
      expect(await store.mail.get(b, first.mailId)).toBeUndefined();

      const [bobs] = await store.mail.claim(500, 700, 10);
      expect(bobs!.mailId).toBe(later.mailId);
      await store.mail.markFailed(later.mailId, "mailbox unavailable", 510, null);
      expect(await store.mail.counts(a)).toEqual({
        pending: 0,
        failed: 1,
        lastError: "mailbox unavailable",
        lastErrorAt: 510,
      });
      // A late report of an attempt does not bring back a mail that is done.
      await store.mail.markFailed(first.mailId, "late", 520, 600);
      expect((await store.mail.get(a, first.mailId))!.status).toBe("sent");
      const all = await store.mail.counts(undefined);
      expect(all.pending).toBe(0);
      expect(all.failed).toBe(1);
      expect(all.lastError).toBe("mailbox unavailable");
    });

    it("unsubscribes a recipient from one account's mail, cancelling what is pending", async () => {
      const { store } = h();
      const [a, b] = [newId(), newId()];
      const sentOne = mail(a, "cat@example.com", "reply:1", 100);
      const pending = mail(a, "cat@example.com", "reply:2", 100);
      const otherAccount = mail(b, "cat@example.com", "reply:1", 100);
      for (const m of [sentOne, pending, otherAccount]) await store.mail.enqueue(m);
      await store.mail.setUnsubscribeHash(sentOne.mailId, "hash-1");
      expect(await store.mail.unsubscribe("nothing", 200)).toBeUndefined();
      expect(await store.mail.unsubscribe("", 200)).toBeUndefined();
      expect(await store.mail.unsubscribed(a, "cat@example.com")).toBe(false);
      expect(await store.mail.unsubscribe("hash-1", 200)).toEqual({ accountId: a, recipient: "cat@example.com" });
      // Twice is harmless.
      expect(await store.mail.unsubscribe("hash-1", 300)).toEqual({ accountId: a, recipient: "cat@example.com" });
      expect(await store.mail.unsubscribed(a, "cat@example.com")).toBe(true);
      expect(await store.mail.unsubscribed(b, "cat@example.com")).toBe(false);
      expect((await store.mail.get(a, pending.mailId))!.status).toBe("cancelled");
      expect((await store.mail.get(a, sentOne.mailId))!.unsubscribedAt).toBe(200);
      expect((await store.mail.get(b, otherAccount.mailId))!.status).toBe("pending");
      expect(await store.mail.enqueue(mail(a, "cat@example.com", "reply:3", 400))).toBe(false);
      const third = mail(b, "cat@example.com", "reply:3", 400);
      expect(await store.mail.enqueue(third)).toBe(true);
      await store.mail.cancel(third.mailId, "the customer came back", 410);
      expect(await store.mail.get(b, third.mailId)).toMatchObject({ status: "cancelled", nextAttemptAt: null });
      expect(await store.mail.claim(1000, 2000, 10)).toHaveLength(1); // otherAccount's, still pending
      expect((await store.mail.counts(b)).lastError).toBe("");
    });

    it("erasing the customer removes their mails, keeping only that they unsubscribed", async () => {
      const { store } = h();
      const a = newId();
      const [kept, gone] = [mail(a, "dee@example.com", "reply:1", 100), mail(a, "dee@example.com", "reply:2", 100)];
      kept.data = '{"content":"your parcel"}';
      gone.data = '{"content":"your parcel"}';
      const other = mail(a, "eve@example.com", "reply:3", 100);
      other.data = '{"content":"hers"}';
      for (const m of [kept, gone, other]) await store.mail.enqueue(m);
      await store.mail.setUnsubscribeHash(kept.mailId, "hash-dee");
      await store.mail.unsubscribe("hash-dee", 150);
      const contact = {
        contactId: newId(),
        accountId: a,
        userId: "dee",
        contactName: "",
        phoneNumber: "",
        createdAt: 1,
      };
      await store.privacy.erase({ ...contact, email: "Dee@Example.com" }, 200);
      expect(await store.mail.get(a, gone.mailId)).toBeUndefined();
      expect((await store.mail.get(a, kept.mailId))!.data).toBe("{}");
      expect(await store.mail.unsubscribed(a, "dee@example.com")).toBe(true);
      // Another customer's mail is left whole.
      expect((await store.mail.get(a, other.mailId))!.data).toBe('{"content":"hers"}');
    });
  });
}
