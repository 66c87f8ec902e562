/**
 * The console's only way to the service: requests to the public API of this origin, each stamped
 * with the signed-in passkey (`X-Stamp-Webauthn`: an assertion whose challenge is the hex SHA-256 of
 * the exact body), or, when redeeming an invite, with the invite's API key (`X-Stamp`).
 */
import { p256 } from '@noble/curves/nist.js';

export interface Session {
  readonly organizationId: string;
  readonly userId: string;
  readonly userName: string;
  readonly credentialId: string;
}

const SESSION_KEY = 'countersign.console.session';

export function loadSession(): Session | undefined {
  try {
    const v = localStorage.getItem(SESSION_KEY);
    return v === null ? undefined : (JSON.parse(v) as Session);
  } catch {
    return undefined;
  }
}

export function saveSession(s: Session | undefined): void {
  if (s === undefined) localStorage.removeItem(SESSION_KEY);
  else localStorage.setItem(SESSION_KEY, JSON.stringify(s));
}

export const b64url = (b: ArrayBuffer | Uint8Array): string => {
  const bytes = b instanceof Uint8Array ? b : new Uint8Array(b);
  let s = '';
  for (const x of bytes) s += String.fromCharCode(x);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

export const fromB64url = (s: string): Uint8Array<ArrayBuffer> => {
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
};

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const fromHex = (h: string) => new Uint8Array(h.match(/../g)?.map((x) => parseInt(x, 16)) ?? []);

async function sha256Hex(text: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))));
}

/** WebAuthn refuses IP addresses as relying-party ids: the console cannot work at one. */
export function hostIsIpAddress(host: string): boolean {
  return /^[0-9.]+$/.test(host) || host.includes(':') || host.startsWith('[');
}

export class ApiError extends Error {
  /** The HTTP status of a refusal by the service (absent for errors found in the page). */
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

async function send(path: string, body: string, headers: Record<string, string>): Promise<unknown> {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const json = (await res.json().catch(() => undefined)) as { message?: string } | undefined;
  if (!res.ok) throw new ApiError(json?.message ?? `the service answered HTTP ${res.status}`, res.status);
  return json;
}

// A browser runs one WebAuthn request at a time: stamps wait their turn.
let queue: Promise<unknown> = Promise.resolve();

function passkeyStamp(session: Session, body: string): Promise<string> {
  const next = queue.then(() => assert(session, body));
  queue = next.catch(() => undefined);
  return next;
}

async function assert(session: Session, body: string): Promise<string> {
  const challenge = new TextEncoder().encode(await sha256Hex(body));
  const cred = (await navigator.credentials.get({
    publicKey: {
      challenge,
      rpId: location.hostname,
      allowCredentials: [{ type: 'public-key', id: fromB64url(session.credentialId) }],
      userVerification: 'preferred',
      timeout: 60_000,
    },
  })) as PublicKeyCredential | null;
  if (cred === null) throw new ApiError('the passkey did not answer');
  const r = cred.response as AuthenticatorAssertionResponse;
  return JSON.stringify({
    authenticatorData: b64url(r.authenticatorData),
    clientDataJson: b64url(r.clientDataJSON),
    credentialId: session.credentialId,
    signature: b64url(r.signature),
  });
}

/** A query (`/public/v1/query/<name>`) stamped with the passkey. */
export async function query<T>(
  session: Session,
  name: string,
  params: Record<string, unknown> = {},
): Promise<T> {
  const body = JSON.stringify({ organizationId: session.organizationId, ...params });
  return (await send(`/public/v1/query/${name}`, body, {
    'x-stamp-webauthn': await passkeyStamp(session, body),
  })) as T;
}

export interface Activity {
  readonly id: string;
  readonly status: string;
  readonly type: string;
  readonly fingerprint: string;
  readonly intent: Record<string, Record<string, unknown>>;
  readonly result: Record<string, unknown>;
  readonly votes: readonly {
    userId: string;
    user?: { userName?: string };
    selection: string;
    publicKey: string;
  }[];
  readonly createdAt: { seconds: string };
  readonly failure: { message?: string } | null;
}

/** An activity (`/public/v1/submit/<path>`) stamped with the passkey. */
export async function submit(
  session: Session,
  path: string,
  type: string,
  parameters: Record<string, unknown>,
): Promise<Activity> {
  const body = JSON.stringify({
    type,
    timestampMs: String(Date.now()),
    organizationId: session.organizationId,
    parameters,
  });
  const out = (await send(`/public/v1/submit/${path}`, body, {
    'x-stamp-webauthn': await passkeyStamp(session, body),
  })) as { activity: Activity };
  if (out.activity.status === 'ACTIVITY_STATUS_FAILED')
    throw new ApiError(out.activity.failure?.message ?? `${type} failed`);
  return out.activity;
}

/**
 * Redeems an invite (`#<organizationId>.<invite key>`): creates a passkey for this host and
 * registers it, stamped with the invite key.
 */
export async function redeemInvite(fragment: string): Promise<Session> {
  const m = /^([0-9a-f-]{36})\.([0-9a-f]{64})$/.exec(fragment);
  if (m === null) throw new ApiError('this invite link is incomplete: copy the whole link the CLI printed');
  const [, organizationId, secretHex] = m as unknown as [string, string, string];
  const secret = fromHex(secretHex);
  const challenge = crypto.getRandomValues(new Uint8Array(32));
  const cred = (await navigator.credentials.create({
    publicKey: {
      challenge,
      rp: { id: location.hostname, name: 'countersign console' },
      user: {
        id: crypto.getRandomValues(new Uint8Array(16)),
        name: 'console',
        displayName: 'countersign console',
      },
      pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
      attestation: 'none',
      timeout: 60_000,
    },
  })) as PublicKeyCredential | null;
  if (cred === null) throw new ApiError('no passkey was created');
  const r = cred.response as AuthenticatorAttestationResponse;
  const credentialId = b64url(cred.rawId);
  const body = JSON.stringify({
    timestampMs: String(Date.now()),
    organizationId,
    parameters: {
      authenticatorName: `console passkey ${new Date().toISOString().slice(0, 10)}`,
      challenge: b64url(challenge),
      attestation: {
        credentialId,
        clientDataJson: b64url(r.clientDataJSON),
        attestationObject: b64url(r.attestationObject),
        transports: [],
      },
    },
  });
  const signature = p256.sign(new TextEncoder().encode(body), secret, { prehash: true, format: 'der' });
  const publicKey = hex(p256.getPublicKey(secret, true));
  secret.fill(0);
  const stamp = b64url(
    new TextEncoder().encode(
      JSON.stringify({
        publicKey,
        scheme: 'SIGNATURE_SCHEME_TK_API_P256',
        signature: hex(signature),
      }),
    ),
  );
  const out = (await send('/console/v1/redeem_invite', body, { 'x-stamp': stamp }).catch((e: unknown) => {
    // The invite key is deleted when used and refused once expired.
    if (/could not find public key|expired api key/.test((e as Error).message))
      throw new ApiError('this invite link was already used or has expired: ask for a new one');
    throw e;
  })) as {
    userId: string;
    userName: string;
  };
  return { organizationId, userId: out.userId, userName: out.userName, credentialId };
}
