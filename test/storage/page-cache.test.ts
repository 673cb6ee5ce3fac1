import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MessagePageCache, type PageForm, type StoredPage } from "../../src/domain/conversation/page-cache.js";
import { messageEffect, NEW_CONVERSATION } from "../../src/domain/conversation/rules.js";
import { newId } from "../../src/domain/ids.js";
import { type StorageFixture, storage } from "./fixture.js";

// The page cache over a real SQLite store: what it asks the store for, and how much it keeps.

let f: StorageFixture;
beforeEach(() => {
  f = storage();
});
afterEach(() => f.close());

function conversation(messages: number, content = "hello"): string {
  const a = f.account();
  const id = newId();
  for (let i = 1; i <= messages; i++)
    f.repos.conversations.append(
      id,
      { messageId: newId(), role: "user", content, toolCalls: "", documents: [], createdAt: i },
      messageEffect("user"),
      i === 1
        ? {
            conversationId: id,
            accountId: a.accountId,
            chatbotId: a.chatbotId,
            userId: "u",
            channel: "web",
            status: NEW_CONVERSATION.status,
            assignedTo: NEW_CONVERSATION.assignedTo,
          }
        : undefined,
    );
  return id;
}

/** One more customer message in the conversation. */
function appendOne(id: string): void {
  f.repos.conversations.append(
    id,
    { messageId: newId(), role: "user", content: "more", toolCalls: "", documents: [], createdAt: 99 },
    messageEffect("user"),
  );
}

/** A reader's form of a page: the page itself, as a new object each time it is made. */
const AS_READ: PageForm<StoredPage> = { build: (p) => ({ ...p }), perMessage: 600 };

/** Reads through the cache, counting what it asked the store. */
function reader(cache: MessagePageCache) {
  const asked = { counts: 0, loads: 0 };
  const read = <T = StoredPage>(id: string, offset: number, limit: number, form?: PageForm<T>) =>
    cache.read(
      id,
      offset,
      limit,
      async () => {
        asked.counts++;
        return f.repos.conversations.messageCount(id);
      },
      async () => {
        asked.loads++;
        return f.repos.conversations.messages({ conversationId: id, createdAt: 1 }, limit, offset);
      },
      (form ?? AS_READ) as PageForm<T>,
    );
  return { read, asked };
}

describe("message page cache", () => {
  it("remembers a page from its second read: then one with more after it asks nothing, a tail page one count", async () => {
    const id = conversation(5);
    const { read, asked } = reader(new MessagePageCache());
    const once = await read(id, 0, 2);
    expect(once.hasMore).toBe(true);
    const twice = await read(id, 0, 2);
    expect(asked).toEqual({ counts: 0, loads: 2 });
    expect(await read(id, 0, 2)).toBe(twice);
    expect(await read(id, 0, 2)).toBe(twice);
    expect(asked).toEqual({ counts: 0, loads: 2 });
    await read(id, 3, 10);
    const tail = await read(id, 3, 10);
    expect(tail.messages.map((m) => m.messageOrder)).toEqual([4, 5]);
    expect(await read(id, 3, 10)).toBe(tail);
    expect(asked).toEqual({ counts: 1, loads: 4 });
  });

  it("keeps at most its number of entries, dropping the least recently read", async () => {
    const ids = [conversation(3), conversation(3), conversation(3)];
    const cache = new MessagePageCache({ entries: 2, chars: 1_000_000 });
    const { read, asked } = reader(cache);
    const twice = async (id: string) => {
      await read(id, 0, 1);
      await read(id, 0, 1);
    };
    await twice(ids[0]!);
    await twice(ids[1]!);
    await read(ids[0]!, 0, 1);
    await twice(ids[2]!);
    expect(cache.size).toBe(2);
    expect(asked.loads).toBe(6);
    await read(ids[0]!, 0, 1);
    expect(asked.loads).toBe(6);
    await read(ids[1]!, 0, 1);
    expect(asked.loads).toBe(7);
  });

  it("keeps pages within its character budget, and none larger than it", async () => {
    const big = conversation(3, "x".repeat(5_000));
    const small = conversation(3, "y");
    const cache = new MessagePageCache({ entries: 100, chars: 16_000 });
    const { read, asked } = reader(cache);
    const twice = async (id: string, limit: number) => {
      await read(id, 0, limit);
      await read(id, 0, limit);
    };
    await twice(big, 10);
    expect(cache.size).toBe(0);
    await twice(big, 2);
    await twice(small, 2);
    await twice(big, 1);
    // 2 + 1 big messages (about 16,800 characters with their overhead) do not fit together: the older page went.
    expect(cache.size).toBe(2);
    const loads = asked.loads;
    await read(small, 0, 2);
    await read(big, 0, 1);
    expect(asked.loads).toBe(loads);
    await read(big, 0, 2);
    expect(asked.loads).toBe(loads + 1);
  });

  it("keeps a page in each reader's form: a second form is read from the store once, then kept beside the first", async () => {
    const id = conversation(5);
    const { read, asked } = reader(new MessagePageCache());
    let made = 0;
    const orders: PageForm<number[]> = {
      build: (p) => {
        made++;
        return p.messages.map((m) => m.messageOrder);
      },
      perMessage: 10,
    };
    await read(id, 0, 2);
    const page = await read(id, 0, 2);
    expect(asked.loads).toBe(2);
    const first = await read(id, 0, 2, orders);
    expect(first).toEqual([1, 2]);
    expect(asked.loads).toBe(3);
    expect(await read(id, 0, 2, orders)).toBe(first);
    expect(await read(id, 0, 2)).toBe(page);
    expect(asked.loads).toBe(3);
    expect(made).toBe(1);
  });

  it("a form made of a tail page that grew meanwhile is answered, not kept beside the older page's", async () => {
    const id = conversation(3);
    let made = 0;
    const orders: PageForm<number[]> = {
      build: (p) => {
        made++;
        return p.messages.map((m) => m.messageOrder);
      },
      perMessage: 10,
    };
    // The count is read (3, the clamp matches), then a message lands before the page is read for the new form.
    const cache = new MessagePageCache();
    await cache.read(
      id,
      0,
      10,
      async () => 3,
      async () => f.repos.conversations.messages({ conversationId: id, createdAt: 1 }, 10, 0),
      AS_READ,
    );
    await cache.read(
      id,
      0,
      10,
      async () => 3,
      async () => f.repos.conversations.messages({ conversationId: id, createdAt: 1 }, 10, 0),
      AS_READ,
    );
    appendOne(id);
    const grown = await cache.read(
      id,
      0,
      10,
      async () => 3,
      async () => f.repos.conversations.messages({ conversationId: id, createdAt: 1 }, 10, 0),
      orders,
    );
    expect(grown).toEqual([1, 2, 3, 4]);
    // Not kept: the next read of that form is made again from the store.
    expect(
      await cache.read(
        id,
        0,
        10,
        async () => 4,
        async () => f.repos.conversations.messages({ conversationId: id, createdAt: 1 }, 10, 0),
        orders,
      ),
    ).toEqual([1, 2, 3, 4]);
    expect(made).toBe(2);
  });

  it("does not remember pages read only once, however many", async () => {
    const id = conversation(40);
    const cache = new MessagePageCache({ entries: 4, chars: 1_000_000 });
    const { read } = reader(cache);
    for (let offset = 0; offset < 40; offset++) await read(id, offset, 1);
    expect(cache.size).toBe(0);
  });
});
