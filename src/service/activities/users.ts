/**
 * Users and their credentials (issue 4): create_users (V2–V4), update_user, update_user_email (with
 * the verification-token JWT of turnkey-api.md 9.2), delete_users, create_api_keys (V1, V2),
 * delete_api_keys, create_user_tag, create_invitations and delete_invitation.
 */
import { randomUUID } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { p256 } from '@noble/curves/nist.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import { bytesToHex, hexToBytes } from '../../shared/encoding.js';
import { isValidPublicKey } from '../../shared/secp256k1.js';
import { SERVICE_SIGNER_KEY_ID } from '../keys/index.js';
import { verifyVerificationToken } from '../keys/jwt.js';
import {
  API_KEY_CURVES,
  INVITATION_ACCESS_TYPES,
  type ApiKeyCurve,
  type ApiKeyRecord,
  type AuthenticatorRecord,
  type InvitationRecord,
  type OAuthProviderRecord,
  type StoreTx,
  type UserRecord,
  type UserTagRecord,
} from '../store/types.js';
import {
  asObject,
  isUuid,
  notFound,
  optArray,
  optString,
  reqArray,
  reqEnum,
  reqString,
  reqUuid,
  type Params,
} from './params.js';
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';
import { readRegistration, WebauthnError, type WebauthnPolicy } from '../webauthn.js';

const PREFIX = 'parameters';

/** Per-user credential limits (turnkey-api.md 1.5, resource-limits). */
export const MAX_LONG_LIVED_API_KEYS = 10;
export const MAX_EXPIRING_API_KEYS = 10;
export const MAX_AUTHENTICATORS = 10;

// ---- small validators ----

export const E164_RE = /^\+[1-9][0-9]{1,14}$/;
// Deliberately loose (RFC 5322 is not worth matching): one @, no spaces, a dot in the domain.
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function optPhone(p: Params, key: string, prefix: string): string | undefined {
  const v = optString(p, key, prefix);
  if (v === undefined) return undefined;
  if (!E164_RE.test(v))
    throw invalid(`${prefix}.${key}`, 'must be a phone number in E.164 format, e.g. +13214567890');
  return v;
}

export function checkEmail(v: string, field: string): string {
  if (!EMAIL_RE.test(v)) throw invalid(field, 'must be an email address');
  return v;
}

function optEmail(p: Params, key: string, prefix: string): string | undefined {
  const v = optString(p, key, prefix);
  return v === undefined ? undefined : checkEmail(v, `${prefix}.${key}`);
}

/** A list of distinct UUIDs (`field.i` named on the first bad one). */
export function uuidList(values: readonly unknown[], field: string, what: string): string[] {
  const seen = new Set<string>();
  return values.map((v, i) => {
    if (typeof v !== 'string' || !isUuid(v)) throw invalid(`${field}.${i}`, 'must be a UUID');
    const id = v.toLowerCase();
    if (seen.has(id)) throw invalid(`${field}.${i}`, `the same ${what} appears twice in this request`);
    seen.add(id);
    return id;
  });
}

export function nonEmpty<T>(list: readonly T[], field: string, what: string): readonly T[] {
  if (list.length === 0) throw invalid(field, `must hold at least one ${what}`);
  return list;
}

// ---- API keys ----

export interface ApiKeySpec {
  readonly name: string;
  readonly publicKey: string;
  readonly curve: ApiKeyCurve;
  readonly expirationSeconds: number | null;
}

/**
 * Checks that `hex` is a public key of `curve` as stamps carry it: a compressed SEC1 point (33 bytes)
 * for P-256 and secp256k1, 32 raw bytes for ed25519; returns it lower-cased.
 */
export function parseApiPublicKey(hex: string, curve: ApiKeyCurve, field: string): string {
  const bytes = hexToBytes(hex, field);
  const point = (ok: () => boolean): boolean => {
    try {
      return ok();
    } catch {
      return false;
    }
  };
  switch (curve) {
    case 'API_KEY_CURVE_P256':
      if (bytes.length !== 33 || !point(() => (p256.Point.fromBytes(bytes), true)))
        throw invalid(field, 'invalid public key: must be a compressed P-256 point (66 hex digits, 02/03…)');
      break;
    case 'API_KEY_CURVE_SECP256K1':
      if (bytes.length !== 33 || !isValidPublicKey(bytes))
        throw invalid(
          field,
          'invalid public key: must be a compressed secp256k1 point (66 hex digits, 02/03…)',
        );
      break;
    case 'API_KEY_CURVE_ED25519':
      if (bytes.length !== 32 || !point(() => (ed25519.Point.fromBytes(bytes), true)))
        throw invalid(field, 'invalid public key: must be a 32-byte ed25519 key (64 hex digits)');
      break;
    default: {
      const never: never = curve;
      throw invalid(field, `unsupported curve ${String(never)}`);
    }
  }
  return bytesToHex(bytes);
}

/**
 * One `v1ApiKeyParamsV2` (`curveType` required) or, for the older versions, `apiApiKeyParams`
 * (no `curveType`: a P-256 key).
 */
export function parseApiKeySpec(value: unknown, field: string, curveRequired: boolean): ApiKeySpec {
  const o = asObject(value, field);
  const name = reqString(o, 'apiKeyName', field);
  const curve =
    curveRequired || (o.curveType !== undefined && o.curveType !== null)
      ? reqEnum(o, 'curveType', field, API_KEY_CURVES)
      : 'API_KEY_CURVE_P256';
  const publicKey = parseApiPublicKey(reqString(o, 'publicKey', field), curve, `${field}.publicKey`);
  const exp = o.expirationSeconds;
  let expirationSeconds: number | null = null;
  if (exp !== undefined && exp !== null) {
    const text = typeof exp === 'number' ? String(exp) : exp;
    if (typeof text !== 'string' || !/^[1-9][0-9]{0,11}$/.test(text))
      throw invalid(`${field}.expirationSeconds`, 'must be a positive decimal number of seconds');
    expirationSeconds = Number(text);
  }
  return { name, publicKey, curve, expirationSeconds };
}

function parseApiKeySpecs(list: readonly unknown[], field: string, curveRequired: boolean): ApiKeySpec[] {
  const specs = list.map((k, i) => parseApiKeySpec(k, `${field}.${i}`, curveRequired));
  const seen = new Set<string>();
  specs.forEach((s, i) => {
    if (seen.has(s.publicKey))
      throw invalid(`${field}.${i}.publicKey`, 'the same public key appears twice in this request');
    seen.add(s.publicKey);
  });
  return specs;
}

function apiKeyRecord(spec: ApiKeySpec, userId: string, organizationId: string, nowMs: number): ApiKeyRecord {
  return {
    id: randomUUID(),
    userId,
    organizationId,
    name: spec.name,
    publicKey: spec.publicKey,
    curve: spec.curve,
    expiresAtMs: spec.expirationSeconds === null ? null : nowMs + spec.expirationSeconds * 1000,
    createdAtMs: nowMs,
  };
}

/**
 * Inserts API keys for a user inside the write transaction: refuses a public key the organization
 * already knows (a stamp must name one user) and more than the per-user limits of live keys.
 * FIELD_INVALID stands in for a RESOURCE_EXHAUSTED-class code (HTTP 429) that errors.ts lacks.
 */
export async function insertApiKeys(
  tx: StoreTx,
  records: readonly ApiKeyRecord[],
  field: (i: number) => string,
  nowMs: number,
): Promise<void> {
  const byUser = new Map<string, ApiKeyRecord[]>();
  for (const [i, r] of records.entries()) {
    if (await tx.apiKeyPublicKeyTaken(r.organizationId, r.publicKey))
      throw invalid(
        `${field(i)}.publicKey`,
        'an API key with this public key already exists in the organization',
      );
    await tx.insertApiKey(r);
    byUser.set(r.userId, [...(byUser.get(r.userId) ?? []), r]);
  }
  for (const [userId, added] of byUser) {
    const keys = await tx.listApiKeysOfUser(userId);
    const longLived = keys.filter((k) => k.expiresAtMs === null).length;
    // Expired keys can no longer stamp, so they do not count against the limit.
    const expiring = keys.filter((k) => k.expiresAtMs !== null && k.expiresAtMs > nowMs).length;
    const first = records.indexOf(added[0] as ApiKeyRecord);
    if (longLived > MAX_LONG_LIVED_API_KEYS)
      throw invalid(
        field(first).replace(/\.[0-9]+$/, ''),
        `user has exceeded maximum long-lived api keys (${MAX_LONG_LIVED_API_KEYS})`,
        'RESOURCE_LIMIT_EXCEEDED',
      );
    if (expiring > MAX_EXPIRING_API_KEYS)
      throw invalid(
        field(first).replace(/\.[0-9]+$/, ''),
        `user has exceeded maximum short-lived api keys (${MAX_EXPIRING_API_KEYS})`,
        'RESOURCE_LIMIT_EXCEEDED',
      );
  }
}

// ---- authenticators (WebAuthn attestation, read with @simplewebauthn/server: ../webauthn.ts) ----

export interface AttestedCredential {
  /** base64url (no padding) of the credential id, as assertions name it. */
  readonly credentialId: string;
  /** Compressed P-256 public key, hex. */
  readonly publicKey: string;
}

const b64url = (s: string, field: string): Uint8Array => {
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(s)) throw invalid(field, 'must be base64url');
  return new Uint8Array(Buffer.from(s, 'base64url'));
};

/**
 * Reads the credential a WebAuthn registration created (see readRegistration): `clientDataJson` a
 * `webauthn.create` over `challenge`, the credential id that of the authenticator data, an ES256 key.
 */
export function parseAttestation(p: Params, field: string, policy?: WebauthnPolicy): AttestedCredential {
  const challenge = reqString(p, 'challenge', field);
  const att = asObject(p.attestation, `${field}.attestation`);
  const af = `${field}.attestation`;
  const credentialId = b64url(reqString(att, 'credentialId', af), `${af}.credentialId`);
  const clientDataJson = b64url(reqString(att, 'clientDataJson', af), `${af}.clientDataJson`);
  const attestationObject = b64url(reqString(att, 'attestationObject', af), `${af}.attestationObject`);
  if (att.transports !== undefined && !Array.isArray(att.transports))
    throw invalid(`${af}.transports`, 'must be an array');
  let cred: ReturnType<typeof readRegistration>;
  try {
    cred = readRegistration({ challenge, credentialId, clientDataJson, attestationObject }, policy);
  } catch (e) {
    if (!(e instanceof WebauthnError)) throw e;
    const f = /clientDataJson|origin/.test(e.message) ? `${af}.clientDataJson` : `${af}.attestationObject`;
    throw invalid(f, e.message.replace(/^clientDataJson /, ''));
  }
  if (cred.fault === 'challenge')
    throw invalid(`${field}.challenge`, 'does not match the challenge in clientDataJson');
  if (cred.fault === 'credentialId')
    throw invalid(`${af}.credentialId`, 'does not match the credential id in the attestation object');
  return { credentialId: cred.credentialId, publicKey: cred.publicKey };
}

export interface AuthenticatorSpec extends AttestedCredential {
  readonly name: string;
}

export function parseAuthenticators(list: readonly unknown[], field: string): AuthenticatorSpec[] {
  if (list.length > MAX_AUTHENTICATORS)
    throw invalid(field, `user has exceeded maximum authenticators (${MAX_AUTHENTICATORS})`);
  const seen = new Set<string>();
  return list.map((v, i) => {
    const f = `${field}.${i}`;
    const o = asObject(v, f);
    const name = reqString(o, 'authenticatorName', f);
    const cred = parseAttestation(o, f);
    if (seen.has(cred.credentialId))
      throw invalid(`${f}.attestation.credentialId`, 'the same credential appears twice in this request');
    seen.add(cred.credentialId);
    return { name, ...cred };
  });
}

// ---- OAuth providers ----

interface OAuthSpec {
  readonly name: string;
  readonly issuer: string;
  readonly audience: string;
  readonly subject: string;
}

/**
 * `{providerName, oidcToken}` or `{providerName, oidcClaims: {iss, sub, aud}}`. A token's claims are
 * read without checking its signature: registering a token grants no more than registering the same
 * claims directly (V4's `oidcClaims`), and the activity is authorized by the policy engine either way.
 */
function parseOAuthProvider(value: unknown, field: string): OAuthSpec {
  const o = asObject(value, field);
  const name = reqString(o, 'providerName', field);
  let claims: Params;
  if (o.oidcClaims !== undefined && o.oidcClaims !== null) {
    claims = asObject(o.oidcClaims, `${field}.oidcClaims`);
    return {
      name,
      issuer: reqString(claims, 'iss', `${field}.oidcClaims`),
      audience: reqString(claims, 'aud', `${field}.oidcClaims`),
      subject: reqString(claims, 'sub', `${field}.oidcClaims`),
    };
  }
  const token = reqString(o, 'oidcToken', field);
  const part = token.split('.')[1];
  try {
    claims = asObject(JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')), 'claims');
  } catch {
    throw invalid(`${field}.oidcToken`, 'is not a JWT with a JSON payload');
  }
  const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
  const { iss, sub } = claims;
  if (typeof iss !== 'string' || typeof sub !== 'string' || typeof aud !== 'string' || !iss || !sub || !aud)
    throw invalid(`${field}.oidcToken`, 'must carry iss, sub and aud claims');
  return { name, issuer: iss, audience: aud, subject: sub };
}

// ---- users ----

interface UserSpec {
  readonly record: UserRecord;
  readonly apiKeys: readonly ApiKeyRecord[];
  readonly authenticators: readonly AuthenticatorRecord[];
  readonly oauth: readonly OAuthProviderRecord[];
  readonly tagIds: readonly string[];
}

type CreateUsersVersion = 2 | 3 | 4;

/** One v1UserParamsV2/V3/V4 (V2: no phone number or OAuth providers, API keys without curveType). */
function parseUser(
  value: unknown,
  field: string,
  version: CreateUsersVersion,
  organizationId: string,
  nowMs: number,
): UserSpec {
  const o = asObject(value, field);
  const id = randomUUID();
  const record: UserRecord = {
    id,
    organizationId,
    name: reqString(o, 'userName', field),
    email: optEmail(o, 'userEmail', field) ?? null,
    phoneNumber: version === 2 ? null : (optPhone(o, 'userPhoneNumber', field) ?? null),
    isRoot: false,
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
  };
  const apiKeys = parseApiKeySpecs(reqArray(o, 'apiKeys', field), `${field}.apiKeys`, version !== 2).map(
    (s) => apiKeyRecord(s, id, organizationId, nowMs),
  );
  const authenticators = parseAuthenticators(
    reqArray(o, 'authenticators', field),
    `${field}.authenticators`,
  ).map((a): AuthenticatorRecord => ({
    id: randomUUID(),
    userId: id,
    organizationId,
    name: a.name,
    credentialId: a.credentialId,
    publicKey: a.publicKey,
    createdAtMs: nowMs,
  }));
  const oauth =
    version === 2
      ? []
      : reqArray(o, 'oauthProviders', field).map((v, i): OAuthProviderRecord => ({
          id: randomUUID(),
          userId: id,
          organizationId,
          ...parseOAuthProvider(v, `${field}.oauthProviders.${i}`),
          createdAtMs: nowMs,
        }));
  const tagIds = uuidList(reqArray(o, 'userTags', field), `${field}.userTags`, 'user tag');
  return { record, apiKeys, authenticators, oauth, tagIds };
}

async function checkTags(
  tx: StoreTx,
  organizationId: string,
  tagIds: readonly string[],
  field: string,
): Promise<void> {
  for (const [i, t] of tagIds.entries()) {
    if ((await tx.getUserTag(organizationId, t)) === undefined) throw notFound(`${field}.${i}`, 'user tag');
  }
}

/** Inserts checked users with their credentials; every uniqueness check runs inside the transaction. */
export async function insertUsers(
  tx: StoreTx,
  users: readonly UserSpec[],
  field: (i: number) => string,
  nowMs: number,
): Promise<void> {
  const creds = new Set<string>();
  const oauthSeen = new Set<string>();
  for (const [i, u] of users.entries()) {
    const f = field(i);
    await checkTags(tx, u.record.organizationId, u.tagIds, `${f}.userTags`);
    await tx.insertUser(u.record);
    await insertApiKeys(tx, u.apiKeys, (j) => `${f}.apiKeys.${j}`, nowMs);
    for (const [j, a] of u.authenticators.entries()) {
      const af = `${f}.authenticators.${j}.attestation.credentialId`;
      if (
        creds.has(a.credentialId) ||
        (await tx.authenticatorCredentialTaken(a.organizationId, a.credentialId))
      )
        throw invalid(af, 'an authenticator with this credential id already exists in the organization');
      creds.add(a.credentialId);
      await tx.insertAuthenticator(a);
    }
    for (const [j, p] of u.oauth.entries()) {
      const key = JSON.stringify([p.issuer, p.audience, p.subject]);
      if (
        oauthSeen.has(key) ||
        (await tx.oauthProviderTaken(p.organizationId, p.issuer, p.audience, p.subject))
      )
        throw invalid(
          `${f}.oauthProviders.${j}`,
          'OAUTH_PROVIDER_ALREADY_EXISTS: a user of the organization already has this (iss, aud, sub)',
        );
      oauthSeen.add(key);
      await tx.insertOAuthProvider(p);
    }
    await tx.setUserTags(u.record.id, u.tagIds);
  }
}

function createUsers(version: CreateUsersVersion) {
  return async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
    const field = `${PREFIX}.users`;
    const users = nonEmpty(reqArray(p, 'users', PREFIX), field, 'user').map((u, i) =>
      parseUser(u, `${field}.${i}`, version, ctx.organization.id, ctx.nowMs),
    );
    // Duplicate API keys across users of one request (each list was checked on its own).
    const seen = new Set<string>();
    users.forEach((u, i) =>
      u.apiKeys.forEach((k, j) => {
        if (seen.has(k.publicKey))
          throw invalid(
            `${field}.${i}.apiKeys.${j}.publicKey`,
            'the same public key appears twice in this request',
          );
        seen.add(k.publicKey);
      }),
    );
    return {
      result: { userIds: users.map((u) => u.record.id) },
      write: async (tx) => insertUsers(tx, users, (i) => `${field}.${i}`, ctx.nowMs),
    };
  };
}

/** The user named by `parameters.<key>`, in the caller's organization (read again in the write). */
async function findUser(ctx: ActivityContext, p: Params, key = 'userId'): Promise<UserRecord> {
  const id = reqUuid(p, key, PREFIX).toLowerCase();
  const u = await ctx.store.getUser(id);
  if (u === undefined || u.organizationId !== ctx.organization.id) throw notFound(`${PREFIX}.${key}`, 'user');
  return u;
}

async function userInTx(tx: StoreTx, organizationId: string, id: string, field: string): Promise<UserRecord> {
  const u = await tx.getUser(id);
  if (u === undefined || u.organizationId !== organizationId) throw notFound(field, 'user');
  return u;
}

const updateUser = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const user = await findUser(ctx, p);
  const name = optString(p, 'userName', PREFIX);
  if (name === '') throw invalid(`${PREFIX}.userName`, 'must not be empty');
  const email = optEmail(p, 'userEmail', PREFIX);
  const phone = optPhone(p, 'userPhoneNumber', PREFIX);
  const rawTags = p.userTagIds;
  if (rawTags !== undefined && rawTags !== null && !Array.isArray(rawTags))
    throw invalid(`${PREFIX}.userTagIds`, 'must be an array');
  const tagIds = uuidList(Array.isArray(rawTags) ? rawTags : [], `${PREFIX}.userTagIds`, 'user tag');
  const org = ctx.organization.id;
  return {
    result: { userId: user.id },
    write: async (tx) => {
      const now = await userInTx(tx, org, user.id, `${PREFIX}.userId`);
      await checkTags(tx, org, tagIds, `${PREFIX}.userTagIds`);
      await tx.updateUser({
        ...now,
        name: name ?? now.name,
        email: email ?? now.email,
        phoneNumber: phone ?? now.phoneNumber,
        updatedAtMs: ctx.nowMs,
      });
      // An empty list means "not needed" (Turnkey's wording), so it keeps the user's tags.
      if (tagIds.length > 0) await tx.setUserTags(user.id, tagIds);
    },
  };
};

// ---- verification tokens (turnkey-api.md 9.2) ----

/**
 * Checks `parameters.verificationToken` (when given) for a contact change: issued by this service
 * for this organization (or its parent), of `type`, for exactly `contact`. True when a token was given.
 */
async function checkContactToken(
  ctx: ActivityContext,
  p: Params,
  type: 'OTP_TYPE_EMAIL' | 'OTP_TYPE_SMS',
  contact: string | null,
  contactField: string,
): Promise<boolean> {
  const token = optString(p, 'verificationToken', PREFIX);
  if (token === undefined) return false;
  const field = `${PREFIX}.verificationToken`;
  const signer = await ctx.store.getServiceKey(SERVICE_SIGNER_KEY_ID);
  if (signer === undefined)
    throw new CountersignError(
      'KEY_MATERIAL_UNAVAILABLE',
      'the service has no signing key to check tokens with',
    );
  const claims = verifyVerificationToken({
    token,
    signerPublicKey: signer.publicKey,
    nowMs: ctx.nowMs,
    field,
  });
  if (claims.verification_type !== type)
    throw invalid(field, `invalid verification token: verification_type must be ${type}`);
  const same =
    contact !== null &&
    (type === 'OTP_TYPE_EMAIL'
      ? claims.contact.toLowerCase() === contact.toLowerCase()
      : claims.contact === contact);
  if (!same) throw invalid(field, `invalid verification token: its contact is not ${contactField}`);
  const org = ctx.organization;
  if (claims.organization_id !== org.id && claims.organization_id !== org.parentId)
    throw invalid(field, 'invalid verification token: issued for another organization');
  return true;
}

const updateUserEmail = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const user = await findUser(ctx, p);
  const raw = p.userEmail;
  if (raw === undefined || raw === null)
    throw new CountersignError('FIELD_MISSING', `${PREFIX}.userEmail: is required`, {
      field: `${PREFIX}.userEmail`,
    });
  if (typeof raw !== 'string') throw invalid(`${PREFIX}.userEmail`, 'must be a string');
  // An empty string removes the email (turnkey-api.md 4.1.9).
  const email = raw === '' ? null : checkEmail(raw, `${PREFIX}.userEmail`);
  const verified = await checkContactToken(ctx, p, 'OTP_TYPE_EMAIL', email, `${PREFIX}.userEmail`);
  return {
    result: { userId: user.id },
    write: async (tx) => {
      const now = await userInTx(tx, ctx.organization.id, user.id, `${PREFIX}.userId`);
      await tx.updateUser({ ...now, email, updatedAtMs: ctx.nowMs });
      // A verified contact counts only while it is the user's own (the store compares the value).
      if (verified && email !== null) await tx.markContactVerified(user.id, 'EMAIL', email, ctx.nowMs);
    },
  };
};

// update_user_phone_number: like update_user_email, an empty string removes the number.
const updateUserPhoneNumber = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const user = await findUser(ctx, p);
  const field = `${PREFIX}.userPhoneNumber`;
  const raw = p.userPhoneNumber;
  if (raw === undefined || raw === null)
    throw new CountersignError('FIELD_MISSING', `${field}: is required`, { field });
  if (typeof raw !== 'string') throw invalid(field, 'must be a string');
  const phone = raw === '' ? null : (optPhone(p, 'userPhoneNumber', PREFIX) ?? null);
  const verified = await checkContactToken(ctx, p, 'OTP_TYPE_SMS', phone, field);
  return {
    result: { userId: user.id },
    write: async (tx) => {
      const now = await userInTx(tx, ctx.organization.id, user.id, `${PREFIX}.userId`);
      await tx.updateUser({ ...now, phoneNumber: phone, updatedAtMs: ctx.nowMs });
      if (verified && phone !== null) await tx.markContactVerified(user.id, 'PHONE_NUMBER', phone, ctx.nowMs);
    },
  };
};

const updateUserName = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const user = await findUser(ctx, p);
  const name = reqString(p, 'userName', PREFIX);
  if (name.trim() === '') throw invalid(`${PREFIX}.userName`, 'must not be empty');
  return {
    result: { userId: user.id },
    write: async (tx) => {
      const now = await userInTx(tx, ctx.organization.id, user.id, `${PREFIX}.userId`);
      await tx.updateUser({ ...now, name, updatedAtMs: ctx.nowMs });
    },
  };
};

const deleteUsers = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${PREFIX}.userIds`;
  const ids = uuidList(nonEmpty(reqArray(p, 'userIds', PREFIX), field, 'user id'), field, 'user');
  const org = ctx.organization.id;
  const check = (u: UserRecord | undefined, i: number): void => {
    if (u === undefined || u.organizationId !== org) throw notFound(`${field}.${i}`, 'user');
    if (u.isRoot)
      throw invalid(
        `${field}.${i}`,
        'cannot delete a member of the root quorum; remove the user from the root quorum first',
      );
  };
  for (const [i, id] of ids.entries()) check(await ctx.store.getUser(id), i);
  return {
    result: { userIds: ids },
    write: async (tx) => {
      for (const [i, id] of ids.entries()) {
        check(await tx.getUser(id), i);
        if (!(await tx.deleteUser(org, id))) throw notFound(`${field}.${i}`, 'user');
      }
    },
  };
};

function createApiKeys(curveRequired: boolean) {
  return async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
    const user = await findUser(ctx, p);
    const field = `${PREFIX}.apiKeys`;
    const specs = parseApiKeySpecs(
      nonEmpty(reqArray(p, 'apiKeys', PREFIX), field, 'API key'),
      field,
      curveRequired,
    );
    const records = specs.map((s) => apiKeyRecord(s, user.id, ctx.organization.id, ctx.nowMs));
    return {
      result: { apiKeyIds: records.map((r) => r.id) },
      write: async (tx) => {
        await userInTx(tx, ctx.organization.id, user.id, `${PREFIX}.userId`);
        await insertApiKeys(tx, records, (i) => `${field}.${i}`, ctx.nowMs);
      },
    };
  };
}

const deleteApiKeys = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const user = await findUser(ctx, p);
  const field = `${PREFIX}.apiKeyIds`;
  const ids = uuidList(nonEmpty(reqArray(p, 'apiKeyIds', PREFIX), field, 'API key id'), field, 'API key');
  const owned = new Set((await ctx.store.listApiKeys(user.id)).map((k) => k.id));
  ids.forEach((id, i) => {
    if (!owned.has(id)) throw notFound(`${field}.${i}`, 'API key of this user');
  });
  return {
    result: { apiKeyIds: ids },
    write: async (tx) => {
      for (const [i, id] of ids.entries()) {
        if (!(await tx.deleteApiKey(user.id, id))) throw notFound(`${field}.${i}`, 'API key of this user');
      }
    },
  };
};

const createUserTag = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const name = reqString(p, 'userTagName', PREFIX);
  const field = `${PREFIX}.userIds`;
  const userIds = uuidList(reqArray(p, 'userIds', PREFIX), field, 'user');
  const org = ctx.organization.id;
  const tag: UserTagRecord = {
    id: randomUUID(),
    organizationId: org,
    name,
    createdAtMs: ctx.nowMs,
    updatedAtMs: ctx.nowMs,
  };
  return {
    result: { userTagId: tag.id, userIds },
    write: async (tx) => {
      if (await tx.userTagNameTaken(org, name))
        throw new CountersignError(
          'NAME_NOT_UNIQUE',
          `${PREFIX}.userTagName: a user tag with this name already exists`,
          {
            field: `${PREFIX}.userTagName`,
          },
        );
      for (const [i, id] of userIds.entries()) {
        await userInTx(tx, org, id, `${field}.${i}`);
      }
      await tx.insertUserTag(tag);
      for (const id of userIds) await tx.addUserToTag(tag.id, id);
    },
  };
};

const updateUserTag = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const id = reqUuid(p, 'userTagId', PREFIX).toLowerCase();
  const newName = optString(p, 'newUserTagName', PREFIX);
  if (newName !== undefined && newName.trim() === '')
    throw invalid(`${PREFIX}.newUserTagName`, 'must not be empty');
  const addField = `${PREFIX}.addUserIds`;
  const removeField = `${PREFIX}.removeUserIds`;
  const add = uuidList(optArray(p, 'addUserIds', PREFIX) ?? [], addField, 'user');
  const remove = uuidList(optArray(p, 'removeUserIds', PREFIX) ?? [], removeField, 'user');
  remove.forEach((u, i) => {
    if (add.includes(u)) throw invalid(`${removeField}.${i}`, 'the same user is also in addUserIds');
  });
  const org = ctx.organization.id;
  return {
    result: { userTagId: id },
    write: async (tx) => {
      const tag = await tx.getUserTag(org, id);
      if (tag === undefined) throw notFound(`${PREFIX}.userTagId`, 'user tag');
      if (newName !== undefined && newName !== tag.name) {
        if (await tx.userTagNameTaken(org, newName))
          throw new CountersignError(
            'NAME_NOT_UNIQUE',
            `${PREFIX}.newUserTagName: a user tag with this name already exists`,
            {
              field: `${PREFIX}.newUserTagName`,
            },
          );
        await tx.renameUserTag(org, id, newName, ctx.nowMs);
      }
      for (const [i, u] of add.entries()) {
        await userInTx(tx, org, u, `${addField}.${i}`);
        await tx.addUserToTag(id, u);
      }
      for (const [i, u] of remove.entries()) {
        await userInTx(tx, org, u, `${removeField}.${i}`);
        await tx.removeUserFromTag(id, u);
      }
    },
  };
};

const deleteUserTags = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${PREFIX}.userTagIds`;
  const ids = uuidList(nonEmpty(reqArray(p, 'userTagIds', PREFIX), field, 'user tag id'), field, 'user tag');
  const org = ctx.organization.id;
  const existing = new Set((await ctx.store.listUserTags(org)).map((t) => t.id));
  ids.forEach((id, i) => {
    if (!existing.has(id)) throw notFound(`${field}.${i}`, 'user tag');
  });
  // The users that carry any of the tags, read before the write (the result is recorded with it).
  const doomed = new Set(ids);
  const userIds: string[] = [];
  for (const u of await ctx.store.listUsers(org))
    if ((await ctx.store.listUserTagIds(u.id)).some((t) => doomed.has(t))) userIds.push(u.id);
  return {
    result: { userTagIds: ids, userIds },
    write: async (tx) => {
      for (const [i, id] of ids.entries()) {
        if ((await tx.deleteUserTag(org, id)) === null) throw notFound(`${field}.${i}`, 'user tag');
      }
    },
  };
};

const createInvitations = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const field = `${PREFIX}.invitations`;
  const org = ctx.organization.id;
  const records = nonEmpty(reqArray(p, 'invitations', PREFIX), field, 'invitation').map(
    (v, i): InvitationRecord => {
      const f = `${field}.${i}`;
      const o = asObject(v, f);
      const senderUserId = reqUuid(o, 'senderUserId', f).toLowerCase();
      return {
        id: randomUUID(),
        organizationId: org,
        receiverUserName: reqString(o, 'receiverUserName', f),
        receiverEmail: checkEmail(reqString(o, 'receiverUserEmail', f), `${f}.receiverUserEmail`),
        receiverUserTags: uuidList(reqArray(o, 'receiverUserTags', f), `${f}.receiverUserTags`, 'user tag'),
        accessType: reqEnum(o, 'accessType', f, INVITATION_ACCESS_TYPES),
        senderUserId,
        status: 'INVITATION_STATUS_CREATED',
        createdAtMs: ctx.nowMs,
        updatedAtMs: ctx.nowMs,
      };
    },
  );
  return {
    result: { invitationIds: records.map((r) => r.id) },
    write: async (tx) => {
      for (const [i, r] of records.entries()) {
        await userInTx(tx, org, r.senderUserId, `${field}.${i}.senderUserId`);
        await checkTags(tx, org, r.receiverUserTags, `${field}.${i}.receiverUserTags`);
        await tx.insertInvitation(r);
      }
    },
  };
};

const deleteInvitation = async (ctx: ActivityContext, p: Params): Promise<ActivityOutcome> => {
  const id = reqUuid(p, 'invitationId', PREFIX).toLowerCase();
  const org = ctx.organization.id;
  if ((await ctx.store.getInvitation(org, id)) === undefined)
    throw notFound(`${PREFIX}.invitationId`, 'invitation');
  return {
    result: { invitationId: id },
    write: async (tx) => {
      if (!(await tx.deleteInvitation(org, id))) throw notFound(`${PREFIX}.invitationId`, 'invitation');
    },
  };
};

export const USER_ACTIVITIES: readonly ActivityDefinition[] = [
  ...([4, 3, 2] as const).map((v): ActivityDefinition => ({
    type: `ACTIVITY_TYPE_CREATE_USERS_V${v}`,
    path: 'create_users',
    intentKey: `createUsersIntentV${v}`,
    resultKey: 'createUsersResult',
    run: createUsers(v),
  })),
  {
    type: 'ACTIVITY_TYPE_UPDATE_USER',
    path: 'update_user',
    intentKey: 'updateUserIntent',
    resultKey: 'updateUserResult',
    run: updateUser,
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL',
    path: 'update_user_email',
    intentKey: 'updateUserEmailIntent',
    resultKey: 'updateUserEmailResult',
    run: updateUserEmail,
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_USER_NAME',
    path: 'update_user_name',
    intentKey: 'updateUserNameIntent',
    resultKey: 'updateUserNameResult',
    run: updateUserName,
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER',
    path: 'update_user_phone_number',
    intentKey: 'updateUserPhoneNumberIntent',
    resultKey: 'updateUserPhoneNumberResult',
    run: updateUserPhoneNumber,
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_USER_TAG',
    path: 'update_user_tag',
    intentKey: 'updateUserTagIntent',
    resultKey: 'updateUserTagResult',
    run: updateUserTag,
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_USER_TAGS',
    path: 'delete_user_tags',
    intentKey: 'deleteUserTagsIntent',
    resultKey: 'deleteUserTagsResult',
    run: deleteUserTags,
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_USERS',
    path: 'delete_users',
    intentKey: 'deleteUsersIntent',
    resultKey: 'deleteUsersResult',
    run: deleteUsers,
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_API_KEYS_V2',
    path: 'create_api_keys',
    intentKey: 'createApiKeysIntentV2',
    resultKey: 'createApiKeysResult',
    run: createApiKeys(true),
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_API_KEYS',
    path: 'create_api_keys',
    intentKey: 'createApiKeysIntent',
    resultKey: 'createApiKeysResult',
    run: createApiKeys(false),
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_API_KEYS',
    path: 'delete_api_keys',
    intentKey: 'deleteApiKeysIntent',
    resultKey: 'deleteApiKeysResult',
    run: deleteApiKeys,
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_USER_TAG',
    path: 'create_user_tag',
    intentKey: 'createUserTagIntent',
    resultKey: 'createUserTagResult',
    run: createUserTag,
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_INVITATIONS',
    path: 'create_invitations',
    intentKey: 'createInvitationsIntent',
    resultKey: 'createInvitationsResult',
    run: createInvitations,
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_INVITATION',
    path: 'delete_invitation',
    intentKey: 'deleteInvitationIntent',
    resultKey: 'deleteInvitationResult',
    run: deleteInvitation,
  },
];
