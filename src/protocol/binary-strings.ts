import { configureTextEncoding, getTextEncoding } from "@bufbuild/protobuf/wire";

const pooled = (text: string) => Buffer.from(text, "utf8");

/**
 * protobuf-es writes every string field of a binary message (gRPC, gRPC-Web and Connect's proto form) through
 * `TextEncoder.encode`, which in Node allocates a new ArrayBuffer per string: a third of `toBinary`'s time for the
 * frame read's 20-message page. `Buffer.from` takes small strings from Node's pooled slab and gives the same bytes
 * (both write a lone surrogate as U+FFFD); the writer copies each chunk into the message's own bytes, so no slab is
 * handed out. The setting is process-wide (protobuf-es keeps it on `globalThis`); decoding stays as it is.
 */
export function poolBinaryStrings(): void {
  const stock = getTextEncoding();
  if (stock.encodeUtf8 === pooled) return;
  configureTextEncoding({
    encodeUtf8: pooled,
    decodeUtf8: (bytes, strict) => stock.decodeUtf8(bytes, strict),
    checkUtf8: (text) => stock.checkUtf8(text),
  });
}
