import { type DescField, type DescMethod, type DescService, getOption, hasOption } from "@bufbuild/protobuf";
import { access, Credential, Role } from "../../gen/aiagent/v1/access_pb.js";
import { deferred } from "../domain/streams.js";
import { credentialSubject, frameSubjects, idTokenSubjects } from "../domain/token/credential-changes.js";
import type { Authenticator } from "./auth.js";
import {
  type AnyHandler,
  type Authorized,
  type AuthorizedCall,
  type Call,
  type ClientGone,
  ForwardedCall,
} from "./call.js";
import { type Holder, REVOKING_METHODS, REVOKING_WHEN_REFUSED, recheckCall, type StreamGuard } from "./stream-guard.js";

/** An RPC's declared access, as the gate enforces it. */
export interface AccessRule {
  credentials: ReadonlySet<Credential>;
  role: Role;
  serverOnly: boolean;
  /** Only the service's own pages may call it (the console's CSRF header, same-origin Fetch Metadata). */
  sameOrigin: boolean;
}

/** The contract has an RPC without a usable access declaration: the server does not start. */
export class AccessDeclarationError extends Error {
  override readonly name = "AccessDeclarationError";
}

/** Reads an RPC's `(aiagent.v1.access)` option; refuses a missing or incoherent one. */
export function accessRule(m: DescMethod): AccessRule {
  const name = `${m.parent.typeName}.${m.name}`;
  if (!hasOption(m, access))
    throw new AccessDeclarationError(`${name} declares no (aiagent.v1.access): say who may call it in the contract`);
  const a = getOption(m, access);
  const credentials = new Set(a.credentials);
  if (credentials.size === 0 || credentials.has(Credential.UNSPECIFIED))
    throw new AccessDeclarationError(`${name}: (aiagent.v1.access) must name at least one credential`);
  if (credentials.has(Credential.PUBLIC) && credentials.size > 1)
    throw new AccessDeclarationError(`${name}: PUBLIC cannot be combined with other credentials`);
  const idToken = credentials.has(Credential.ID_TOKEN);
  if (idToken !== (a.role !== Role.UNSPECIFIED))
    throw new AccessDeclarationError(`${name}: a role is declared exactly when ID_TOKEN is accepted`);
  return { credentials, role: a.role, serverOnly: a.serverOnly, sameOrigin: a.sameOrigin };
}

/**
 * The one place every protocol passes (the Connect/gRPC/gRPC-Web routes and the JSON routes call these very
 * handlers): each RPC's declared access is checked before its handler runs, and the caller handed to it. A
 * service with an RPC that declares no access, or has no handler, refuses to be served.
 */
export function guardService(
  desc: DescService,
  handlers: Record<string, (req: never, call: AuthorizedCall) => unknown>,
  auth: Authenticator,
  streams?: StreamGuard,
): Record<string, AnyHandler> {
  const out: Record<string, AnyHandler> = {};
  for (const m of desc.methods) {
    const rule = accessRule(m);
    const h = handlers[m.localName];
    if (!h) throw new AccessDeclarationError(`${desc.typeName}.${m.name} has no handler`);
    const tokenField = m.input.fields.find((f) => f.name === "access_token");
    const keyField = m.input.fields.find((f) => f.name === "client_api_key");
    const admit = (req: Record<string, unknown>, call: Call) =>
      auth.admit(rule, call, { accessToken: fieldValue(req, tokenField), clientApiKey: fieldValue(req, keyField) });
    const authorized = (call: Call, a: Authorized, stop?: AbortController): AuthorizedCall =>
      new AdmittedCall(call, a, stop);
    const revokedWhenRefused = REVOKING_WHEN_REFUSED.has(m.name);
    out[m.localName] = (
      m.methodKind === "server_streaming"
        ? (req: Record<string, unknown>, call: Call) =>
            // Admitted, then the guarded stream itself: no generator of the gate between its events and the client.
            deferred(async () => {
              // Read before the check: a change of the credentials applied meanwhile has the stream checked again.
              const generation = streams?.generation ?? 0;
              const a = await admit(req, call);
              const open = (_signal?: AbortSignal, stop?: AbortController) =>
                h(req as never, authorized(call, a, stop)) as AsyncIterable<unknown>;
              // A stream with a credential stays governed by it: the same check runs again while it is open.
              if (!streams || !a.caller) return open();
              const quiet = recheckCall(call);
              return streams.run(
                `${m.name} ${a.tokenKey}`,
                holderOf(a, generation),
                () => admit(req, quiet),
                call.onClientGone && call.offClientGone ? (call as ClientGone) : call.signal,
                open,
              );
            })
        : revokedWhenRefused && streams
          ? async (req: Record<string, unknown>, call: Call) => {
              const a = await admit(req, call);
              try {
                return await h(req as never, authorized(call, a));
              } catch (e) {
                // The refusal may have revoked (a retired refresh token presented again): settled before it leaves.
                await streams.told().catch(() => undefined);
                throw e;
              }
            }
          : streams && REVOKING_METHODS.has(m.name)
            ? async (req: Record<string, unknown>, call: Call) => {
                const a = await admit(req, call);
                const out = await h(req as never, authorized(call, a));
                // This instance's streams learn of the change before its answer leaves (the others on the channel).
                await streams.told().catch(() => undefined);
                return out;
              }
            : (req: Record<string, unknown>, call: Call) =>
                // One reaction on the admission, not an async function awaiting it; the handler's promise is adopted,
                // not awaited (an await costs more than its adoption does).
                admit(req, call).then((a) => h(req as never, authorized(call, a)))
    ) as AnyHandler;
  }
  return out;
}

/**
 * The call with the gate's finding; delegates the rest (the signal stays lazy: made only when asked for), or, for a
 * guarded stream, answers the guard's signal (which also aborts when the credential dies) and its controller.
 */
class AdmittedCall extends ForwardedCall implements AuthorizedCall {
  constructor(
    call: Call,
    readonly auth: Authorized,
    readonly stop?: AbortController,
  ) {
    super(call);
  }
  override get signal(): AbortSignal {
    return this.stop?.signal ?? this.call.signal;
  }
}

/** A string field's value, also when it is a member of a oneof (GetIdToken's API key is). */
function fieldValue(req: Record<string, unknown>, f: DescField | undefined): string | undefined {
  if (!f) return undefined;
  if (f.oneof) {
    const o = req[f.oneof.localName] as { case?: string; value?: unknown } | undefined;
    return o?.case === f.localName && typeof o.value === "string" ? o.value : undefined;
  }
  const v = req[f.localName];
  return typeof v === "string" ? v : undefined;
}

/** How the stream guard indexes a stream's credential: the change subjects that may fail its check. */
function holderOf(a: Authorized, generation: number): Holder {
  const c = a.caller;
  const subjects = c?.kind === "frame" ? frameSubjects(c) : a.idClaims ? idTokenSubjects(a.idClaims) : [];
  if (c?.kind === "account" && !a.idClaims) subjects.push(credentialSubject.account(c.accountId));
  return { subjects, expiresAt: a.expiresAt, timeBound: !!a.idClaims?.apiKeyId, generation };
}
