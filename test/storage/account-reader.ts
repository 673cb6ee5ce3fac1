import { AccountLogs } from "../../src/domain/log/account-logs.js";
import { LogFeed } from "../../src/domain/log/log-feed.js";
import type { EventRecord } from "../../src/domain/log/repository.js";
import type { Store } from "../../src/domain/store.js";

/** An account's shared reader on `store` (as a watch stream has), following from place 0, with what it got. */
export async function accountReader(store: Pick<Store, "onLogAdvanced" | "events">, accountId: string) {
  const feed = new LogFeed();
  const stopFeed = await store.onLogAdvanced((changes, deliveries, placed) =>
    feed.advanced(changes, deliveries, placed),
  );
  const logs = new AccountLogs({ feed, history: store.events });
  const stop = new AbortController();
  const follower = await logs.follow(accountId, { accepts: () => true }, stop.signal);
  follower.start(0);
  const got: EventRecord[] = [];
  const run = (async () => {
    for (let page = await follower.next(); page; page = await follower.next()) got.push(...page);
  })();
  const done = () => {
    stop.abort();
    stopFeed();
    logs.close();
  };
  return { logs, got, run, done };
}
