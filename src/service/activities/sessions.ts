/**
 * stamp_login (turnkey-api.md 9.1): the caller's stamp proves who they are; the client's new P-256
 * key becomes a short-lived API key of the caller, and the session JWT (signed by the service key)
 * tells the client its claims. The JWT never authenticates anything itself: the session key's
 * stamps do, until the key expires (401 "expired api key").
 */
import { randomUUID } from 'node:crypto';
import { CountersignError, invalid } from '../../shared/errors.js';
import { SERVICE_NOTARIZER_KEY_ID } from '../keys/index.js';
import { signSessionJwt } from '../keys/jwt.js';
import { p256Key } from '../keys/apiPublicKeys.js';
import type { ApiKeyRecord, StoreTx, UserRecord } from '../store/types.js';
import { optBool, reqString, type Params } from './params.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';

const PREFIX = 'parameters';
/** 15 minutes when `expirationSeconds` is omitted (seed section 8). */
export const DEFAULT_SESSION_SECONDS = 900;
/** One year: a longer "session" is a long-lived key and should be created as one. */
const MAX_SESSION_SECONDS = 365 * 24 * 60 * 60;

export function sessionSeconds(p: Params): number {
  const field = `${PREFIX}.expirationSeconds`;
  const v = p.expirationSeconds;
  if (v === undefined || v === null || v === '') return DEFAULT_SESSION_SECONDS;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^[0-9]{1,12}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n)) throw invalid(field, 'must be a whole number of seconds (a decimal string)');
  if (n < 1 || n > MAX_SESSION_SECONDS) throw invalid(field, `must be between 1 and ${MAX_SESSION_SECONDS}`);
  return n;
}

/** A compressed P-256 session key from `p[key]`, lower-cased, or FIELD_INVALID naming it. */
export function sessionPublicKey(p: Params, key = 'publicKey'): string {
  const publicKey = reqString(p, key, PREFIX).toLowerCase();
  if (!/^0[23][0-9a-f]{64}$/.test(publicKey) || p256Key(publicKey) === undefined)
    throw invalid(`${PREFIX}.${key}`, 'must be a compressed P-256 public key (33 bytes, hex, 02/03 prefix)');
  return publicKey;
}

/**
 * A login session for `user`: the session JWT (signed by the notarizer key) and the write that
 * registers `publicKey` as the user's short-lived API key. Shared by stamp_login and the OTP and
 * OAuth logins, whose activity runs in the parent organization on behalf of a sub-organization user.
 */
export async function openLoginSession(
  ctx: ActivityContext,
  input: {
    readonly user: UserRecord;
    readonly publicKey: string;
    readonly seconds: number;
    readonly invalidateExisting: boolean;
  },
): Promise<{ session: string; write: (tx: StoreTx) => Promise<void> }> {
  const { user, publicKey, seconds } = input;
  // Sessions are signed by the notarizer key (@turnkey/crypto's verifySessionJwtSignature override).
  const signer = await ctx.store.getServiceKey(SERVICE_NOTARIZER_KEY_ID);
  if (signer === undefined)
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'the service has no key to sign sessions with');
  const expiresAtMs = ctx.nowMs + seconds * 1000;
  const key: ApiKeyRecord = {
    id: randomUUID(),
    userId: user.id,
    organizationId: user.organizationId,
    name: `Session Key ${new Date(ctx.nowMs).toISOString()}`,
    publicKey,
    curve: 'API_KEY_CURVE_P256',
    expiresAtMs,
    createdAtMs: ctx.nowMs,
  };
  const session = signSessionJwt({
    vault: ctx.vault,
    key: signer,
    claims: {
      exp: Math.floor(expiresAtMs / 1000),
      public_key: publicKey,
      session_type: 'SESSION_TYPE_READ_WRITE',
      user_id: user.id,
      organization_id: user.organizationId,
    },
  });
  return {
    session,
    write: async (tx) => {
      if (input.invalidateExisting) await tx.deleteLoginSessionKeys(user.id);
      // A key already registered here would make stamps ambiguous between two credentials.
      if (await tx.apiKeyPublicKeyTaken(user.organizationId, publicKey))
        throw invalid(
          `${PREFIX}.publicKey`,
          'is already a credential in this organization; generate a new key pair',
        );
      await tx.insertApiKey(key);
      await tx.insertLoginSession({
        apiKeyId: key.id,
        userId: key.userId,
        organizationId: key.organizationId,
        expiresAtMs,
        createdAtMs: ctx.nowMs,
      });
    },
  };
}

const stampLogin = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const publicKey = sessionPublicKey(p);
  const seconds = sessionSeconds(p);
  const invalidateExisting = optBool(p, 'invalidateExisting', PREFIX) ?? false;
  const { session, write } = await openLoginSession(ctx, {
    user: ctx.user,
    publicKey,
    seconds,
    invalidateExisting,
  });
  return { result: { session }, write };
};

export const SESSION_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_STAMP_LOGIN',
    path: 'stamp_login',
    intentKey: 'stampLoginIntent',
    resultKey: 'stampLoginResult',
    run: stampLogin,
  },
];
