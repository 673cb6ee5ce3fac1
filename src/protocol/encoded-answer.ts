/** How a JSON route encodes its answers (the documented JSON, as bytes). */
export type AnswerEncoder = (answer: object) => Buffer;

/**
 * An answer already encoded by the route's encoder (`Call.encoder`), written as it is: a handler hands one out
 * when it keeps the encoding of an answer it gives again and again (a remembered page's), rather than the answer.
 */
export class EncodedAnswer {
  constructor(readonly bytes: Buffer) {}
}
