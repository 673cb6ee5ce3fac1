// The part of oidc-provider's API the peer server uses (the package ships no types).
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  interface Saveable {
    save(): Promise<string>;
  }
  interface GrantInstance extends Saveable {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    Client: { find(id: string): Promise<unknown> };
    Grant: new (o: {
      accountId: string;
      clientId: string;
    }) => GrantInstance;
    RefreshToken: new (
      o: Record<string, unknown>,
    ) => Saveable;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
