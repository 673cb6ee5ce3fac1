import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/domain/clock.js";
import { KeyRing } from "../../src/domain/token/key-ring.js";
import { KeySealer } from "../../src/domain/token/key-sealer.js";
import { openPgStore, type PgStore } from "../../src/storage/postgres/index.js";
import { createTestDatabase, postgresSkipReason, type TestDatabase } from "../helpers/postgres.js";

// The first signing key is made by whichever instance finds none; instances starting together all find none.
const skip = await postgresSkipReason();
if (skip) console.warn(`signing keys on PostgreSQL skipped: ${skip}`);

const ROUNDS = 12;

describe.skipIf(skip !== undefined)("signing keys made by three instances at once on PostgreSQL", () => {
  let database: TestDatabase;
  const stores: PgStore[] = [];
  const sealer = new KeySealer(["a-test-secret-for-signing-key-races-0123456789"]);

  beforeAll(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < 3; i++) stores.push(await openPgStore(database.url, { poolSize: 3 }));
  });

  afterAll(async () => {
    for (const s of stores) await s.close();
    await database?.drop();
  });

  const open = (store: PgStore) =>
    KeyRing.open(store.signingKeys, systemClock, {
      maxTokenLifetimeMs: 60_000,
      sealer,
      transaction: store.transaction.bind(store),
    });

  it("the first key: exactly one active, and every instance signs with it, round after round", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      await stores[0]!.pool.query("DELETE FROM signing_keys");
      const rings = await Promise.all(stores.map(open));
      const active = (await stores[0]!.signingKeys.list()).filter((k) => k.retiredAt === null);
      expect(active).toHaveLength(1);
      expect(rings.map((r) => r.current.kid)).toEqual(rings.map(() => active[0]!.kid));
    }
  });

  it("rotations at once on every instance leave exactly one active key", async () => {
    const rings = await Promise.all(stores.map(open));
    for (let round = 0; round < ROUNDS; round++) {
      const kids = await Promise.all(rings.map((r) => r.rotate()));
      const active = (await stores[0]!.signingKeys.list()).filter((k) => k.retiredAt === null);
      expect(active).toHaveLength(1);
      expect(kids).toContain(active[0]!.kid);
    }
  });
});
