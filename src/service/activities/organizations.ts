/**
 * create_sub_organization (V8, turnkey-api.md 9.4): a child organization of the caller's with its
 * root users (API keys, OAuth providers), root quorum, an optional HD wallet and the auth feature
 * switches, created in the one transaction that records the activity.
 *
 * `authenticators` are read exactly as create_users reads them (users.ts parseAuthenticators: the
 * attestation object down to its ES256 COSE key, the clientDataJson challenge and credential id
 * checked; the attestation statement is not verified, as with attestation "none").
 *
 * `oauthProviders[].oidcToken` is verified before anything is parsed (authProxy/oidcTokens.ts: the
 * issuer's JWKS, `aud` one of the organization's OAuth client ids, unexpired; no nonce, since
 * sign-up has no session key yet) and the provider registered from its verified (iss, aud, sub);
 * `oidcClaims` {iss, sub, aud} are registered as the caller vouches for them.
 */
import { createPublicKey, randomUUID } from 'node:crypto';
import { CountersignError, invalid } from '../../shared/errors.js';
import { isValidPublicKey } from '../../shared/secp256k1.js';
import { organizationToken } from './otp.js';
import { verifyOrganizationOidcToken } from '../authProxy/oidcTokens.js';
import type { OidcClaims } from '../authProxy/oidc.js';
import { verifyClientSignature, type VerificationTokenClaims } from '../keys/jwt.js';
import { p256Key } from '../keys/apiPublicKeys.js';
import { uuidv7 } from '../ids.js';
import {
  API_KEY_CURVES,
  type ApiKeyRecord,
  type AuthenticatorRecord,
  type ContactKind,
  type OAuthProviderRecord,
  type OrganizationRecord,
  type StoreTx,
  type UserRecord,
} from '../store/types.js';
import { asObject, optBool, optString, reqArray, reqEnum, reqString, type Params } from './params.js';
import { parseAuthenticators, type AuthenticatorSpec } from './users.js';
import { buildWallet, insertWallet, parseAccountSpec, type AccountSpec } from './wallets.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';

const PREFIX = 'parameters';
const MNEMONIC_LENGTHS = [12, 15, 18, 21, 24] as const;
/** E.164: a plus, then up to 15 digits, no leading zero (ITU-T E.164 section 6). */
const E164_RE = /^\+[1-9][0-9]{1,14}$/;
/** Deliberately loose (RFC 5322 is not checked): one @, no spaces, a dot in the domain. */
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');
/** The auth switches of a sub-organization, stored as organization features (value "true"/"false"). */
const AUTH_FEATURES = [
  ['disableEmailRecovery', 'FEATURE_NAME_EMAIL_RECOVERY'],
  ['disableEmailAuth', 'FEATURE_NAME_EMAIL_AUTH'],
  ['disableSmsAuth', 'FEATURE_NAME_SMS_AUTH'],
  ['disableOtpEmailAuth', 'FEATURE_NAME_OTP_EMAIL_AUTH'],
] as const;

interface ApiKeySpec {
  readonly name: string;
  readonly publicKey: string;
  readonly curve: (typeof API_KEY_CURVES)[number];
  readonly expirationSeconds: number | null;
}

interface RootUserSpec {
  readonly name: string;
  readonly email: string | null;
  readonly phoneNumber: string | null;
  readonly apiKeys: readonly ApiKeySpec[];
  readonly authenticators: readonly AuthenticatorSpec[];
  readonly oauth: readonly { readonly name: string; iss: string; sub: string; aud: string }[];
}

function validPublicKey(curve: ApiKeySpec['curve'], hex: string): boolean {
  switch (curve) {
    case 'API_KEY_CURVE_P256':
      return /^0[23][0-9a-f]{64}$/.test(hex) && p256Key(hex) !== undefined;
    case 'API_KEY_CURVE_SECP256K1':
      return /^0[23][0-9a-f]{64}$/.test(hex) && isValidPublicKey(Buffer.from(hex, 'hex'));
    case 'API_KEY_CURVE_ED25519':
      if (!/^[0-9a-f]{64}$/.test(hex)) return false;
      try {
        createPublicKey({
          key: Buffer.concat([ED25519_SPKI, Buffer.from(hex, 'hex')]),
          format: 'der',
          type: 'spki',
        });
        return true;
      } catch {
        return false;
      }
    default: {
      const never: never = curve;
      return never;
    }
  }
}

/** A positive whole number of seconds, as a decimal string or a JSON integer. */
function optSeconds(p: Params, key: string, field: string): number | null {
  const v = p[key];
  if (v === undefined || v === null || v === '') return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^[0-9]{1,12}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 1)
    throw invalid(`${field}.${key}`, 'must be a positive number of seconds');
  return n;
}

function parseApiKey(value: unknown, field: string): ApiKeySpec {
  const k = asObject(value, field);
  const name = reqString(k, 'apiKeyName', field);
  const curve = reqEnum(k, 'curveType', field, API_KEY_CURVES);
  const publicKey = reqString(k, 'publicKey', field).toLowerCase();
  if (!validPublicKey(curve, publicKey))
    throw invalid(
      `${field}.publicKey`,
      curve === 'API_KEY_CURVE_ED25519'
        ? 'must be a 32-byte ed25519 public key in hex'
        : `must be a compressed ${curve === 'API_KEY_CURVE_P256' ? 'P-256' : 'secp256k1'} public key (33 bytes, hex, 02/03 prefix)`,
    );
  return { name, publicKey, curve, expirationSeconds: optSeconds(k, 'expirationSeconds', field) };
}

function parseOauthProvider(
  value: unknown,
  field: string,
  verified: ReadonlyMap<string, OidcClaims>,
): RootUserSpec['oauth'][number] {
  const o = asObject(value, field);
  const name = reqString(o, 'providerName', field);
  if (o.oidcToken !== undefined && o.oidcToken !== null && typeof o.oidcToken !== 'string')
    throw invalid(`${field}.oidcToken`, 'must be a string (a JWT)');
  if (typeof o.oidcToken === 'string' && o.oidcToken !== '') {
    const c = verified.get(o.oidcToken);
    if (c === undefined) throw invalid(`${field}.oidcToken`, 'was not verified');
    return { name, iss: c.issuer, sub: c.subject, aud: c.audience };
  }
  if (o.oidcClaims === undefined || o.oidcClaims === null)
    throw new CountersignError('FIELD_MISSING', `${field}.oidcClaims: is required`, {
      field: `${field}.oidcClaims`,
    });
  const c = asObject(o.oidcClaims, `${field}.oidcClaims`);
  return {
    name,
    iss: reqString(c, 'iss', `${field}.oidcClaims`),
    sub: reqString(c, 'sub', `${field}.oidcClaims`),
    aud: reqString(c, 'aud', `${field}.oidcClaims`),
  };
}

function parseRootUser(
  value: unknown,
  field: string,
  verified: ReadonlyMap<string, OidcClaims>,
): RootUserSpec {
  const u = asObject(value, field);
  const name = reqString(u, 'userName', field);
  const email = optString(u, 'userEmail', field) || null;
  if (email !== null && !EMAIL_RE.test(email)) throw invalid(`${field}.userEmail`, 'is not an email address');
  const phoneNumber = optString(u, 'userPhoneNumber', field) || null;
  if (phoneNumber !== null && !E164_RE.test(phoneNumber))
    throw invalid(`${field}.userPhoneNumber`, 'must be an E.164 phone number (+ and up to 15 digits)');
  const apiKeys = reqArray(u, 'apiKeys', field).map((k, i) => parseApiKey(k, `${field}.apiKeys.${i}`));
  const names = new Set<string>();
  apiKeys.forEach((k, i) => {
    if (names.has(k.name)) throw notUnique(`${field}.apiKeys.${i}.apiKeyName`);
    names.add(k.name);
  });
  const authenticators = parseAuthenticators(reqArray(u, 'authenticators', field), `${field}.authenticators`);
  const oauth = reqArray(u, 'oauthProviders', field).map((o, i) =>
    parseOauthProvider(o, `${field}.oauthProviders.${i}`, verified),
  );
  return { name, email, phoneNumber, apiKeys, authenticators, oauth };
}

function notUnique(field: string): CountersignError {
  return new CountersignError('NAME_NOT_UNIQUE', `${field}: This field must be unique.`, { field });
}

function parseWallet(
  p: Params,
): { name: string; specs: AccountSpec[]; length: (typeof MNEMONIC_LENGTHS)[number] } | null {
  if (p.wallet === undefined || p.wallet === null) return null;
  const field = `${PREFIX}.wallet`;
  const w = asObject(p.wallet, field);
  const name = reqString(w, 'walletName', field);
  const specs = reqArray(w, 'accounts', field).map((a, i) => parseAccountSpec(a, `${field}.accounts.${i}`));
  const seen = new Set<string>();
  specs.forEach((s, i) => {
    const k = `${s.curve}|${s.path}|${s.addressFormat}`;
    if (seen.has(k))
      throw invalid(`${field}.accounts.${i}.path`, 'the same account appears twice in this request');
    seen.add(k);
  });
  const raw = w.mnemonicLength;
  const length =
    raw === undefined || raw === null
      ? 12
      : typeof raw === 'string' && /^[0-9]+$/.test(raw)
        ? Number(raw)
        : raw;
  if (!(MNEMONIC_LENGTHS as readonly unknown[]).includes(length))
    throw invalid(`${field}.mnemonicLength`, 'must be one of 12, 15, 18, 21, 24');
  return { name, specs, length: length as (typeof MNEMONIC_LENGTHS)[number] };
}

function parseThreshold(p: Params, users: number): number {
  const field = `${PREFIX}.rootQuorumThreshold`;
  const v = p.rootQuorumThreshold;
  if (v === undefined || v === null)
    throw new CountersignError('FIELD_MISSING', `${field}: is required`, { field });
  if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(field, 'must be an integer');
  if (v < 1 || v > users) throw invalid(field, `must be between 1 and the number of root users (${users})`);
  return v;
}

/**
 * The signup client signature of turnkey-api.md 9.2: signed by the token's key over
 * `{signupV2:{apiKeys?, authenticators?, oauthProviders?, email?, phoneNumber?}, tokenId, type}`.
 * The signed email/phone and API keys must be those of the verified user in this request, so a
 * token cannot be used to register credentials its holder did not sign for.
 */
function checkClientSignature(p: Params, claims: VerificationTokenClaims, user: RootUserSpec): void {
  const field = `${PREFIX}.clientSignature`;
  if (p.clientSignature === undefined || p.clientSignature === null)
    throw new CountersignError(
      'FIELD_MISSING',
      `${field}: is required: the verification token carries a public key, so its holder must sign the signup`,
      { field },
    );
  const cs = asObject(p.clientSignature, field);
  reqEnum(cs, 'scheme', field, ['CLIENT_SIGNATURE_SCHEME_API_P256'] as const);
  const publicKey = reqString(cs, 'publicKey', field);
  const message = reqString(cs, 'message', field);
  const signature = reqString(cs, 'signature', field);
  if (publicKey.toLowerCase() !== claims.public_key.toLowerCase())
    throw invalid(`${field}.publicKey`, "must be the verification token's public_key");
  if (!verifyClientSignature({ publicKey: publicKey.toLowerCase(), message, signature }))
    throw invalid(`${field}.signature`, 'is not a P-256 signature (r‖s hex) of the message by publicKey');
  let m: Params;
  try {
    m = asObject(JSON.parse(message), `${field}.message`);
  } catch (e) {
    if (e instanceof CountersignError) throw e;
    throw invalid(`${field}.message`, 'is not JSON');
  }
  if (m.type !== 'USAGE_TYPE_SIGNUP') throw invalid(`${field}.message`, "must have type 'USAGE_TYPE_SIGNUP'");
  if (m.tokenId !== claims.id)
    throw invalid(`${field}.message`, "tokenId must be the verification token's id");
  const usage = asObject(m.signupV2, `${field}.message.signupV2`);
  const signedEmail = optString(usage, 'email', `${field}.message.signupV2`);
  if (signedEmail !== undefined && signedEmail.toLowerCase() !== (user.email ?? '').toLowerCase())
    throw invalid(`${field}.message`, 'the signed email is not the verified root user’s email');
  const signedPhone = optString(usage, 'phoneNumber', `${field}.message.signupV2`);
  if (signedPhone !== undefined && signedPhone !== user.phoneNumber)
    throw invalid(`${field}.message`, 'the signed phone number is not the verified root user’s phone number');
  const signedKeys = (Array.isArray(usage.apiKeys) ? usage.apiKeys : []).map((k, i) =>
    String(asObject(k, `${field}.message.signupV2.apiKeys.${i}`).publicKey ?? '').toLowerCase(),
  );
  const requested = user.apiKeys.map((k) => k.publicKey);
  if (signedKeys.length !== requested.length || !requested.every((k) => signedKeys.includes(k)))
    throw invalid(`${field}.message`, 'the signed API keys are not the verified root user’s API keys');
  const signedCreds = (Array.isArray(usage.authenticators) ? usage.authenticators : []).map((a, i) => {
    const f = `${field}.message.signupV2.authenticators.${i}`;
    const att = asObject(asObject(a, f).attestation ?? {}, `${f}.attestation`);
    return String(att.credentialId ?? '').replace(/=+$/, '');
  });
  const requestedCreds = user.authenticators.map((a) => a.credentialId);
  if (signedCreds.length !== requestedCreds.length || !requestedCreds.every((c) => signedCreds.includes(c)))
    throw invalid(
      `${field}.message`,
      'the signed authenticators are not the verified root user’s authenticators',
    );
}

/** What a checked verification token proves: which root user holds which contact. */
interface VerifiedContact {
  readonly tokenId: string;
  /** Index into the request's root users. */
  readonly user: number;
  readonly kind: ContactKind;
  readonly value: string;
}

/** Checks verificationToken/clientSignature; returns the token's proof to consume, or null if none. */
async function checkVerification(
  ctx: ActivityContext,
  p: Params,
  users: readonly RootUserSpec[],
): Promise<VerifiedContact | null> {
  const token = optString(p, 'verificationToken', PREFIX);
  if (token === undefined || token === '') {
    if (p.clientSignature !== undefined && p.clientSignature !== null)
      throw invalid(`${PREFIX}.clientSignature`, 'is only accepted with a verificationToken');
    return null;
  }
  const field = `${PREFIX}.verificationToken`;
  const claims = await organizationToken(ctx, token, field);
  let user: RootUserSpec | undefined;
  switch (claims.verification_type) {
    case 'OTP_TYPE_EMAIL':
      user = users.find((u) => u.email !== null && u.email.toLowerCase() === claims.contact.toLowerCase());
      break;
    case 'OTP_TYPE_SMS':
      user = users.find((u) => u.phoneNumber === claims.contact);
      break;
    default:
      throw invalid(field, `verification_type ${claims.verification_type} is not a contact verification`);
  }
  if (user === undefined)
    throw invalid(field, "the token's contact is not a root user's email or phone number");
  checkClientSignature(p, claims, user);
  return {
    tokenId: claims.id,
    user: users.indexOf(user),
    kind: claims.verification_type === 'OTP_TYPE_EMAIL' ? 'EMAIL' : 'PHONE_NUMBER',
    value: claims.contact,
  };
}

/** The verified claims of every `rootUsers[].oauthProviders[].oidcToken`, by token. */
async function verifyRootUserTokens(
  ctx: ActivityContext,
  list: readonly unknown[],
): Promise<Map<string, OidcClaims>> {
  const out = new Map<string, OidcClaims>();
  for (const [i, u] of list.entries()) {
    const providers = typeof u === 'object' && u !== null ? (u as Params).oauthProviders : undefined;
    if (!Array.isArray(providers)) continue;
    for (const [j, o] of providers.entries()) {
      const token = typeof o === 'object' && o !== null ? (o as Params).oidcToken : undefined;
      if (typeof token !== 'string' || token === '' || out.has(token)) continue;
      out.set(
        token,
        await verifyOrganizationOidcToken({
          store: ctx.store,
          organization: ctx.organization,
          token,
          field: `${PREFIX}.rootUsers.${i}.oauthProviders.${j}.oidcToken`,
          nowMs: ctx.nowMs,
        }),
      );
    }
  }
  return out;
}

const createSubOrganization = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  if (ctx.organization.parentId !== null)
    throw new CountersignError(
      'REQUEST_NOT_AUTHORIZED',
      'request not authorized: a sub-organization cannot create sub-organizations',
      { field: 'organizationId' },
    );
  const name = reqString(p, 'subOrganizationName', PREFIX);
  const list = reqArray(p, 'rootUsers', PREFIX);
  if (list.length === 0) throw invalid(`${PREFIX}.rootUsers`, 'must hold at least one root user');
  const tokens = await verifyRootUserTokens(ctx, list);
  const users = list.map((u, i) => parseRootUser(u, `${PREFIX}.rootUsers.${i}`, tokens));
  const userNames = new Set<string>();
  const publicKeys = new Set<string>();
  const claims = new Set<string>();
  const credentials = new Set<string>();
  users.forEach((u, i) => {
    if (userNames.has(u.name)) throw notUnique(`${PREFIX}.rootUsers.${i}.userName`);
    userNames.add(u.name);
    u.apiKeys.forEach((k, j) => {
      if (publicKeys.has(k.publicKey))
        throw invalid(
          `${PREFIX}.rootUsers.${i}.apiKeys.${j}.publicKey`,
          'the same public key appears twice in this request',
        );
      publicKeys.add(k.publicKey);
    });
    u.authenticators.forEach((a, j) => {
      if (credentials.has(a.credentialId))
        throw invalid(
          `${PREFIX}.rootUsers.${i}.authenticators.${j}.attestation.credentialId`,
          'the same credential appears twice in this request',
        );
      credentials.add(a.credentialId);
    });
    u.oauth.forEach((o, j) => {
      const key = JSON.stringify([o.iss, o.aud, o.sub]);
      if (claims.has(key))
        throw invalid(
          `${PREFIX}.rootUsers.${i}.oauthProviders.${j}.oidcClaims`,
          'OAuth provider already exists: the same (iss, aud, sub) appears twice',
        );
      claims.add(key);
    });
  });
  const threshold = parseThreshold(p, users.length);
  const wallet = parseWallet(p);
  const flags = AUTH_FEATURES.map(([param, feature]) => ({
    feature,
    disabled: optBool(p, param, PREFIX) ?? false,
  }));
  const verified = await checkVerification(ctx, p, users);

  const nowMs = ctx.nowMs;
  const org: OrganizationRecord = {
    id: uuidv7(nowMs),
    name,
    parentId: ctx.organization.id,
    rootQuorumThreshold: threshold,
    createdAtMs: nowMs,
  };
  const records = users.map((u) => {
    const user: UserRecord = {
      id: randomUUID(),
      organizationId: org.id,
      name: u.name,
      email: u.email,
      phoneNumber: u.phoneNumber,
      isRoot: true,
      createdAtMs: nowMs,
      updatedAtMs: nowMs,
    };
    const apiKeys: ApiKeyRecord[] = u.apiKeys.map((k) => ({
      id: randomUUID(),
      userId: user.id,
      organizationId: org.id,
      name: k.name,
      publicKey: k.publicKey,
      curve: k.curve,
      expiresAtMs: k.expirationSeconds === null ? null : nowMs + k.expirationSeconds * 1000,
      createdAtMs: nowMs,
    }));
    const oauth: OAuthProviderRecord[] = u.oauth.map((o) => ({
      id: randomUUID(),
      userId: user.id,
      organizationId: org.id,
      name: o.name,
      issuer: o.iss,
      audience: o.aud,
      subject: o.sub,
      createdAtMs: nowMs,
    }));
    const authenticators: AuthenticatorRecord[] = u.authenticators.map((a) => ({
      id: randomUUID(),
      userId: user.id,
      organizationId: org.id,
      name: a.name,
      credentialId: a.credentialId,
      publicKey: a.publicKey,
      createdAtMs: nowMs,
    }));
    return { user, apiKeys, authenticators, oauth };
  });
  const built =
    wallet === null
      ? null
      : buildWallet(ctx.vault, org.id, wallet.name, wallet.specs, wallet.length, nowMs, `${PREFIX}.wallet`);

  const write = async (tx: StoreTx): Promise<void> => {
    // Checked here, inside the transaction, so two racing requests cannot both pass.
    if (await tx.subOrganizationNameTaken(ctx.organization.id, name))
      throw notUnique(`${PREFIX}.subOrganizationName`);
    if (
      verified !== null &&
      !(await tx.consumeVerificationToken(verified.tokenId, ctx.organization.id, nowMs))
    )
      throw invalid(`${PREFIX}.verificationToken`, 'the token has already been used');
    await tx.insertOrganization(org);
    for (const r of records) {
      await tx.insertUser(r.user);
      for (const k of r.apiKeys) await tx.insertApiKey(k);
      for (const a of r.authenticators) await tx.insertAuthenticator(a);
      for (const o of r.oauth) await tx.insertOAuthProvider(o);
    }
    if (verified !== null) {
      const holder = records[verified.user];
      if (holder !== undefined)
        await tx.markContactVerified(holder.user.id, verified.kind, verified.value, nowMs);
    }
    for (const f of flags)
      await tx.setOrganizationFeature(org.id, f.feature, f.disabled ? 'false' : 'true', nowMs);
    if (built !== null) await insertWallet(tx, built, `${PREFIX}.wallet.walletName`);
  };
  return {
    result: {
      subOrganizationId: org.id,
      ...(built === null
        ? {}
        : { wallet: { walletId: built.wallet.id, addresses: built.accounts.map((a) => a.address) } }),
      rootUserIds: records.map((r) => r.user.id),
    },
    write,
  };
};

export const ORGANIZATION_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
    path: 'create_sub_organization',
    intentKey: 'createSubOrganizationIntentV8',
    resultKey: 'createSubOrganizationResultV8',
    run: createSubOrganization,
  },
];
