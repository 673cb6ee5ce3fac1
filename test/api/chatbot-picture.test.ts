import { describe, expect, it } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { issueTokens } from "../helpers/flows.js";
import { requestJson } from "../helpers/http.js";
import { discPng } from "../helpers/png.js";

// Issue 32: a chatbot's agent picture (docs/embedding.md), uploaded by an admin, checked by its magic bytes, served
// by this service with a fixed type, nosniff and cache headers, named by the frame's page; other accounts cannot
// touch it. SQLite and PostgreSQL.

const fx = serverForFile({ accounts: 2, idTokens: true });

const PNG = discPng(48);
const setPicture = (chatbotId: string, image: Buffer, auth = fx.authA) =>
  requestJson(fx.s.url, "POST", `/v1/account/chatbots/${chatbotId}/picture`, auth, { image: image.toString("base64") });
const chatbot = async (chatbotId = fx.a.chatbotId) =>
  (await requestJson(fx.s.url, "GET", `/v1/account/chatbots/${chatbotId}`, fx.authA)).body.data;
async function served(url: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const r = await fetch(fx.s.url + url);
  return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) };
}
async function framePage(): Promise<string> {
  const t = await issueTokens(fx.s.url, fx.a, "picture-visitor");
  const r = await fetch(`${fx.s.url}/chatbot-iframe/${fx.a.chatbotId}?access_token=${t.access_token}`);
  expect(r.status).toBe(200);
  return r.text();
}

describe("a chatbot's agent picture", () => {
  it("is uploaded by an admin, served as the image it is, and named by the chatbot and its frame", async () => {
    expect((await chatbot()).picture_url).toBe("");
    expect(await framePage()).not.toContain("data-agent-picture");

    const r = await setPicture(fx.a.chatbotId, PNG);
    expect(r.status).toBe(200);
    const url = r.body.data.picture_url as string;
    expect(url).toMatch(/^\/v1\/chatbot_pictures\/[0-9a-f]{32}$/);
    expect((await chatbot()).picture_url).toBe(url);
    expect(await framePage()).toContain(`data-agent-picture="${url}"`);

    const p = await served(url);
    expect(p.status).toBe(200);
    expect(p.bytes.equals(PNG)).toBe(true);
    expect(p.headers.get("content-type")).toBe("image/png");
    expect(p.headers.get("x-content-type-options")).toBe("nosniff");
    expect(p.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    // Its address changes with its bytes, so it may be kept; a conditional request is answered without them.
    expect(p.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const etag = p.headers.get("etag")!;
    const again = await fetch(fx.s.url + url, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);

    // Another picture: another address; the old one is no longer served.
    const next = discPng(48, [30, 120, 200]);
    const url2 = (await setPicture(fx.a.chatbotId, next)).body.data.picture_url as string;
    expect(url2).not.toBe(url);
    expect((await served(url)).status).toBe(404);
    expect((await served(url2)).bytes.equals(next)).toBe(true);
  });

  it("is told by its first bytes: PNG, JPEG and WebP are served as such", async () => {
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60, 1)]);
    const webp = Buffer.concat([
      Buffer.from("RIFF"),
      Buffer.from([40, 0, 0, 0]),
      Buffer.from("WEBPVP8 "),
      Buffer.alloc(28),
    ]);
    for (const [bytes, type] of [
      [jpeg, "image/jpeg"],
      [webp, "image/webp"],
      [PNG, "image/png"],
    ] as const) {
      const url = (await setPicture(fx.a.chatbotId, bytes)).body.data.picture_url as string;
      expect((await served(url)).headers.get("content-type")).toBe(type);
    }
  });

  it("refuses anything else, naming image, and changes nothing", async () => {
    const url = (await setPicture(fx.a.chatbotId, PNG)).body.data.picture_url as string;
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const html = Buffer.from("<!doctype html><script>alert(1)</script>");
    const gif = Buffer.from("GIF89a\x01\x00\x01\x00");
    const tooBig = Buffer.concat([PNG, Buffer.alloc(46 * 1024)]);
    for (const bad of [svg, html, gif, tooBig]) {
      const r = await setPicture(fx.a.chatbotId, bad);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe("invalid_argument");
      expect(r.body.message).toMatch(
        bad === tooBig ? /image.*at most 46080 bytes/ : /image.*must be a PNG, JPEG or WebP image/,
      );
    }
    const notBase64 = await requestJson(fx.s.url, "POST", `/v1/account/chatbots/${fx.a.chatbotId}/picture`, fx.authA, {
      image: "<svg>",
    });
    expect(notBase64.status).toBe(400);
    expect(notBase64.body.message).toContain("image");
    expect((await chatbot()).picture_url).toBe(url);
    expect((await served(url)).bytes.equals(PNG)).toBe(true);
  });

  it("is the account's own: another account's admin and an operator are refused, and nothing changes", async () => {
    const url = (await setPicture(fx.a.chatbotId, PNG)).body.data.picture_url as string;
    const theirs = await setPicture(fx.a.chatbotId, discPng(16, [0, 0, 0]), fx.authB);
    expect(theirs.status).toBe(404);
    expect(theirs.body.code).toBe("not_found");
    expect((await setPicture(fx.a.chatbotId, Buffer.alloc(0), fx.authB)).status).toBe(404);
    expect((await setPicture(fx.a.chatbotId, PNG, {})).status).toBe(401);
    expect((await chatbot()).picture_url).toBe(url);
    expect((await served(url)).bytes.equals(PNG)).toBe(true);
    // The other account's own chatbot is untouched too.
    expect(
      (await requestJson(fx.s.url, "GET", `/v1/account/chatbots/${fx.b.chatbotId}`, fx.authB)).body.data.picture_url,
    ).toBe("");
  });

  it("is removed with an empty image, and not served for a disabled chatbot", async () => {
    const url = (await setPicture(fx.a.chatbotId, PNG)).body.data.picture_url as string;
    const removed = await setPicture(fx.a.chatbotId, Buffer.alloc(0));
    expect(removed.status).toBe(200);
    expect(removed.body.data.picture_url).toBe("");
    expect((await chatbot()).picture_url).toBe("");
    const gone = await served(url);
    expect(gone.status).toBe(404);
    expect(gone.headers.get("cache-control")).toBe("no-store");
    expect(await framePage()).not.toContain("data-agent-picture");

    // A chatbot that can no longer chat shows its picture to no one.
    const bot = (
      await requestJson(fx.s.url, "POST", "/v1/account/chatbots", fx.authA, {
        name: "Short-lived",
        allowed_origins: ["https://short.example"],
      })
    ).body.data.chatbot_id as string;
    const botUrl = (await setPicture(bot, PNG)).body.data.picture_url as string;
    expect((await served(botUrl)).status).toBe(200);
    expect((await requestJson(fx.s.url, "POST", `/v1/account/chatbots/${bot}/disable`, fx.authA, {})).status).toBe(200);
    expect((await served(botUrl)).status).toBe(404);
    expect((await served("/v1/chatbot_pictures/not-an-id")).status).toBe(404);
  });
});
