/**
 * The OIDC token verifier of oauth_login and friends (turnkey-api.md 9.3, issue 13): the issuer's
 * keys are found through `<iss>/.well-known/openid-configuration` (OpenID Connect Discovery 1.0,
 * section 4: the document's `issuer` must equal `iss`), its `jwks_uri` fetched and cached, and
 * fetched again when a token names a `kid` the cache does not hold (at most once per
 * `refreshIntervalMs` per issuer, so a stream of made-up kids cannot make us hammer an issuer).
 * Every URL dialled passes the outbound guard (`--allow-private-network` relaxes it).
 *
 * Checks run in a fixed order (panva/jose's): signature by a key of the issuer's JWKS, `iss`, `aud`
 * (one of the organization's OAuth client ids), `exp`/`nbf`/`iat`, `sub`, then the nonce. Before
 * anything is dialled the unverified `aud` must already name an allowed client id, so a token meant
 * for someone else never makes us fetch from the issuer it names.
 */
import type { Socket } from 'node:net';
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors as jose,
  jwtVerify,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
} from 'jose';
import { CountersignError, invalid, isCountersignError } from '../../shared/errors.js';
import type { OutboundPolicy } from '../../shared/outbound/guard.js';
import { outboundRequest, type ResolveHost } from '../../shared/outbound/outboundRequest.js';

/** Asymmetric JWS algorithms only: never `none`, never an HMAC keyed by something public. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** Issuers whose keys are kept; the oldest fetched is dropped beyond this. */
const MAX_ISSUERS = 256;
/** Leeway for `exp`/`nbf`/`iat` against clocks that differ a little (seconds). */
const CLOCK_TOLERANCE_S = 30;

export interface OidcVerifierOptions {
  readonly policy: OutboundPolicy;
  /** Least time between two fetches of one issuer's keys (default 60 s). */
  readonly refreshIntervalMs?: number;
  /** Fetched keys are used this long before the next token fetches them again (default 1 h). */
  readonly maxAgeMs?: number;
  /** Clock of the cache (default Date.now); token times are checked against the caller's `nowMs`. */
  readonly now?: () => number;
  /** Test seams passed to every outbound request. */
  readonly resolve?: ResolveHost;
  readonly createConnection?: () => Socket;
}

export interface VerifyOidcTokenInput {
  readonly token: string;
  /** The request field holding the token, for errors. */
  readonly field: string;
  /** Accepted audiences (OAuth client ids); the token's `aud` must name one. */
  readonly audiences: readonly string[];
  /** The expected `nonce` (lower-case hex); undefined: not checked (registration). */
  readonly nonce?: string | undefined;
  readonly nowMs: number;
  /** Issuers whose keys are known here (the service's own tokens): never discovered or dialled. */
  readonly localIssuers?: ReadonlyMap<string, JWK>;
}

export interface OidcClaims {
  readonly issuer: string;
  /** The one audience of the token that is an accepted client id. */
  readonly audience: string;
  readonly subject: string;
  readonly email?: string;
}

interface IssuerKeys {
  readonly getKey: ReturnType<typeof createLocalJWKSet>;
  readonly kids: ReadonlySet<string>;
  readonly fetchedAtMs: number;
}

const MAX_DOCUMENT_BYTES = 256 * 1024;

export class OidcVerifier {
  readonly #opts: OidcVerifierOptions;
  readonly #cache = new Map<string, IssuerKeys>();
  readonly #inflight = new Map<string, Promise<IssuerKeys>>();

  constructor(opts: OidcVerifierOptions) {
    this.#opts = opts;
  }

  /** The verified claims of `input.token`, or FIELD_INVALID naming the field and what failed. */
  async verify(input: VerifyOidcTokenInput): Promise<OidcClaims> {
    const { field } = input;
    const bad = (reason: string) => invalid(field, `invalid OIDC token: ${reason}`);
    let header: ReturnType<typeof decodeProtectedHeader>;
    let unverified: JWTPayload;
    try {
      header = decodeProtectedHeader(input.token);
      unverified = decodeJwt(input.token);
    } catch {
      throw bad('is not a JWT (header.payload.signature, base64url JSON)');
    }
    const iss = unverified.iss;
    if (typeof iss !== 'string' || iss === '') throw bad("the token has no 'iss' claim");
    if (input.audiences.length === 0)
      throw bad(
        'no OAuth client ids are configured for this organization (update_auth_proxy_config oauthClientIds)',
      );
    const auds = typeof unverified.aud === 'string' ? [unverified.aud] : (unverified.aud ?? []);
    const audience = auds.find((a) => input.audiences.includes(a));
    if (audience === undefined)
      throw bad("the 'aud' claim is not one of the OAuth client ids configured for this organization");

    const local = input.localIssuers?.get(iss);
    const kid = typeof header.kid === 'string' ? header.kid : undefined;
    let keys: IssuerKeys =
      local === undefined
        ? await this.#keysOf(iss, field, kid)
        : { getKey: createLocalJWKSet({ keys: [local] }), kids: new Set(), fetchedAtMs: 0 };

    let payload: JWTPayload;
    try {
      payload = (await this.#check(input, keys, iss)).payload;
    } catch (e) {
      // A kid the cached set lacks may be a key the issuer rotated in since: fetch once more
      // (throttled in #keysOf) and retry; anything else is final.
      if (!(e instanceof jose.JWKSNoMatchingKey) || local !== undefined) throw this.#explain(e, bad, kid);
      const again = await this.#keysOf(iss, field, kid, true);
      if (again === keys) throw this.#explain(e, bad, kid);
      keys = again;
      try {
        payload = (await this.#check(input, keys, iss)).payload;
      } catch (e2) {
        throw this.#explain(e2, bad, kid);
      }
    }
    const sub = payload.sub;
    if (typeof sub !== 'string' || sub === '') throw bad("the token has no 'sub' claim");
    if (input.nonce !== undefined) {
      const nonce = payload.nonce;
      if (typeof nonce !== 'string' || nonce.toLowerCase() !== input.nonce)
        throw bad("the 'nonce' claim is not sha256(publicKey) of this request's public key");
    }
    const email = payload.email;
    return {
      issuer: iss,
      audience,
      subject: sub,
      ...(typeof email === 'string' ? { email } : {}),
    };
  }

  #check(input: VerifyOidcTokenInput, keys: IssuerKeys, iss: string) {
    return jwtVerify(input.token, keys.getKey, {
      algorithms: ALGORITHMS,
      issuer: iss,
      audience: [...input.audiences],
      currentDate: new Date(input.nowMs),
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['iss', 'aud', 'exp', 'sub'],
    });
  }

  #explain(e: unknown, bad: (reason: string) => CountersignError, kid: string | undefined): Error {
    if (isCountersignError(e)) return e;
    if (e instanceof jose.JWTExpired) return bad('the token has expired');
    if (e instanceof jose.JWTClaimValidationFailed)
      return bad(`the '${e.claim}' claim failed validation (${e.reason})`);
    if (e instanceof jose.JWSSignatureVerificationFailed)
      return bad("the signature does not verify with the issuer's published keys");
    if (e instanceof jose.JWKSNoMatchingKey || e instanceof jose.JWKSMultipleMatchingKeys)
      return bad(`the token is signed with a key (kid ${kid ?? 'none'}) the issuer does not publish`);
    if (e instanceof jose.JOSEAlgNotAllowed)
      return bad(`the algorithm is not one of ${ALGORITHMS.join(', ')}`);
    if (e instanceof jose.JOSEError) return bad(`it could not be verified (${e.code})`);
    return e instanceof Error ? e : new Error(String(e));
  }

  /** The issuer's keys: cached, or fetched (once at a time) when absent, stale, or lacking `kid`. */
  async #keysOf(iss: string, field: string, kid: string | undefined, force = false): Promise<IssuerKeys> {
    const now = (this.#opts.now ?? Date.now)();
    const cached = this.#cache.get(iss);
    if (cached !== undefined) {
      const age = now - cached.fetchedAtMs;
      const stale = age >= (this.#opts.maxAgeMs ?? 3_600_000);
      const wantsRefresh = force || (kid !== undefined && !cached.kids.has(kid));
      const mayRefresh = age >= (this.#opts.refreshIntervalMs ?? 60_000);
      if (!stale && !(wantsRefresh && mayRefresh)) return cached;
    }
    let pending = this.#inflight.get(iss);
    if (pending === undefined) {
      pending = this.#fetchKeys(iss, field, now).finally(() => this.#inflight.delete(iss));
      this.#inflight.set(iss, pending);
    }
    const keys = await pending;
    this.#cache.delete(iss);
    this.#cache.set(iss, keys);
    if (this.#cache.size > MAX_ISSUERS) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    return keys;
  }

  async #fetchKeys(iss: string, field: string, now: number): Promise<IssuerKeys> {
    const issField = `${field}.iss`;
    const base = iss.endsWith('/') ? iss.slice(0, -1) : iss;
    const discovery = await this.#getJson(
      `${base}/.well-known/openid-configuration`,
      issField,
      "the issuer's discovery document",
    );
    if (discovery.issuer !== iss)
      throw invalid(
        issField,
        "invalid OIDC token: the issuer's discovery document names another issuer than the token's 'iss'",
      );
    const jwksUri = discovery.jwks_uri;
    if (typeof jwksUri !== 'string')
      throw invalid(issField, "invalid OIDC token: the issuer's discovery document has no jwks_uri");
    const jwks = await this.#getJson(jwksUri, `${issField} (jwks_uri)`, "the issuer's JWKS");
    if (!Array.isArray(jwks.keys))
      throw invalid(issField, "invalid OIDC token: the issuer's JWKS has no 'keys' array");
    const kids = new Set<string>();
    for (const k of jwks.keys as unknown[])
      if (typeof k === 'object' && k !== null && typeof (k as JWK).kid === 'string')
        kids.add((k as JWK).kid as string);
    return { getKey: createLocalJWKSet(jwks as unknown as JSONWebKeySet), kids, fetchedAtMs: now };
  }

  async #getJson(url: string, field: string, what: string): Promise<Record<string, unknown>> {
    const res = await outboundRequest({
      url,
      method: 'GET',
      headers: { accept: 'application/json' },
      policy: this.#opts.policy,
      field,
      timeoutMs: 10_000,
      maxResponseBytes: MAX_DOCUMENT_BYTES,
      ...(this.#opts.resolve === undefined ? {} : { resolve: this.#opts.resolve }),
      ...(this.#opts.createConnection === undefined ? {} : { createConnection: this.#opts.createConnection }),
    });
    if (res.status !== 200)
      throw new CountersignError('OUTBOUND_REQUEST_FAILED', `${field}: ${what} answered HTTP ${res.status}`, {
        field,
      });
    if (res.truncated)
      throw new CountersignError(
        'OUTBOUND_REQUEST_FAILED',
        `${field}: ${what} is larger than ${MAX_DOCUMENT_BYTES} bytes`,
        { field },
      );
    let v: unknown;
    try {
      v = JSON.parse(Buffer.from(res.body).toString('utf8'));
    } catch {
      throw new CountersignError('OUTBOUND_REQUEST_FAILED', `${field}: ${what} is not JSON`, { field });
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new CountersignError('OUTBOUND_REQUEST_FAILED', `${field}: ${what} is not a JSON object`, {
        field,
      });
    return v as Record<string, unknown>;
  }
}
