import { describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { addMember, issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson, requestJson } from "../helpers/http.js";
import { openNdjson } from "../helpers/ndjson.js";

// An operator's uploaded picture (docs/inbox.md): checked by its magic bytes, served by this service with a fixed
// type and nosniff, shown to the customer of a conversation they hold, gone with the member. SQLite and PostgreSQL.

const fx = serverForFile({ idTokens: true });

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
/** The smallest PNG: one transparent pixel. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

function setPicture(token: string, image: Buffer) {
  return postJson(fx.s.url, "/v1/account/profile/picture", { image: image.toString("base64") }, bearer(token));
}

describe("operator pictures", () => {
  test("refuses a picture address that is not https, naming avatar_url (the console no longer offers the field)", async () => {
    const r = await postJson(
      fx.s.url,
      "/v1/account/profile",
      { display_name: "Sam", avatar_url: "javascript:alert(1)" },
      bearer(fx.idA),
    );
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain("avatar_url");
  });

  test("an operator uploads a picture; it is served as an image; the customer's stream names it", async () => {
    const m = await addMember(fx.s.url, fx.idA, `pic-op-${Date.now()}@shop.example`);
    const set = await setPicture(m.idToken, PNG);
    expect(set.status).toBe(200);
    const url = set.body.data.caller_picture_url as string;
    expect(url).toMatch(/^\/v1\/operator_pictures\/[0-9a-f]{32}$/);
    expect((await getJson(fx.s.url, "/v1/account", {}, bearer(m.idToken))).body.data.caller_picture_url).toBe(url);

    const r = await fetch(fx.s.url + url);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/png");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await r.arrayBuffer()).equals(PNG)).toBe(true);

    // The member takes a conversation over: the customer's stream and list carry the picture's address.
    const t = await issueTokens(fx.s.url, fx.a, "pic-customer");
    const conv = (await send(fx.s.url, t.access_token, "hello")).conversation_id;
    const q = new URLSearchParams({ conversation_id: conv, after_message_order: "2", access_token: t.access_token });
    const watch = await openNdjson(`${fx.s.url}/watch_conversation?${q}`);
    expect((await watch.next())?.result?.conversation?.operator_picture_url).toBe("");
    await postJson(
      fx.s.url,
      "/take_over_conversation",
      { conversation_id: conv, operator_name: "Pat" },
      bearer(m.idToken),
    );
    expect((await watch.next())?.result?.conversation).toMatchObject({
      operator_name: "Pat",
      operator_picture_url: url,
    });
    await watch.cancel();
    const list = await getJson(fx.s.url, "/ai_agent/conversations", { access_token: t.access_token });
    expect(list.body.data.conversations[0].operator_picture_url).toBe(url);

    // The member removed: the picture is no longer served.
    expect((await requestJson(fx.s.url, "DELETE", `/v1/account/members/${m.memberId}`, bearer(fx.idA))).status).toBe(
      200,
    );
    expect((await fetch(fx.s.url + url)).status).toBe(404);
  });

  test("anything but a small PNG, JPEG or WebP is refused, naming image, and changes nothing", async () => {
    const ok = await setPicture(fx.idA, PNG);
    const url = ok.body.data.caller_picture_url as string;
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const html = Buffer.from("<html><script>alert(1)</script></html>");
    for (const bad of [svg, html, Buffer.concat([PNG, Buffer.alloc(46 * 1024)])]) {
      const r = await setPicture(fx.idA, bad);
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toContain("image");
    }
    const still = await fetch(fx.s.url + url);
    expect(still.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await still.arrayBuffer()).equals(PNG)).toBe(true);
    // An empty image removes it.
    expect((await setPicture(fx.idA, Buffer.alloc(0))).body.data.caller_picture_url).toBe("");
    expect((await fetch(fx.s.url + url)).status).toBe(404);
    // Without a credential: refused.
    expect((await postJson(fx.s.url, "/v1/account/profile/picture", { image: PNG.toString("base64") })).status).toBe(
      401,
    );
    expect((await fetch(`${fx.s.url}/v1/operator_pictures/not-an-id`)).status).toBe(404);
  });
});
