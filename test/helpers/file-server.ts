import { afterAll, beforeAll } from "vitest";
import { idToken } from "./flows.js";
import { startServer, type TestAccount, type TestServer } from "./server.js";

/**
 * A server started once for a test file, with up to two accounts (A and B) and their owners' ID tokens. The fields
 * are filled in before the file's first test; what was not asked for stays unset.
 */
export interface FileServer {
  s: TestServer;
  a: TestAccount;
  b: TestAccount;
  /** Account A's owner's ID token (with `idTokens`). */
  idA: string;
  /** Account B's owner's ID token (with `idTokens` and two accounts). */
  idB: string;
  /** `{ authorization: "Bearer <idA>" }` (with `idTokens`). */
  authA: Record<string, string>;
  /** `{ authorization: "Bearer <idB>" }` (with `idTokens` and two accounts). */
  authB: Record<string, string>;
}

/**
 * Registers the file's `beforeAll` that starts the server (`startServer(server)`) and makes `accounts` accounts (0, 1
 * or 2; default 1), and, with `idTokens`, signs their owners in; and the `afterAll` that closes the server and removes
 * its folder and database. Call it at the top of the file; a later `beforeAll` of the file runs after it.
 */
export function serverForFile(
  o: { server?: Parameters<typeof startServer>[0]; accounts?: 0 | 1 | 2; idTokens?: boolean } = {},
): FileServer {
  const f = {} as FileServer;
  beforeAll(async () => {
    f.s = await startServer(o.server);
    const made = await Promise.all(Array.from({ length: o.accounts ?? 1 }, () => f.s.account()));
    [f.a, f.b] = made as [TestAccount, TestAccount];
    if (!o.idTokens) return;
    [f.idA, f.idB] = (await Promise.all(made.map((m) => idToken(f.s.url, m)))) as [string, string];
    f.authA = { authorization: `Bearer ${f.idA}` };
    f.authB = { authorization: `Bearer ${f.idB}` };
  });
  afterAll(() => f.s?.close(true));
  return f;
}
