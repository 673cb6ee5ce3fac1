/**
 * Values of streamed items that many streams send as the same object (an entry of an account's log, handed to
 * every stream that follows it: domain/log/account-logs.ts). The JSON routes encode such a value once, not once per
 * stream (rest/transcoder.ts); values made for one stream only (a catch-up page) are not remembered.
 */
export const sharedValues = new WeakSet<object>();
