/** How a JSON route encodes its answers (the documented JSON, as bytes). */
export type AnswerEncoder = (answer: object) => Buffer;

/**
 * An answer already encoded as the route's encoder (`Call.encoder`) would, written as it is: a handler hands one out
 * when it keeps the encoding of an answer it gives again and again (a remembered page's), or writes a small answer's
 * JSON itself (the token endpoints'), rather than the answer. Text is the JSON itself, sent as UTF-8.
 */
export class EncodedAnswer {
  constructor(readonly bytes: Buffer | string) {}
}
