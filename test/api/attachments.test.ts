import { describe, expect, test } from "vitest";
import { serverForFile } from "../helpers/file-server.js";
import { issueTokens, send } from "../helpers/flows.js";
import { getJson, postJson } from "../helpers/http.js";
import { gpsTagCount, gpsTaggedJpeg, imageInfo } from "../helpers/images.js";

// Files in conversations (docs/attachments.md): the customer sends one from the frame, an operator from the console;
// the type is told by the content, an image is re-encoded without its metadata, the file is served to the
// conversation's readers only and can run nothing, and it goes with its message. SQLite and PostgreSQL.

const MAX = 64 * 1024;
const fx = serverForFile({
  accounts: 2,
  idTokens: true,
  server: { env: { AIAGENT_ATTACHMENT_MAX_BYTES: String(MAX) } },
});

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const ELF = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(120)]);
const PE = Buffer.concat([Buffer.from("MZ"), Buffer.alloc(200)]);
const PDF = Buffer.from("%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n");

/** The customer's upload, on the frame's JSON route. */
function upload(token: string, fileName: string, file: Uint8Array, conversationId?: string, content?: string) {
  return postJson(`${fx.s.url}`, `/ai_agent/send_attachment?access_token=${encodeURIComponent(token)}`, {
    file_name: fileName,
    file: b64(file),
    ...(conversationId ? { conversation_id: conversationId } : {}),
    ...(content ? { content } : {}),
  });
}

async function customer(name: string) {
  const userId = `${name}-${Date.now()}`;
  const t = await issueTokens(fx.s.url, fx.a, userId);
  const conv = (await send(fx.s.url, t.access_token, "My parcel arrived damaged")).conversation_id as string;
  return { token: t.access_token as string, conv, userId };
}

const messagesOf = async (conv: string, auth = fx.authA) =>
  (await getJson(fx.s.url, "/get_messages_for_conversation", { conversation_id: conv }, auth)).body.messages ?? [];

describe("attachments", () => {
  test("a GPS-tagged photo from the frame is stored without its metadata and served sandboxed to both sides", async () => {
    const photo = await gpsTaggedJpeg();
    expect(await gpsTagCount(photo)).toBe(4);
    const c = await customer("photo");
    const r = await upload(c.token, "IMG_0001.jpg", photo, c.conv, "Here is the box");
    expect(r.status).toBe(200);
    const sent = r.body.data;
    expect(sent).toMatchObject({ role: "user", content: "Here is the box", conversation_id: c.conv, documents: [] });
    const [a] = sent.attachments;
    expect(a).toMatchObject({ name: "IMG_0001.jpg", content_type: "image/jpeg", width: 64, height: 48 });
    expect(a.url).toBe(`/v1/attachments/${a.attachment_id}`);
    expect(a.attachment_id).toMatch(/^[0-9a-f]{32}$/);

    const served = await fetch(fx.s.url + a.url);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/jpeg");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(served.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    expect(served.headers.get("content-disposition")).toBe(
      `inline; filename="IMG_0001.jpg"; filename*=UTF-8''IMG_0001.jpg`,
    );
    const bytes = new Uint8Array(await served.arrayBuffer());
    expect(bytes.length).toBe(a.size);
    expect(await gpsTagCount(bytes)).toBe(0);
    expect(await imageInfo(bytes)).toEqual({ format: "jpeg", width: 64, height: 48 });
    expect(Buffer.from(bytes).includes(Buffer.from("PhoneCam"))).toBe(false);

    // The operators' inbox and the customer's own list carry the same file; `documents` stays the citations.
    const inbox = (await messagesOf(c.conv)).find((m: { message_id: string }) => m.message_id === sent.message_id);
    expect(inbox.attachments).toEqual(sent.attachments);
    const own = await getJson(fx.s.url, "/get_messages_for_conversation", {
      conversation_id: c.conv,
      access_token: c.token,
    });
    expect(own.body.messages.at(-1).attachments).toEqual(sent.attachments);
  });

  test("an operator sends a PDF: it is a download, never opened in the service's origin", async () => {
    const c = await customer("label");
    const r = await postJson(
      fx.s.url,
      "/reply_with_attachment",
      { conversation_id: c.conv, file_name: "return label.pdf", file: b64(PDF) },
      fx.authA,
    );
    expect(r.status).toBe(200);
    const [a] = r.body.data.attachments;
    expect(r.body.data.role).toBe("operator");
    expect(a).toMatchObject({ content_type: "application/pdf", size: PDF.length, width: 0, height: 0 });
    const served = await fetch(fx.s.url + a.url);
    expect(served.headers.get("content-type")).toBe("application/pdf");
    expect(served.headers.get("content-disposition")).toBe(
      `attachment; filename="return label.pdf"; filename*=UTF-8''return%20label.pdf`,
    );
    expect(Buffer.from(await served.arrayBuffer()).equals(PDF)).toBe(true);
  });

  test("a renamed executable, an unreadable image and an over-large file are refused, naming file; nothing is stored", async () => {
    const c = await customer("refused");
    const before = (await messagesOf(c.conv)).length;
    const gifScript = Buffer.from("GIF89a/*<script>alert(1)</script>*/");
    for (const [name, bytes, says] of [
      ["photo.jpg", ELF, "application/x-elf"],
      ["photo.jpg", PE, "application/x-msdownload"],
      ["cat.gif", gifScript, "not a readable GIF image"],
      ["notes.txt", Buffer.from("<svg onload=alert(1)>"), "markup (HTML, SVG or XML)"],
      ["big.txt", Buffer.alloc(MAX + 1, "a"), `must be at most ${MAX} bytes`],
      ["empty.txt", Buffer.alloc(0), "is required"],
    ] as const) {
      const r = await upload(c.token, name, bytes, c.conv);
      expect(r.status, name).toBe(400);
      const text = JSON.stringify(r.body);
      expect(text).toContain("file");
      expect(text).toContain(says);
    }
    expect(await messagesOf(c.conv)).toHaveLength(before);
  });

  test("a path in the name is dropped; a polyglot keeps only its image, or is served as a sandboxed download", async () => {
    const c = await customer("names");
    const text = await upload(c.token, "../../etc/passwd.txt", Buffer.from("root:x:0:0\n"), c.conv);
    expect(text.body.data.attachments[0]).toMatchObject({
      name: "passwd.txt",
      content_type: "text/plain; charset=utf-8",
    });
    const served = await fetch(fx.s.url + text.body.data.attachments[0].url);
    expect(served.headers.get("content-disposition")).toMatch(/^attachment; filename="passwd.txt"/);

    // A JPEG with a page after its end: re-encoded, only the pixels remain.
    const html = Buffer.from("<html><script>alert(document.domain)</script></html>");
    const poly = await upload(c.token, "x.html", Buffer.concat([await gpsTaggedJpeg(), html]), c.conv);
    expect(poly.status).toBe(200);
    const img = poly.body.data.attachments[0];
    expect(img).toMatchObject({ content_type: "image/jpeg", name: "x.html" });
    const bytes = Buffer.from(await (await fetch(fx.s.url + img.url)).arrayBuffer());
    expect(bytes.includes(Buffer.from("<script"))).toBe(false);

    // A PDF that is also a ZIP: kept as a PDF, served as a download in a sandbox.
    const pdfZip = Buffer.concat([PDF, Buffer.from("504b0304", "hex"), Buffer.alloc(40)]);
    const pz = await upload(c.token, "invoice.pdf", pdfZip, c.conv);
    const pzServed = await fetch(fx.s.url + pz.body.data.attachments[0].url);
    expect(pzServed.headers.get("content-type")).toBe("application/pdf");
    expect(pzServed.headers.get("content-disposition")).toMatch(/^attachment;/);
    expect(pzServed.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
  });

  test("another account's operator gets 404 for the conversation and its files; a guessed address is 404", async () => {
    const c = await customer("cross");
    const r = await upload(c.token, "box.jpg", await gpsTaggedJpeg(), c.conv);
    const url = r.body.data.attachments[0].url as string;
    const other = await getJson(fx.s.url, "/get_messages_for_conversation", { conversation_id: c.conv }, fx.authB);
    expect(other.status).toBe(404);
    const reply = await postJson(
      fx.s.url,
      "/reply_with_attachment",
      { conversation_id: c.conv, file_name: "x.txt", file: b64(Buffer.from("hi")) },
      fx.authB,
    );
    expect(reply.status).toBe(404);
    for (const guess of ["0123456789abcdef0123456789abcdef", "..%2F..%2Fetc%2Fpasswd", `${url.slice(-32)}x`])
      expect((await fetch(`${fx.s.url}/v1/attachments/${guess}`)).status).toBe(404);
    // The owner's file is untouched by the attempts.
    expect((await fetch(fx.s.url + url)).status).toBe(200);
  });

  test("the export carries the files; erasure leaves no file behind", async () => {
    const c = await customer("erase");
    const r = await upload(c.token, "box.jpg", await gpsTaggedJpeg(), c.conv);
    const a = r.body.data.attachments[0];
    const stored = Buffer.from(await (await fetch(fx.s.url + a.url)).arrayBuffer());

    const exported = await getJson(fx.s.url, "/v1/account/contacts/export", { user_id: c.userId }, fx.authA);
    expect(exported.status).toBe(200);
    const files = exported.body.data.conversations.flatMap((v: { messages: { attachments?: unknown[] }[] }) =>
      v.messages.flatMap((m) => m.attachments ?? []),
    );
    expect(files).toEqual([
      {
        attachment_id: a.attachment_id,
        name: "box.jpg",
        content_type: "image/jpeg",
        content: stored.toString("base64"),
      },
    ]);

    const erased = await postJson(fx.s.url, "/v1/account/contacts/erase", { user_id: c.userId }, fx.authA);
    expect(erased.status).toBe(200);
    expect((await fetch(fx.s.url + a.url)).status).toBe(404);
    expect(await fx.s.app.store.attachments.file(a.attachment_id)).toBeUndefined();
    expect(await fx.s.app.store.attachments.ofConversations([c.conv])).toEqual([]);
  });
});
