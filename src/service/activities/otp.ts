/**
 * One-time passwords for end users (turnkey-api.md 9.2, issue 13): init_otp (V3) issues a code and
 * delivers it by mail or SMS, verify_otp (V2) checks it and returns a verification token, otp_login
 * (V2) trades the token and a client signature for a session of the contact's sub-organization user.
 *
 * Abuse rules: the code is stored only as SHA-256(id ‖ code) and compared in constant time; an OTP
 * takes at most MAX_ATTEMPTS checks (then it is burnt, right code or not); a contact has at most
 * `maxLiveOtpsPerContact` live OTPs; a verification token is used once. The counting and closing of
 * an OTP commits on its own (before the activity's record), so a wrong code still counts.
 */
import { createHash, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { hexToBytes, zeroize } from '../../shared/encoding.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import { authContextOf } from '../authProxy/context.js';
import { DEFAULT_SETTINGS, readSettings } from '../authProxy/settings.js';
import {
  SERVICE_SIGNER_KEY_ID,
  SERVICE_TLS_FETCHER_KEY_ID,
  withServiceKey,
  type SealedServiceKey,
} from '../keys/index.js';
import { assertP256UncompressedPublicKey, openFromTurnkeySender } from '../keys/hpke.js';
import {
  signVerificationToken,
  verifyClientSignature,
  verifyVerificationToken,
  type VerificationTokenClaims,
} from '../keys/jwt.js';
import type { OtpRecord, UserRecord } from '../store/types.js';
import { asObject, optBool, optString, reqString, type Params } from './params.js';
import { openSecretParam } from './sealSecretParams.js';
import { openLoginSession, sessionPublicKey, sessionSeconds } from './sessions.js';
import { signedBundle } from './signedBundle.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';
import { checkEmail, E164_RE } from './users.js';

const P = 'parameters';
/** Wrong codes an OTP survives; the fifth wrong one burns it. */
export const MAX_ATTEMPTS = 5;
/** Crockford base32 (no I, L, O, U), as Turnkey's alphanumeric codes. */
const ALPHANUMERIC = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const OTP_TYPES = ['OTP_TYPE_EMAIL', 'OTP_TYPE_SMS'] as const;
type OtpType = (typeof OTP_TYPES)[number];

/** The contact as stored and compared: email lower-cased, phone numbers E.164. */
export function normalizeContact(type: OtpType, contact: string, field: string): string {
  const c = contact.trim();
  if (type === 'OTP_TYPE_EMAIL') return checkEmail(c, field).toLowerCase();
  if (!E164_RE.test(c)) throw invalid(field, 'must be a phone number in E.164 format, e.g. +13214567890');
  return c;
}

function otpType(p: Params): OtpType {
  const v = reqString(p, 'otpType', P);
  if (!(OTP_TYPES as readonly string[]).includes(v))
    throw invalid(`${P}.otpType`, `must be one of ${OTP_TYPES.join(', ')}`);
  return v as OtpType;
}

/** What an OTP row keeps of its code. */
export const codeHash = (otpId: string, code: string): Uint8Array =>
  new Uint8Array(createHash('sha256').update(`${otpId}\u0000${code.toUpperCase()}`).digest());

function seconds(p: Params, key: string, dflt: number, max: number): number {
  const v = p[key];
  if (v === undefined || v === null || v === '') return dflt;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^[0-9]{1,9}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw invalid(`${P}.${key}`, `must be a whole number of seconds from 1 to ${max}`);
  return n;
}

function render(template: string, code: string, appName: string): string {
  return template.replaceAll('{{.OtpCode}}', code).replaceAll('{{.AppName}}', appName);
}

async function serviceKey(ctx: ActivityContext, id: string): Promise<SealedServiceKey> {
  const k = await ctx.store.getServiceKey(id);
  if (k === undefined) throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', `the service has no ${id} key`);
  return k;
}

const initOtp = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const type = otpType(p);
  const contact = normalizeContact(type, reqString(p, 'contact', P), `${P}.contact`);
  const proxy = await ctx.store.getAuthProxyConfig(ctx.organization.id);
  const settings = proxy === undefined ? DEFAULT_SETTINGS : readSettings(proxy.settingsJson);
  const appName = optString(p, 'appName', P) ?? settings.appName;
  const length = p.otpLength === undefined || p.otpLength === null ? settings.otpLength : p.otpLength;
  if (typeof length !== 'number' || !Number.isInteger(length) || length < 6 || length > 9)
    throw invalid(`${P}.otpLength`, 'must be a whole number from 6 to 9');
  const alphanumeric = optBool(p, 'alphanumeric', P) ?? settings.otpAlphanumeric;
  const ttl = seconds(p, 'expirationSeconds', Number(settings.otpExpirationSeconds), 600);
  const sms =
    p.smsCustomization === undefined ? undefined : asObject(p.smsCustomization, `${P}.smsCustomization`);
  const smsTemplate =
    sms === undefined ? settings.smsTemplate : (optString(sms, 'template', `${P}.smsCustomization`) ?? null);
  if (smsTemplate !== null && !smsTemplate.includes('{{.OtpCode}}'))
    throw invalid(`${P}.smsCustomization.template`, 'must contain {{.OtpCode}}');
  const delivery = authContextOf(ctx.store);
  const send = type === 'OTP_TYPE_EMAIL' ? delivery.sendEmail : delivery.sendSms;
  if (send === undefined)
    throw new CountersignError(
      'FIELD_INVALID',
      type === 'OTP_TYPE_EMAIL'
        ? `${P}.otpType: email OTPs are not available: this countersign has no SMTP server configured (--smtp-url, --smtp-from)`
        : `${P}.otpType: SMS OTPs are not available: this countersign has no SMS provider configured (--sms-url, --sms-account-sid, --sms-auth-token, --sms-from)`,
      { field: `${P}.otpType` },
    );

  const alphabet = alphanumeric ? ALPHANUMERIC : ALPHANUMERIC.slice(0, 10);
  let code = '';
  for (let i = 0; i < length; i++) code += alphabet[randomInt(alphabet.length)];
  const otpId = randomUUID();
  const record: OtpRecord = {
    id: otpId,
    organizationId: ctx.organization.id,
    otpType: type,
    contact,
    codeHash: codeHash(otpId, code),
    attempts: 0,
    expiresAtMs: ctx.nowMs + ttl * 1000,
    closedAtMs: null,
    createdAtMs: ctx.nowMs,
  };
  // The cap is checked where the OTP is inserted, so two concurrent requests cannot both pass it.
  await ctx.store.write(async (tx) => {
    if ((await tx.countLiveOtps(ctx.organization.id, contact, ctx.nowMs)) >= settings.maxLiveOtpsPerContact)
      throw new CountersignError(
        'RESOURCE_LIMIT_EXCEEDED',
        `Max number of OTPs have been initiated for this contact (${settings.maxLiveOtpsPerContact} live); wait for one to expire`,
        { field: `${P}.contact` },
      );
    await tx.insertOtp(record);
  });
  const minutes = Math.max(1, Math.round(ttl / 60));
  try {
    if (type === 'OTP_TYPE_EMAIL')
      await delivery.sendEmail?.({
        to: contact,
        subject: `Your ${appName} code`,
        text:
          settings.emailTemplate === null
            ? `Your ${appName} code is ${code}. It expires in ${minutes} minute${minutes === 1 ? '' : 's'}.`
            : render(settings.emailTemplate, code, appName),
      });
    else
      await delivery.sendSms?.({
        to: contact,
        text: smsTemplate === null ? `Your ${appName} code is ${code}` : render(smsTemplate, code, appName),
      });
  } catch (e) {
    // Not delivered: the OTP must not stay live (it would count against the cap for nothing).
    await ctx.store.write(async (tx) => await tx.updateOtpState(record.id, 0, ctx.nowMs));
    throw e;
  } finally {
    code = '';
  }
  const target = await serviceKey(ctx, SERVICE_TLS_FETCHER_KEY_ID);
  const otpEncryptionTargetBundle = await signedBundle(ctx, {
    targetPublic: target.publicKey,
    organizationId: ctx.organization.id,
    otpId: record.id,
  });
  return { result: { otpId: record.id, otpEncryptionTargetBundle } };
};

/** The code and client key of verify_otp: the HPKE bundle of V2, or a plain `otpCode` (sealed). */
function submittedCode(
  ctx: ActivityContext,
  p: Params,
  target: SealedServiceKey,
): { code: string; publicKey: string } {
  const plainCode = openSecretParam(ctx.vault, ctx.activityId, p, 'otpCode');
  if (plainCode !== undefined) {
    const code = Buffer.from(plainCode).toString('utf8');
    zeroize(plainCode);
    const pk = optString(p, 'publicKey', P);
    return { code, publicKey: pk === undefined || pk === '' ? '' : sessionPublicKey(p) };
  }
  const field = `${P}.encryptedOtpBundle`;
  let bundle: Params;
  try {
    bundle = asObject(JSON.parse(reqString(p, 'encryptedOtpBundle', P)), field);
  } catch (e) {
    if (e instanceof CountersignError) throw e;
    throw invalid(
      field,
      'must be the JSON {encappedPublic, ciphertext} @turnkey/crypto encryptOtpCodeToBundle makes',
    );
  }
  const enc = hexToBytes(reqString(bundle, 'encappedPublic', field), `${field}.encappedPublic`);
  const ct = hexToBytes(reqString(bundle, 'ciphertext', field), `${field}.ciphertext`);
  assertP256UncompressedPublicKey(enc, `${field}.encappedPublic`);
  const plain = withServiceKey(ctx.vault, target, (sk) =>
    openFromTurnkeySender({ recipientPrivateKey: sk, encappedPublic: enc, ciphertext: ct }),
  );
  if (plain === undefined)
    throw invalid(
      field,
      "does not open with this service's OTP target key (sealed to another key, or altered)",
    );
  let inner: Params;
  try {
    inner = asObject(JSON.parse(Buffer.from(plain).toString('utf8')), field);
  } catch {
    throw invalid(field, 'the decrypted bundle is not JSON {otp_code, public_key}');
  } finally {
    zeroize(plain);
  }
  const code = inner.otp_code;
  const publicKey = inner.public_key;
  if (typeof code !== 'string' || typeof publicKey !== 'string')
    throw invalid(field, 'the decrypted bundle must hold otp_code and public_key strings');
  if (publicKey !== '' && !/^0[23][0-9a-fA-F]{64}$/.test(publicKey))
    throw invalid(field, 'public_key must be a compressed P-256 public key (hex)');
  return { code, publicKey: publicKey.toLowerCase() };
}

const verifyOtp = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const otpId = reqString(p, 'otpId', P);
  const tokenSeconds = seconds(p, 'expirationSeconds', 3600, 86400);
  const target = await serviceKey(ctx, SERVICE_TLS_FETCHER_KEY_ID);
  const { code, publicKey } = submittedCode(ctx, p, target);
  const candidate = codeHash(otpId, code);
  const verdict = await ctx.store.write(
    async (tx): Promise<{ ok: true; otp: OtpRecord } | { ok: false; reason: string }> => {
      const otp = await tx.otpInTx(otpId);
      if (otp === undefined || otp.organizationId !== ctx.organization.id)
        return { ok: false, reason: 'no such OTP in this organization' };
      if (otp.closedAtMs !== null)
        return { ok: false, reason: 'Invalid OTP code: this OTP was already used or burnt' };
      if (otp.expiresAtMs <= ctx.nowMs)
        return { ok: false, reason: 'Invalid OTP code: this OTP has expired' };
      const attempts = otp.attempts + 1;
      if (timingSafeEqual(candidate, otp.codeHash)) {
        await tx.updateOtpState(otp.id, attempts, ctx.nowMs);
        return { ok: true, otp };
      }
      await tx.updateOtpState(otp.id, attempts, attempts >= MAX_ATTEMPTS ? ctx.nowMs : null);
      return {
        ok: false,
        reason:
          attempts >= MAX_ATTEMPTS
            ? `Invalid OTP code: ${MAX_ATTEMPTS} wrong codes, this OTP is burnt; request a new one`
            : `Invalid OTP code (${MAX_ATTEMPTS - attempts} attempts left)`,
      };
    },
  );
  if (!verdict.ok) throw invalid(`${P}.otpId`, verdict.reason);
  const signer = await serviceKey(ctx, SERVICE_SIGNER_KEY_ID);
  const verificationToken = signVerificationToken({
    vault: ctx.vault,
    key: signer,
    claims: {
      id: randomUUID(),
      verification_type: verdict.otp.otpType,
      contact: verdict.otp.contact,
      organization_id: ctx.organization.id,
      public_key: publicKey,
      exp: String(ctx.nowMs + tokenSeconds * 1000),
    },
  });
  return { result: { verificationToken } };
};

/** A verification token of this service, unexpired, issued to the organization running the activity. */
export async function organizationToken(
  ctx: ActivityContext,
  token: string,
  field: string,
): Promise<VerificationTokenClaims> {
  const signer = await serviceKey(ctx, SERVICE_SIGNER_KEY_ID);
  const claims = verifyVerificationToken({
    token,
    signerPublicKey: signer.publicKey,
    nowMs: ctx.nowMs,
    field,
  });
  if (claims.organization_id !== ctx.organization.id)
    throw invalid(field, 'invalid verification token: the token was issued for another organization');
  return claims;
}

/** The sub-organization user the contact belongs to (of the organization running the activity). */
export async function contactUser(
  ctx: ActivityContext,
  type: string,
  contact: string,
  wantedOrg: string | undefined,
  field: string,
): Promise<UserRecord> {
  const kind = type === 'OTP_TYPE_EMAIL' ? 'EMAIL' : 'PHONE_NUMBER';
  const orgIds = await ctx.store.listSubOrganizationIds(
    ctx.organization.id,
    { type: kind, value: contact },
    {
      limit: 100,
    },
  );
  const candidates = wantedOrg === undefined ? orgIds : orgIds.filter((o) => o === wantedOrg);
  for (const orgId of candidates)
    for (const u of await ctx.store.listUsers(orgId)) {
      const mine = kind === 'EMAIL' ? u.email?.toLowerCase() === contact : u.phoneNumber === contact;
      if (mine) return u;
    }
  throw new CountersignError(
    'RESOURCE_NOT_FOUND',
    `${field}: no sub-organization of this organization has a user with this ${kind === 'EMAIL' ? 'email' : 'phone number'}${wantedOrg === undefined ? '' : ` in ${wantedOrg}`}`,
    { field },
  );
}

/** The client signature of 9.2 for `usage`, bound to the token's key and id; FIELD_INVALID if not. */
export function checkUsageSignature(
  p: Params,
  claims: { readonly id: string; readonly public_key: string },
  expected: (message: Params) => boolean,
  /** A message accepted as it is (the seed's login form: the verification token itself). */
  plainMessage?: string,
): void {
  const field = `${P}.clientSignature`;
  if (p.clientSignature === undefined || p.clientSignature === null) throw invalid(field, 'is required');
  const cs = asObject(p.clientSignature, field);
  const publicKey = reqString(cs, 'publicKey', field).toLowerCase();
  const scheme = reqString(cs, 'scheme', field);
  const message = reqString(cs, 'message', field);
  const signature = reqString(cs, 'signature', field);
  if (scheme !== 'CLIENT_SIGNATURE_SCHEME_API_P256')
    throw invalid(`${field}.scheme`, 'must be CLIENT_SIGNATURE_SCHEME_API_P256');
  if (claims.public_key === '' || publicKey !== claims.public_key.toLowerCase())
    throw invalid(`${field}.publicKey`, 'must be the key the verification token was issued to');
  if (!verifyClientSignature({ publicKey, message, signature }))
    throw invalid(`${field}.signature`, "does not verify: not signed by the token's key over the message");
  if (plainMessage !== undefined && message === plainMessage) return;
  let m: Params;
  try {
    m = asObject(JSON.parse(message), `${field}.message`);
  } catch {
    throw invalid(`${field}.message`, 'must be the JSON usage message');
  }
  if (m.tokenId !== claims.id || !expected(m))
    throw invalid(
      `${field}.message`,
      'does not describe this request (token id, usage type or parameters differ)',
    );
}

const otpLogin = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${P}.verificationToken`;
  const sealed = openSecretParam(ctx.vault, ctx.activityId, p, 'verificationToken');
  if (sealed === undefined) throw invalid(field, 'is required');
  const token = Buffer.from(sealed).toString('utf8');
  zeroize(sealed);
  const publicKey = sessionPublicKey(p);
  const sessionSecs = sessionSeconds(p);
  const invalidateExisting = optBool(p, 'invalidateExisting', P) ?? false;
  const wantedOrg = optString(p, 'organizationId', P);
  const claims = await organizationToken(ctx, token, field);
  checkUsageSignature(
    p,
    claims,
    (m) => {
      const login = m.login;
      return (
        m.type === 'USAGE_TYPE_LOGIN' &&
        typeof login === 'object' &&
        login !== null &&
        (login as Params).publicKey === publicKey
      );
    },
    token,
  );
  const user = await contactUser(ctx, claims.verification_type, claims.contact, wantedOrg, field);
  const { session, write } = await openLoginSession(ctx, {
    user,
    publicKey,
    seconds: sessionSecs,
    invalidateExisting,
  });
  return {
    result: { session },
    write: async (tx) => {
      if (!(await tx.consumeVerificationToken(claims.id, ctx.organization.id, ctx.nowMs)))
        throw invalid(field, 'invalid verification token: the token has already been used');
      await tx.markContactVerified(
        user.id,
        claims.verification_type === 'OTP_TYPE_EMAIL' ? 'EMAIL' : 'PHONE_NUMBER',
        claims.contact,
        ctx.nowMs,
      );
      await write(tx);
    },
  };
};

export const OTP_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_INIT_OTP_V3',
    path: 'init_otp',
    intentKey: 'initOtpIntentV3',
    resultKey: 'initOtpResultV2',
    run: initOtp,
  },
  {
    type: 'ACTIVITY_TYPE_VERIFY_OTP_V2',
    path: 'verify_otp',
    intentKey: 'verifyOtpIntentV2',
    resultKey: 'verifyOtpResult',
    run: verifyOtp,
    secretParams: ['otpCode'],
  },
  {
    type: 'ACTIVITY_TYPE_OTP_LOGIN_V2',
    path: 'otp_login',
    intentKey: 'otpLoginIntentV2',
    resultKey: 'otpLoginResult',
    run: otpLogin,
    secretParams: ['verificationToken'],
  },
];
