import { expect, it } from "vitest";

// The test run's own output is a log too (CI keeps it): test/setup/no-secrets-in-output.ts makes a test that prints
// a credential fail there. Shapes only, made up here: nothing real is printed even when the guard is broken.
const fakeJwt = ["eyJhbGciOiJFUzI1NiJ9", "eyJzdWIiOiJub2JvZHkifQ", "c2lnbmF0dXJlLW5vdC1yZWFs"].join(".");
const fakeRefresh = `rt_${"x".repeat(43)}`;
const fakeKey = `cak_${"y".repeat(43)}`;

it("a test that prints a token, a refresh token or an API key fails, through the console or straight to stdout", () => {
  for (const secret of [fakeJwt, fakeRefresh, fakeKey]) {
    expect(() => console.log(`output: ${secret}`)).toThrow(/a test wrote a credential/);
    expect(() => console.error({ token: secret })).toThrow(/a test wrote a credential/);
    expect(() => process.stdout.write(`${secret}\n`)).toThrow(/a test wrote a credential/);
  }
});

it("ordinary output still goes through", () => {
  expect(() => console.log("test output: 3 contacts, no credential")).not.toThrow();
});
