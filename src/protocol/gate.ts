import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import type { Call } from "./call.js";
import type { PageRequest } from "./http/pages.js";
import type { ServiceBinding } from "./rest/transcoder.js";

/**
 * The gate as a page reaches it: an RPC of the contract called in-process through the very handler the JSON and
 * Connect routes serve (field rules, declared access, limits, durability), so a page that needs a credential judged
 * or a token issued has no check, parser or limiter of its own. Its errors are the RPC's, answered by the request
 * boundary like any route's.
 */
export interface Gate {
  call<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    input: MessageInitShape<I>,
    call: Call,
  ): Promise<MessageShape<O>>;
}

/** The gate over the service bindings the server serves. */
export function createGate(bindings: readonly ServiceBinding[]): Gate {
  return {
    async call(method, input, call) {
      const binding = bindings.find((b) => b.desc.typeName === method.parent.typeName);
      const handler = binding?.handlers[method.localName];
      if (!handler) throw new Error(`the gate serves no ${method.parent.typeName}.${method.name}`);
      return (await handler(create(method.input, input) as never, call)) as never;
    },
  };
}

/**
 * A call made by the service's own server-side code on behalf of a page's visitor (the demo host playing the client's
 * server): no browser markers and no credential but what the request message carries; limits count the visitor's
 * address.
 */
export function serverCall(page: Pick<PageRequest, "peer">): Call {
  return {
    header: () => undefined,
    queryAccessToken: undefined,
    peer: page.peer,
    signal: new AbortController().signal,
    setResponseHeader: () => undefined,
    encoder: undefined,
  };
}
