/**
 * The older login flows @turnkey/sdk-server still exposes (turnkey-api.md 9.2 "Legacy flows", 9.5,
 * Appendix A): `email_auth` (V3), `init_otp_auth` (V3) / `otp_auth`, `create_read_write_session`
 * (V2) and `create_read_only_session`.
 *
 * The credential flows generate a fresh P-256 API key for the user, register its public half as a
 * short-lived key (a login session, so `invalidateExisting` and expiry work as for stamp_login), and
 * hand the private half out only as a credential bundle: HPKE-sealed to the client's
 * `targetPublicKey` (Turnkey's suite, info and AAD), then bs58check(compressed enc ‖ ciphertext),
 * which `@turnkey/crypto`'s decryptCredentialBundle opens. The scalar is zeroed once sealed.
 *
 * email_auth and the OTP pair run in the organization that owns the end users: the user is the one
 * whose email (or phone) matches, in the organization itself or one of its sub-organizations (the
 * parent initiates these for its sub-organizations' users, as Turnkey's docs describe; a parent's
 * key cannot write into a sub-organization here, so it names its own organization).
 *
 * create_read_only_session returns a notarizer-signed session JWT with `session_type`
 * SESSION_TYPE_READ_ONLY. It is a statement about the caller, not a credential: countersign
 * authenticates requests only by stamps (no `X-Session` header), so reading still needs a stamp.
 */
import { randomUUID } from 'node:crypto';
import { createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { p256 } from '@noble/curves/nist.js';
import { bytesToHex, concatBytes, zeroize } from '../../shared/encoding.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import { authContextOf } from '../authProxy/context.js';
import { DEFAULT_SETTINGS, readSettings } from '../authProxy/settings.js';
import { sealToTurnkeyTarget } from '../keys/hpke.js';
import { SERVICE_NOTARIZER_KEY_ID } from '../keys/index.js';
import { signSessionJwt } from '../keys/jwt.js';
import type { ApiKeyRecord, StoreTx, UserRecord } from '../store/types.js';
import { normalizeContact, OTP_ACTIVITIES, organizationToken, contactUser } from './otp.js';
import { asObject, optBool, optString, reqString, type Params } from './params.js';
import { sessionSeconds } from './sessions.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';

const P = 'parameters';
const bs58check = createBase58check(sha256);
/** Read-only sessions last an hour, as Turnkey's. */
const READ_ONLY_SESSION_SECONDS = 3600;

/** `targetPublicKey` as 65 uncompressed bytes: accepts the uncompressed (04…) or compressed hex. */
function targetKey(p: Params): Uint8Array {
  const field = `${P}.targetPublicKey`;
  const hex = reqString(p, 'targetPublicKey', P).toLowerCase();
  if (!/^(04[0-9a-f]{128}|0[23][0-9a-f]{64})$/.test(hex))
    throw invalid(field, 'must be a P-256 public key in hex (uncompressed 04…, or compressed)');
  try {
    return p256.Point.fromHex(hex).toBytes(false);
  } catch {
    throw invalid(field, 'is not a point on the P-256 curve');
  }
}

function apiKeyName(p: Params, dflt: string): string {
  const n = optString(p, 'apiKeyName', P);
  if (n === undefined || n === '') return dflt;
  if (n.length > 256) throw invalid(`${P}.apiKeyName`, 'must be at most 256 characters');
  return n;
}

/**
 * A new short-lived P-256 API key for `user`, its private half sealed to `target` as a legacy
 * credential bundle; the write registers the public half (and drops the user's other login keys
 * when `invalidateExisting`).
 */
function issueCredential(
  ctx: ActivityContext,
  input: {
    readonly user: UserRecord;
    readonly target: Uint8Array;
    readonly name: string;
    readonly seconds: number;
    readonly invalidateExisting: boolean;
  },
): { apiKeyId: string; credentialBundle: string; write: (tx: StoreTx) => Promise<void> } {
  const secret = p256.utils.randomSecretKey();
  let publicKey: string;
  let credentialBundle: string;
  try {
    publicKey = bytesToHex(p256.getPublicKey(secret, true));
    const sealed = sealToTurnkeyTarget({ targetPublicKey: input.target, plaintext: secret });
    const enc = p256.Point.fromBytes(sealed.encappedPublic).toBytes(true);
    credentialBundle = bs58check.encode(concatBytes(enc, sealed.ciphertext));
  } finally {
    zeroize(secret);
  }
  const expiresAtMs = ctx.nowMs + input.seconds * 1000;
  const key: ApiKeyRecord = {
    id: randomUUID(),
    userId: input.user.id,
    organizationId: input.user.organizationId,
    name: input.name,
    publicKey,
    curve: 'API_KEY_CURVE_P256',
    expiresAtMs,
    createdAtMs: ctx.nowMs,
  };
  return {
    apiKeyId: key.id,
    credentialBundle,
    write: async (tx) => {
      if (input.invalidateExisting) await tx.deleteLoginSessionKeys(input.user.id);
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

/** The user holding `contact`: in the organization itself first, else in one of its sub-organizations. */
async function userByContact(
  ctx: ActivityContext,
  type: 'OTP_TYPE_EMAIL' | 'OTP_TYPE_SMS',
  contact: string,
  field: string,
): Promise<UserRecord> {
  const own = (await ctx.store.listUsers(ctx.organization.id)).find((u) =>
    type === 'OTP_TYPE_EMAIL' ? u.email?.toLowerCase() === contact : u.phoneNumber === contact,
  );
  if (own !== undefined) return own;
  return await contactUser(ctx, type, contact, undefined, field);
}

/** Refuses when the user's organization switched this way of logging in off (create_sub_organization). */
async function checkFeature(ctx: ActivityContext, user: UserRecord, feature: string, what: string) {
  const features = await ctx.store.listOrganizationFeatures(user.organizationId);
  if (features.some((f) => f.name === feature && f.value === 'false'))
    throw new CountersignError(
      'REQUEST_NOT_AUTHORIZED',
      `${what} is disabled for the user's organization (${feature})`,
    );
}

const emailAuth = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${P}.email`;
  const email = normalizeContact('OTP_TYPE_EMAIL', reqString(p, 'email', P), field);
  const target = targetKey(p);
  const seconds = sessionSeconds(p);
  const invalidateExisting = optBool(p, 'invalidateExisting', P) ?? false;
  const custom =
    p.emailCustomization === undefined || p.emailCustomization === null
      ? {}
      : asObject(p.emailCustomization, `${P}.emailCustomization`);
  const link = optString(custom, 'magicLinkTemplate', `${P}.emailCustomization`);
  if (link !== undefined && link !== '' && !link.includes('%s'))
    throw invalid(`${P}.emailCustomization.magicLinkTemplate`, 'must contain %s (where the bundle goes)');
  const send = authContextOf(ctx.store).sendEmail;
  if (send === undefined)
    throw new CountersignError(
      'FIELD_INVALID',
      `${field}: email auth is not available: this countersign has no SMTP server configured (--smtp-url, --smtp-from)`,
      { field },
    );
  const user = await userByContact(ctx, 'OTP_TYPE_EMAIL', email, field);
  await checkFeature(ctx, user, 'FEATURE_NAME_EMAIL_AUTH', 'email auth');
  const proxy = await ctx.store.getAuthProxyConfig(ctx.organization.id);
  const appName =
    optString(custom, 'appName', `${P}.emailCustomization`) ??
    (proxy === undefined ? DEFAULT_SETTINGS : readSettings(proxy.settingsJson)).appName;
  const issued = issueCredential(ctx, {
    user,
    target,
    name: apiKeyName(p, `Email Auth - ${new Date(ctx.nowMs).toISOString()}`),
    seconds,
    invalidateExisting,
  });
  const minutes = Math.max(1, Math.round(seconds / 60));
  await send({
    to: email,
    subject: `Log in to ${appName}`,
    text:
      link === undefined || link === ''
        ? `Your ${appName} login credential (expires in ${minutes} minute${minutes === 1 ? '' : 's'}):\n\n${issued.credentialBundle}\n`
        : `Log in to ${appName} (the link expires in ${minutes} minute${minutes === 1 ? '' : 's'}):\n\n${link.replace('%s', issued.credentialBundle)}\n`,
  });
  return { result: { userId: user.id, apiKeyId: issued.apiKeyId }, write: issued.write };
};

const byType = (type: string): ActivityDefinition => {
  const d = OTP_ACTIVITIES.find((a) => a.type === type);
  if (d === undefined) throw new Error(`${type} is not registered`);
  return d;
};

const initOtpAuth = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const out = await byType('ACTIVITY_TYPE_INIT_OTP_V3').run(ctx, p);
  return { result: { otpId: out.result.otpId } };
};

const otpAuth = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const target = targetKey(p);
  const seconds = sessionSeconds(p);
  const invalidateExisting = optBool(p, 'invalidateExisting', P) ?? false;
  const otpId = reqString(p, 'otpId', P);
  // verify_otp's checks (attempts, burn, expiry, constant-time compare) on the sealed code; its
  // token only names the contact here and is never handed out.
  const verified = await byType('ACTIVITY_TYPE_VERIFY_OTP_V2').run(ctx, { otpId, otpCode: p.otpCode });
  const claims = await organizationToken(ctx, String(verified.result.verificationToken), `${P}.otpId`);
  const type = claims.verification_type === 'OTP_TYPE_SMS' ? 'OTP_TYPE_SMS' : 'OTP_TYPE_EMAIL';
  const user = await userByContact(ctx, type, claims.contact, `${P}.otpId`);
  await checkFeature(
    ctx,
    user,
    type === 'OTP_TYPE_SMS' ? 'FEATURE_NAME_SMS_AUTH' : 'FEATURE_NAME_OTP_EMAIL_AUTH',
    type === 'OTP_TYPE_SMS' ? 'SMS auth' : 'email OTP auth',
  );
  const issued = issueCredential(ctx, {
    user,
    target,
    name: apiKeyName(p, `OTP Auth - ${new Date(ctx.nowMs).toISOString()}`),
    seconds,
    invalidateExisting,
  });
  return {
    result: { userId: user.id, apiKeyId: issued.apiKeyId, credentialBundle: issued.credentialBundle },
    write: issued.write,
  };
};

async function sessionUser(ctx: ActivityContext, p: Params): Promise<UserRecord> {
  const userId = optString(p, 'userId', P);
  if (userId === undefined || userId === '' || userId === ctx.user.id) return ctx.user;
  const u = await ctx.store.getUser(userId);
  if (u === undefined || u.organizationId !== ctx.organization.id)
    throw new CountersignError(
      'RESOURCE_NOT_FOUND',
      `${P}.userId: no user with this id in the organization`,
      {
        field: `${P}.userId`,
      },
    );
  return u;
}

const createReadWriteSession = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const target = targetKey(p);
  const seconds = sessionSeconds(p);
  const invalidateExisting = optBool(p, 'invalidateExisting', P) ?? false;
  const user = await sessionUser(ctx, p);
  const issued = issueCredential(ctx, {
    user,
    target,
    name: apiKeyName(p, `Read Write Session - ${new Date(ctx.nowMs).toISOString()}`),
    seconds,
    invalidateExisting,
  });
  return {
    result: {
      organizationId: ctx.organization.id,
      organizationName: ctx.organization.name,
      userId: user.id,
      username: user.name,
      apiKeyId: issued.apiKeyId,
      credentialBundle: issued.credentialBundle,
    },
    write: issued.write,
  };
};

const createReadOnlySession = async (ctx: ActivityContext): Promise<ActivityOutcome> => {
  const signer = await ctx.store.getServiceKey(SERVICE_NOTARIZER_KEY_ID);
  if (signer === undefined)
    throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', 'the service has no key to sign sessions with');
  const exp = Math.floor(ctx.nowMs / 1000) + READ_ONLY_SESSION_SECONDS;
  const session = signSessionJwt({
    vault: ctx.vault,
    key: signer,
    claims: {
      exp,
      public_key: '',
      session_type: 'SESSION_TYPE_READ_ONLY',
      user_id: ctx.user.id,
      organization_id: ctx.organization.id,
    },
  });
  return {
    result: {
      organizationId: ctx.organization.id,
      organizationName: ctx.organization.name,
      userId: ctx.user.id,
      username: ctx.user.name,
      session,
      sessionExpiry: String(exp),
    },
  };
};

export const LEGACY_AUTH_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_EMAIL_AUTH_V3',
    path: 'email_auth',
    intentKey: 'emailAuthIntentV3',
    resultKey: 'emailAuthResult',
    run: emailAuth,
  },
  {
    type: 'ACTIVITY_TYPE_INIT_OTP_AUTH_V3',
    path: 'init_otp_auth',
    intentKey: 'initOtpAuthIntentV3',
    resultKey: 'initOtpAuthResultV2',
    run: initOtpAuth,
  },
  {
    type: 'ACTIVITY_TYPE_OTP_AUTH',
    path: 'otp_auth',
    intentKey: 'otpAuthIntent',
    resultKey: 'otpAuthResult',
    run: otpAuth,
    secretParams: ['otpCode'],
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2',
    path: 'create_read_write_session',
    intentKey: 'createReadWriteSessionIntentV2',
    resultKey: 'createReadWriteSessionResultV2',
    run: createReadWriteSession,
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION',
    path: 'create_read_only_session',
    intentKey: 'createReadOnlySessionIntent',
    resultKey: 'createReadOnlySessionResult',
    run: createReadOnlySession,
  },
];
