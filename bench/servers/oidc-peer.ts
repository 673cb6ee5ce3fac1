import { generateKeyPairSync, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import Provider from "oidc-provider";

// The peer: `oidc-provider`, the certified OpenID provider for Node, configured for the same work as the service's
// token endpoints: ES256 JWT access tokens for one resource (a resource indicator), refresh tokens not rotated,
// its default in-memory adapter. Usage: node oidc-peer.js <fixtures.json> <refresh tokens>; writes the client
// credentials and that many refresh tokens to <fixtures.json>, then prints "ready <url>" once listening.
const [out, countArg] = process.argv.slice(2);
if (!out) throw new Error("usage: oidc-peer.js <fixtures.json> [refresh tokens]");
const count = Number(countArg ?? 64);

const RESOURCE = "https://api.bench.example";
const SCOPE = "chat";
// Matches the service's default access-token lifetime (AIAGENT_ACCESS_TOKEN_TTL, 15 minutes).
const ACCESS_TTL = 15 * 60;

const signing = {
  ...generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" }),
  alg: "ES256",
  use: "sig",
  kid: "bench-es256",
};
const secret = randomBytes(32).toString("base64url");

const server = createServer();
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", async () => {
  const { port } = server.address() as { port: number };
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      // S4's peer: a confidential client exchanging its secret for an access token (stores nothing).
      {
        client_id: "bench-service",
        client_secret: secret,
        grant_types: ["client_credentials"],
        response_types: [],
        redirect_uris: [],
      },
      // S5's peer: a public client (like the frame, which holds only its refresh token) refreshing.
      {
        client_id: "bench-frame",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        redirect_uris: ["https://frame.bench.example/callback"],
      },
    ],
    // Only an ES256 key is configured (the service signs ES256): every client says so.
    clientDefaults: { id_token_signed_response_alg: "ES256", grant_types: [], response_types: [] },
    jwks: { keys: [signing] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    scopes: ["openid", "offline_access", SCOPE],
    rotateRefreshToken: false,
    enabledJWA: { idTokenSigningAlgValues: ["ES256"] },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: SCOPE,
          audience: RESOURCE,
          accessTokenTTL: ACCESS_TTL,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "ES256" } },
        }),
      },
    },
  });
  // Refresh tokens as an authorization-code flow would have left them (that flow is interactive: minted here).
  const client = await provider.Client.find("bench-frame");
  const refreshTokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const accountId = `cust_${i.toString(36).padStart(5, "0")}`;
    const grant = new provider.Grant({ accountId, clientId: "bench-frame" });
    grant.addOIDCScope("offline_access");
    grant.addResourceScope(RESOURCE, SCOPE);
    const grantId = await grant.save();
    const rt = new provider.RefreshToken({
      client,
      accountId,
      grantId,
      gty: "authorization_code",
      scope: `offline_access ${SCOPE}`,
      resource: RESOURCE,
    });
    refreshTokens.push(await rt.save());
  }
  writeFileSync(
    out,
    JSON.stringify({
      resource: RESOURCE,
      scope: SCOPE,
      clientId: "bench-service",
      clientSecret: secret,
      refreshClientId: "bench-frame",
      refreshTokens,
    }),
  );
  server.on("request", provider.callback());
  process.stdout.write(`ready ${issuer}\n`);
});
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
