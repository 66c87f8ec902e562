/**
 * A real OpenID provider for tests: panva's `oidc-provider` on an ephemeral loopback port, with its
 * own RSA signing key (published at its JWKS) and two confidential clients. The login and consent
 * pages are replaced by a handler that signs in whichever subject the test asked for, so the
 * authorization-code flow (PKCE, nonce) runs over HTTP without a browser.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import Provider from 'oidc-provider';

export interface TestOidcClient {
  readonly clientId: string;
  readonly clientSecret: string;
}

export interface TestOidcProvider {
  readonly issuer: string;
  readonly tokenUrl: string;
  readonly userInfoUrl: string;
  /** Where codes are sent (never dialled: the test reads the code from the redirect). */
  readonly redirectUri: string;
  readonly clients: readonly [TestOidcClient, TestOidcClient];
  /** The authorization-code flow for `sub` with consent given; returns the code. */
  authorize(o: { clientId: string; sub: string; nonce: string; codeChallenge: string }): Promise<string>;
  /** authorize + the client's own code exchange: the provider's id_token for `sub`. */
  idToken(o: { clientId: string; sub: string; nonce: string }): Promise<string>;
  /** A JWT over `claims` signed with this provider's own published key (e.g. one already expired). */
  sign(claims: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export const pkcePair = (): { verifier: string; challenge: string } => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** A cookie jar just good enough for one flow: name → value, every cookie sent back everywhere. */
class Jar {
  readonly #c = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair ?? '').indexOf('=');
      if (eq <= 0) continue;
      const name = (pair as string).slice(0, eq).trim();
      const value = (pair as string).slice(eq + 1).trim();
      if (value === '') this.#c.delete(name);
      else this.#c.set(name, value);
    }
  }
  header(): string {
    return [...this.#c].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export async function startOidcProvider(): Promise<TestOidcProvider> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const jwk: JWK = {
    ...(await exportJWK(privateKey)),
    kid: `test-${randomBytes(4).toString('hex')}`,
    alg: 'RS256',
    use: 'sig',
  };
  const clients: [TestOidcClient, TestOidcClient] = [
    { clientId: 'app-client', clientSecret: randomBytes(16).toString('hex') },
    { clientId: 'other-client', clientSecret: randomBytes(16).toString('hex') },
  ];
  const subjects = new Map<string, string>(); // state → the subject to sign in

  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  let provider: Provider | undefined;
  const server: Server = createServer((req, res) => {
    const p = provider as Provider;
    if (req.url?.startsWith('/interaction/')) {
      void (async () => {
        try {
          const details = await p.interactionDetails(req, res);
          const params = details.params as Record<string, string>;
          const sub = subjects.get(params.state ?? '') ?? 'nobody';
          const grant = new p.Grant({ accountId: sub, clientId: params.client_id as string });
          grant.addOIDCScope('openid');
          const grantId = await grant.save();
          await p.interactionFinished(
            req,
            res,
            { login: { accountId: sub }, consent: { grantId } },
            { mergeWithLastSubmission: false },
          );
        } catch (e) {
          res.writeHead(500).end(String(e));
        }
      })();
      return;
    }
    handler?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const redirectUri = 'http://127.0.0.1:9/callback';
  provider = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    })),
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    ttl: {
      AuthorizationCode: 60,
      AccessToken: 600,
      IdToken: 600,
      Interaction: 600,
      Grant: 600,
      Session: 600,
    },
  });
  handler = provider.callback();
  const signingKey = privateKey as CryptoKey;

  async function authorize(o: {
    clientId: string;
    sub: string;
    nonce: string;
    codeChallenge: string;
  }): Promise<string> {
    const state = randomBytes(8).toString('hex');
    subjects.set(state, o.sub);
    const jar = new Jar();
    let url = `${issuer}/auth?${new URLSearchParams({
      client_id: o.clientId,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: redirectUri,
      nonce: o.nonce,
      state,
      code_challenge: o.codeChallenge,
      code_challenge_method: 'S256',
    })}`;
    for (let hop = 0; hop < 8; hop++) {
      const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.take(res);
      const location = res.headers.get('location');
      if (location === null)
        throw new Error(`the provider stopped at ${url} with HTTP ${res.status}: ${await res.text()}`);
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUri)) {
        const code = next.searchParams.get('code');
        if (code === null) throw new Error(`the provider refused: ${next.search}`);
        return code;
      }
      url = next.href;
    }
    throw new Error('too many redirects');
  }

  return {
    issuer,
    tokenUrl: `${issuer}/token`,
    userInfoUrl: `${issuer}/me`,
    redirectUri,
    clients,
    authorize,
    async idToken(o) {
      const { verifier, challenge } = pkcePair();
      const code = await authorize({ ...o, codeChallenge: challenge });
      const client = clients.find((c) => c.clientId === o.clientId) as TestOidcClient;
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          code_verifier: verifier,
        }),
      });
      const json = (await res.json()) as { id_token?: string };
      if (json.id_token === undefined) throw new Error(`no id_token: ${JSON.stringify(json)}`);
      return json.id_token;
    },
    sign: (claims) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: jwk.kid as string, typ: 'JWT' })
        .sign(signingKey),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
