/**
 * Users, API keys, authenticators, user tags and invitations through @turnkey/http's TurnkeyClient
 * (unmodified) against the real embedded service over HTTP on SQLite; refusals through raw stamped
 * POSTs so the HTTP status and every byte are under control.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { p256 } from '@noble/curves/nist.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import {
  KeyVault,
  SERVICE_SIGNER_KEY_ID,
  loadOrCreateMasterKey,
  signWithServiceKey,
} from '../src/service/keys/index.js';

let h: EmbeddedHarness;
let org: string;
let root: TurnkeyClient;

type Json = Record<string, unknown>;

function newKey(): { apiPublicKey: string; apiPrivateKey: string } {
  const secret = p256.utils.randomSecretKey();
  return {
    apiPublicKey: Buffer.from(p256.getPublicKey(secret, true)).toString('hex'),
    apiPrivateKey: Buffer.from(secret).toString('hex'),
  };
}

const clientFor = (key: { apiPublicKey: string; apiPrivateKey: string }) =>
  new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(key));

const ts = () => String(Date.now());

const raw = (path: string, type: string, parameters: unknown) =>
  post(h.baseUrl, h.service.credentials, `/public/v1/submit/${path}`, envelope(type, org, parameters));

const query = async (name: string, body: Json) =>
  (await post(h.baseUrl, h.service.credentials, `/public/v1/query/${name}`, JSON.stringify(body))).json;

const activityCount = async () =>
  (
    (await query('list_activities', { organizationId: org, paginationOptions: { limit: '100' } }))
      .activities as unknown[]
  ).length;

/** The response checks every activity shares (issue 4 acceptance). */
function expectCompleted(
  activity: Json,
  type: string,
  intentKey: string,
  parameters: unknown,
  resultKey: string,
): Json {
  expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  expect(activity.type).toBe(type);
  expect(activity.organizationId).toBe(org);
  expect(activity.intent).toEqual({ [intentKey]: parameters });
  expect(String(activity.fingerprint)).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect(activity.canApprove).toBe(false);
  expect(activity.canReject).toBe(false);
  expect(activity.votes).toHaveLength(1);
  expect((activity.votes as Json[])[0]?.selection).toBe('VOTE_SELECTION_APPROVED');
  expect((activity.createdAt as Json).seconds).toMatch(/^[0-9]+$/);
  expect((activity.updatedAt as Json).seconds).toMatch(/^[0-9]+$/);
  const result = activity.result as Json;
  const nested = result.activity as Json;
  expect(nested.status).toBe('ACTIVITY_STATUS_COMPLETED');
  expect(nested.type).toBe(type);
  expect(nested.intent).toEqual({ [intentKey]: parameters });
  expect(nested.result).toEqual({ [resultKey]: result[resultKey] });
  expect(nested.fingerprint).toBe(activity.fingerprint);
  return result[resultKey] as Json;
}

/** A refusal: status, gRPC code, the field named, and no activity written. */
async function expectRefused(
  call: () => Promise<{ status: number; json: Json }>,
  status: number,
  code: number,
  field: string,
): Promise<Json> {
  const before = await activityCount();
  const res = await call();
  expect(res.status, JSON.stringify(res.json)).toBe(status);
  expect(res.json.code).toBe(code);
  expect(String(res.json.message)).toContain(field);
  expect(await activityCount()).toBe(before);
  return res.json;
}

async function getUser(userId: string): Promise<Json> {
  return (await root.getUser({ organizationId: org, userId })).user as unknown as Json;
}

async function createUser(name: string, extra: Json = {}): Promise<string> {
  const parameters = {
    users: [{ userName: name, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [], ...extra }],
  };
  const res = await root.createUsers({
    type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
    timestampMs: ts(),
    organizationId: org,
    parameters,
  } as never);
  return ((res.activity.result as Json).createUsersResult as { userIds: string[] }).userIds[0] as string;
}

// ---- WebAuthn fixtures: a minimal CBOR encoder and a software authenticator ----

function cborHead(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
}
function cbor(v: unknown): Buffer {
  if (typeof v === 'number') return v >= 0 ? cborHead(0, v) : cborHead(1, -1 - v);
  if (typeof v === 'string') return Buffer.concat([cborHead(3, Buffer.byteLength(v)), Buffer.from(v)]);
  if (v instanceof Uint8Array) return Buffer.concat([cborHead(2, v.length), Buffer.from(v)]);
  if (v instanceof Map)
    return Buffer.concat([cborHead(5, v.size), ...[...v].flatMap(([k, x]) => [cbor(k), cbor(x)])]);
  throw new Error('unsupported');
}

function softAuthenticator() {
  const secret = p256.utils.randomSecretKey();
  const pub = p256.getPublicKey(secret, false);
  const credId = randomBytes(16);
  const challenge = randomBytes(32).toString('base64url');
  const rpIdHash = createHash('sha256').update('localhost').digest();
  const cose = new Map<number, unknown>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, pub.slice(1, 33)],
    [-3, pub.slice(33)],
  ]);
  const authData = Buffer.concat([
    rpIdHash,
    Buffer.from([0x41, 0, 0, 0, 0]),
    Buffer.alloc(16),
    Buffer.from([0, credId.length]),
    credId,
    cbor(cose),
  ]);
  const attestationObject = cbor(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', authData],
    ]),
  );
  const clientDataJson = Buffer.from(
    JSON.stringify({ type: 'webauthn.create', challenge, origin: 'http://localhost' }),
  );
  return {
    secret,
    credentialId: credId.toString('base64url'),
    compressed: Buffer.from(p256.getPublicKey(secret, true)).toString('hex'),
    params: {
      authenticatorName: 'yubikey',
      challenge,
      attestation: {
        credentialId: credId.toString('base64url'),
        clientDataJson: clientDataJson.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['AUTHENTICATOR_TRANSPORT_USB'],
      },
    },
  };
}

/** A passkey assertion over `body` (X-Stamp-Webauthn), as @turnkey/webauthn-stamper builds it. */
function webauthnStamp(a: ReturnType<typeof softAuthenticator>, body: string): string {
  const challenge = Buffer.from(createHash('sha256').update(body).digest('hex')).toString('base64url');
  const clientData = Buffer.from(
    JSON.stringify({ type: 'webauthn.get', challenge, origin: 'http://localhost' }),
  );
  const authData = Buffer.concat([
    createHash('sha256').update('localhost').digest(),
    Buffer.from([0x01, 0, 0, 0, 1]),
  ]);
  const signed = Buffer.concat([authData, createHash('sha256').update(clientData).digest()]);
  const sig = p256.sign(signed, a.secret, { prehash: true, format: 'der' });
  return JSON.stringify({
    authenticatorData: authData.toString('base64url'),
    clientDataJson: clientData.toString('base64url'),
    credentialId: a.credentialId,
    signature: Buffer.from(sig).toString('base64url'),
  });
}

// ---- verification tokens signed by the service key (as the OTP flow will issue them) ----

async function verificationToken(claims: Json, signer?: Uint8Array): Promise<string> {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc({ alg: 'ES256', typ: 'JWT' })}.${enc(claims)}`;
  let compact: Uint8Array;
  if (signer !== undefined) compact = p256.sign(Buffer.from(input), signer, { prehash: true });
  else {
    const vault = new KeyVault(loadOrCreateMasterKey({ dataDir: h.dataDir }));
    const key = await h.service.store.getServiceKey(SERVICE_SIGNER_KEY_ID);
    if (key === undefined) throw new Error('no service key');
    const der = signWithServiceKey({ vault, key, message: Buffer.from(input) });
    compact = p256.Signature.fromBytes(der, 'der').toBytes('compact');
  }
  return `${input}.${Buffer.from(compact).toString('base64url')}`;
}

const tokenClaims = (contact: string, expMs = Date.now() + 600_000): Json => ({
  id: '0f7e0c0e-0000-4000-8000-000000000001',
  verification_type: 'OTP_TYPE_EMAIL',
  contact,
  organization_id: org,
  public_key: '',
  exp: String(expMs),
});

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  root = clientFor(h.service.credentials);
});

afterAll(async () => {
  await h.close();
});

describe('create_users', () => {
  it('creates users with API keys, a passkey, an OAuth provider and tags (V4, what sdk-server sends)', async () => {
    const tag = await root.createUserTag({
      type: 'ACTIVITY_TYPE_CREATE_USER_TAG',
      timestampMs: ts(),
      organizationId: org,
      parameters: { userTagName: 'approvers', userIds: [] },
    });
    const tagId = ((tag.activity.result as Json).createUserTagResult as Json).userTagId as string;
    const key = newKey();
    const auth = softAuthenticator();
    const parameters = {
      users: [
        {
          userName: 'alice',
          userEmail: 'alice@example.com',
          userPhoneNumber: '+13214567890',
          apiKeys: [
            { apiKeyName: 'ci', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' },
            {
              apiKeyName: 'short',
              publicKey: newKey().apiPublicKey,
              curveType: 'API_KEY_CURVE_P256',
              expirationSeconds: '3600',
            },
          ],
          authenticators: [auth.params],
          oauthProviders: [
            {
              providerName: 'google',
              oidcClaims: { iss: 'https://accounts.google.com', sub: '42', aud: 'app' },
            },
          ],
          userTags: [tagId],
        },
      ],
    };
    const res = await root.createUsers({
      type: 'ACTIVITY_TYPE_CREATE_USERS_V4',
      timestampMs: ts(),
      organizationId: org,
      parameters,
    } as never);
    const result = expectCompleted(
      res.activity as unknown as Json,
      'ACTIVITY_TYPE_CREATE_USERS_V4',
      'createUsersIntentV4',
      parameters,
      'createUsersResult',
    );
    const [userId] = result.userIds as string[];
    const user = await getUser(userId as string);
    expect(user).toMatchObject({
      userId,
      userName: 'alice',
      userEmail: 'alice@example.com',
      userPhoneNumber: '+13214567890',
      userTags: [tagId],
      oauthProviders: [
        { providerName: 'google', issuer: 'https://accounts.google.com', subject: '42', audience: 'app' },
      ],
      authenticators: [
        {
          authenticatorName: 'yubikey',
          credentialId: auth.credentialId,
          credential: { publicKey: auth.compressed },
        },
      ],
    });
    // get_authenticator reads the same record by its id.
    const [stored] = user.authenticators as Json[];
    const one = await query('get_authenticator', {
      organizationId: org,
      authenticatorId: stored!.authenticatorId,
    });
    expect(one.authenticator).toEqual(stored);
    const apiKeys = user.apiKeys as Json[];
    // Keys created in one activity share a timestamp, so their order is not asserted.
    expect(apiKeys.map((k) => k.apiKeyName).sort()).toEqual(['ci', 'short']);
    expect(apiKeys.find((k) => k.apiKeyName === 'short')?.expirationSeconds).toBe('3600');
    const users = (await root.getUsers({ organizationId: org })).users;
    expect(users.map((u: { userId: string }) => u.userId)).toContain(userId);
    // The new API key stamps as alice.
    const who = await clientFor(key).getWhoami({ organizationId: org });
    expect(who.userId).toBe(userId);
    // The passkey stamps as alice too (X-Stamp-Webauthn with the stored COSE-derived key).
    const body = JSON.stringify({ organizationId: org });
    const r = await fetch(`${h.baseUrl}/public/v1/query/whoami`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-stamp-webauthn': webauthnStamp(auth, body) },
      body,
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as Json).userId).toBe(userId);
  });

  it('accepts V3 (oidcToken providers) and V2 (API keys without curveType) on the same path', async () => {
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const oidcToken = `${enc({ alg: 'RS256' })}.${enc({ iss: 'https://issuer', sub: 's-1', aud: 'a-1' })}.c2ln`;
    const v3 = {
      users: [
        {
          userName: 'v3',
          apiKeys: [],
          authenticators: [],
          oauthProviders: [{ providerName: 'x', oidcToken }],
          userTags: [],
        },
      ],
    };
    const r3 = await root.createUsers({
      type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
      timestampMs: ts(),
      organizationId: org,
      parameters: v3,
    } as never);
    const id3 = (
      expectCompleted(
        r3.activity as unknown as Json,
        'ACTIVITY_TYPE_CREATE_USERS_V3',
        'createUsersIntentV3',
        v3,
        'createUsersResult',
      ).userIds as string[]
    )[0];
    expect((await getUser(id3 as string)).oauthProviders).toMatchObject([
      { issuer: 'https://issuer', subject: 's-1', audience: 'a-1' },
    ]);
    const key = newKey();
    const v2 = {
      users: [
        {
          userName: 'v2',
          apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey }],
          authenticators: [],
          userTags: [],
        },
      ],
    };
    const r2 = await raw('create_users', 'ACTIVITY_TYPE_CREATE_USERS_V2', v2);
    expect(r2.status).toBe(200);
    const id2 = (
      expectCompleted(
        r2.json.activity as Json,
        'ACTIVITY_TYPE_CREATE_USERS_V2',
        'createUsersIntentV2',
        v2,
        'createUsersResult',
      ).userIds as string[]
    )[0];
    expect((await clientFor(key).getWhoami({ organizationId: org })).userId).toBe(id2);
  });

  const user = (extra: Json) => ({
    users: [{ userName: 'bad', apiKeys: [], authenticators: [], oauthProviders: [], userTags: [], ...extra }],
  });
  const V4 = 'ACTIVITY_TYPE_CREATE_USERS_V4';
  it('refuses a missing userName', () =>
    expectRefused(
      () => raw('create_users', V4, user({ userName: undefined })),
      400,
      3,
      'parameters.users.0.userName',
    ));
  it('refuses an empty users list', () =>
    expectRefused(() => raw('create_users', V4, { users: [] }), 400, 3, 'parameters.users'));
  it('refuses apiKeys that is not an array', () =>
    expectRefused(
      () => raw('create_users', V4, user({ apiKeys: 'x' })),
      400,
      3,
      'parameters.users.0.apiKeys',
    ));
  it('refuses a phone number outside E.164', () =>
    expectRefused(
      () => raw('create_users', V4, user({ userPhoneNumber: '555-1234' })),
      400,
      3,
      'parameters.users.0.userPhoneNumber',
    ));
  it('refuses a public key that is not a P-256 point', () =>
    expectRefused(
      () =>
        raw(
          'create_users',
          V4,
          user({
            apiKeys: [
              { apiKeyName: 'k', publicKey: `02${'ff'.repeat(32)}`, curveType: 'API_KEY_CURVE_P256' },
            ],
          }),
        ),
      400,
      3,
      'parameters.users.0.apiKeys.0.publicKey',
    ));
  it('refuses an unknown curveType', () =>
    expectRefused(
      () =>
        raw(
          'create_users',
          V4,
          user({
            apiKeys: [{ apiKeyName: 'k', publicKey: newKey().apiPublicKey, curveType: 'API_KEY_CURVE_RSA' }],
          }),
        ),
      400,
      3,
      'parameters.users.0.apiKeys.0.curveType',
    ));
  it('refuses the same public key twice and a key the organization already has', async () => {
    const k = newKey().apiPublicKey;
    const spec = { apiKeyName: 'k', publicKey: k, curveType: 'API_KEY_CURVE_P256' };
    await expectRefused(
      () => raw('create_users', V4, user({ apiKeys: [spec, spec] })),
      400,
      3,
      'parameters.users.0.apiKeys.1.publicKey',
    );
    const rootKey = { ...spec, publicKey: h.service.credentials.apiPublicKey };
    await expectRefused(
      () => raw('create_users', V4, user({ apiKeys: [rootKey] })),
      400,
      3,
      'parameters.users.0.apiKeys.0.publicKey',
    );
  });
  it('refuses an unknown user tag', () =>
    expectRefused(
      () => raw('create_users', V4, user({ userTags: ['0f7e0c0e-0000-4000-8000-00000000dead'] })),
      404,
      5,
      'parameters.users.0.userTags.0',
    ));
  it('refuses an attestation whose challenge does not match', () => {
    const a = softAuthenticator();
    return expectRefused(
      () => raw('create_users', V4, user({ authenticators: [{ ...a.params, challenge: 'other' }] })),
      400,
      3,
      'parameters.users.0.authenticators.0.challenge',
    );
  });
  it('refuses an attestation object that is not CBOR', () => {
    const a = softAuthenticator();
    const attestation = { ...a.params.attestation, attestationObject: 'AAAA' };
    return expectRefused(
      () => raw('create_users', V4, user({ authenticators: [{ ...a.params, attestation }] })),
      400,
      3,
      'parameters.users.0.authenticators.0.attestation.attestationObject',
    );
  });
});

describe('update_user and update_user_email', () => {
  it('updates name, email, phone number and tags', async () => {
    const id = await createUser('bob');
    const tag = await root.createUserTag({
      type: 'ACTIVITY_TYPE_CREATE_USER_TAG',
      timestampMs: ts(),
      organizationId: org,
      parameters: { userTagName: 'ops', userIds: [] },
    });
    const tagId = ((tag.activity.result as Json).createUserTagResult as Json).userTagId as string;
    const parameters = {
      userId: id,
      userName: 'robert',
      userEmail: 'bob@example.com',
      userTagIds: [tagId],
      userPhoneNumber: '+4915112345678',
    };
    const res = await root.updateUser({
      type: 'ACTIVITY_TYPE_UPDATE_USER',
      timestampMs: ts(),
      organizationId: org,
      parameters,
    });
    expect(
      expectCompleted(
        res.activity as unknown as Json,
        'ACTIVITY_TYPE_UPDATE_USER',
        'updateUserIntent',
        parameters,
        'updateUserResult',
      ),
    ).toEqual({ userId: id });
    expect(await getUser(id)).toMatchObject({
      userName: 'robert',
      userEmail: 'bob@example.com',
      userPhoneNumber: '+4915112345678',
      userTags: [tagId],
    });
    // An empty userTagIds list keeps the tags.
    await root.updateUser({
      type: 'ACTIVITY_TYPE_UPDATE_USER',
      timestampMs: ts(),
      organizationId: org,
      parameters: { userId: id, userTagIds: [] },
    });
    expect((await getUser(id)).userTags).toEqual([tagId]);
  });

  it('sets an email with a verification token, and removes it with an empty string', async () => {
    const id = await createUser('carol');
    const token = await verificationToken(tokenClaims('carol@example.com'));
    const parameters = { userId: id, userEmail: 'carol@example.com', verificationToken: token };
    const res = await root.updateUserEmail({
      type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL',
      timestampMs: ts(),
      organizationId: org,
      parameters,
    });
    expect(
      expectCompleted(
        res.activity as unknown as Json,
        'ACTIVITY_TYPE_UPDATE_USER_EMAIL',
        'updateUserEmailIntent',
        parameters,
        'updateUserEmailResult',
      ),
    ).toEqual({ userId: id });
    expect((await getUser(id)).userEmail).toBe('carol@example.com');
    await root.updateUserEmail({
      type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL',
      timestampMs: ts(),
      organizationId: org,
      parameters: { userId: id, userEmail: '' },
    });
    expect((await getUser(id)).userEmail).toBeUndefined();
  });

  it('refuses tokens that are forged, expired or for another contact, changing nothing', async () => {
    const id = await createUser('dave', { userEmail: 'dave@example.com' });
    const call = (token: string) => () =>
      raw('update_user_email', 'ACTIVITY_TYPE_UPDATE_USER_EMAIL', {
        userId: id,
        userEmail: 'new@example.com',
        verificationToken: token,
      });
    const field = 'parameters.verificationToken';
    await expectRefused(
      call(await verificationToken(tokenClaims('new@example.com'), p256.utils.randomSecretKey())),
      400,
      3,
      field,
    );
    await expectRefused(
      call(await verificationToken(tokenClaims('new@example.com', Date.now() - 1))),
      400,
      3,
      field,
    );
    await expectRefused(call(await verificationToken(tokenClaims('other@example.com'))), 400, 3, field);
    await expectRefused(call('not-a-jwt'), 400, 3, field);
    expect((await getUser(id)).userEmail).toBe('dave@example.com');
  });

  it('refuses unknown users, bad emails and unknown tags', async () => {
    const id = await createUser('erin');
    const U = 'ACTIVITY_TYPE_UPDATE_USER';
    await expectRefused(
      () => raw('update_user', U, { userId: '0f7e0c0e-0000-4000-8000-00000000beef' }),
      404,
      5,
      'parameters.userId',
    );
    await expectRefused(() => raw('update_user', U, {}), 400, 3, 'parameters.userId');
    await expectRefused(
      () => raw('update_user', U, { userId: id, userEmail: 'nope' }),
      400,
      3,
      'parameters.userEmail',
    );
    await expectRefused(
      () => raw('update_user', U, { userId: id, userName: 7 }),
      400,
      3,
      'parameters.userName',
    );
    await expectRefused(
      () => raw('update_user', U, { userId: id, userTagIds: ['0f7e0c0e-0000-4000-8000-00000000dead'] }),
      404,
      5,
      'parameters.userTagIds.0',
    );
    await expectRefused(
      () => raw('update_user_email', 'ACTIVITY_TYPE_UPDATE_USER_EMAIL', { userId: id }),
      400,
      3,
      'parameters.userEmail',
    );
    expect((await getUser(id)).userName).toBe('erin');
  });
});

describe('API keys', () => {
  it('creates keys that stamp, deletes them so they no longer do, and expires short-lived ones', async () => {
    const id = await createUser('frank');
    const long = newKey();
    const short = newKey();
    const parameters = {
      userId: id,
      apiKeys: [
        { apiKeyName: 'long', publicKey: long.apiPublicKey, curveType: 'API_KEY_CURVE_P256' as const },
        {
          apiKeyName: 'short',
          publicKey: short.apiPublicKey,
          curveType: 'API_KEY_CURVE_P256' as const,
          expirationSeconds: '1',
        },
      ],
    };
    const res = await root.createApiKeys({
      type: 'ACTIVITY_TYPE_CREATE_API_KEYS_V2',
      timestampMs: ts(),
      organizationId: org,
      parameters,
    });
    const { apiKeyIds } = expectCompleted(
      res.activity as unknown as Json,
      'ACTIVITY_TYPE_CREATE_API_KEYS_V2',
      'createApiKeysIntentV2',
      parameters,
      'createApiKeysResult',
    ) as { apiKeyIds: string[] };
    expect(apiKeyIds).toHaveLength(2);
    const listed = (await root.getApiKeys({ organizationId: org, userId: id })).apiKeys;
    expect(listed.map((k) => k.apiKeyId).sort()).toEqual([...apiKeyIds].sort());
    const one = (await root.getApiKey({ organizationId: org, apiKeyId: apiKeyIds[0] as string })).apiKey;
    expect(one).toMatchObject({
      apiKeyName: 'long',
      credential: { publicKey: long.apiPublicKey, type: 'CREDENTIAL_TYPE_API_KEY_P256' },
    });
    expect((await clientFor(long).getWhoami({ organizationId: org })).userId).toBe(id);
    await new Promise((r) => setTimeout(r, 1100));
    await expect(clientFor(short).getWhoami({ organizationId: org })).rejects.toThrow(/expired api key/);

    const del = { userId: id, apiKeyIds: [apiKeyIds[0] as string] };
    const d = await root.deleteApiKeys({
      type: 'ACTIVITY_TYPE_DELETE_API_KEYS',
      timestampMs: ts(),
      organizationId: org,
      parameters: del,
    });
    expect(
      expectCompleted(
        d.activity as unknown as Json,
        'ACTIVITY_TYPE_DELETE_API_KEYS',
        'deleteApiKeysIntent',
        del,
        'deleteApiKeysResult',
      ),
    ).toEqual({ apiKeyIds: del.apiKeyIds });
    await expect(clientFor(long).getWhoami({ organizationId: org })).rejects.toThrow(
      /could not find public key/,
    );
    expect(
      (await root.getApiKeys({ organizationId: org, userId: id })).apiKeys.map((k) => k.apiKeyName),
    ).toEqual(['short']);
  });

  it('refuses the 11th long-lived key of a user, keeping the ten', async () => {
    const id = await createUser('grace');
    const spec = () => ({
      apiKeyName: 'k',
      publicKey: newKey().apiPublicKey,
      curveType: 'API_KEY_CURVE_P256',
    });
    await raw('create_api_keys', 'ACTIVITY_TYPE_CREATE_API_KEYS_V2', {
      userId: id,
      apiKeys: Array.from({ length: 10 }, spec),
    });
    const body = await expectRefused(
      () => raw('create_api_keys', 'ACTIVITY_TYPE_CREATE_API_KEYS_V2', { userId: id, apiKeys: [spec()] }),
      429,
      8,
      'parameters.apiKeys',
    );
    expect(String(body.message)).toContain('maximum long-lived api keys');
    expect((await root.getApiKeys({ organizationId: org, userId: id })).apiKeys).toHaveLength(10);
  });

  it('refuses bad create_api_keys and delete_api_keys input', async () => {
    const id = await createUser('heidi');
    const C = 'ACTIVITY_TYPE_CREATE_API_KEYS_V2';
    await expectRefused(() => raw('create_api_keys', C, { apiKeys: [] }), 400, 3, 'parameters.userId');
    await expectRefused(
      () => raw('create_api_keys', C, { userId: id, apiKeys: [] }),
      400,
      3,
      'parameters.apiKeys',
    );
    await expectRefused(
      () =>
        raw('create_api_keys', C, {
          userId: id,
          apiKeys: [{ apiKeyName: 'k', publicKey: 'zz', curveType: 'API_KEY_CURVE_P256' }],
        }),
      400,
      3,
      'parameters.apiKeys.0.publicKey',
    );
    await expectRefused(
      () =>
        raw('create_api_keys', C, {
          userId: id,
          apiKeys: [
            {
              apiKeyName: 'k',
              publicKey: newKey().apiPublicKey,
              curveType: 'API_KEY_CURVE_P256',
              expirationSeconds: '-5',
            },
          ],
        }),
      400,
      3,
      'parameters.apiKeys.0.expirationSeconds',
    );
    const D = 'ACTIVITY_TYPE_DELETE_API_KEYS';
    const [rootKey] = (await root.getApiKeys({ organizationId: org, userId: h.service.credentials.userId }))
      .apiKeys;
    // Another user's key is not this user's.
    await expectRefused(
      () => raw('delete_api_keys', D, { userId: id, apiKeyIds: [rootKey?.apiKeyId] }),
      404,
      5,
      'parameters.apiKeyIds.0',
    );
    await expectRefused(
      () => raw('delete_api_keys', D, { userId: id, apiKeyIds: ['x'] }),
      400,
      3,
      'parameters.apiKeyIds.0',
    );
    await expectRefused(
      () => raw('delete_api_keys', D, { userId: id, apiKeyIds: [] }),
      400,
      3,
      'parameters.apiKeyIds',
    );
  });
});

describe('delete_users', () => {
  it('deletes users with their API keys', async () => {
    const key = newKey();
    const id = await createUser('ivan', {
      apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }],
    });
    const parameters = { userIds: [id] };
    const res = await root.deleteUsers({
      type: 'ACTIVITY_TYPE_DELETE_USERS',
      timestampMs: ts(),
      organizationId: org,
      parameters,
    });
    expect(
      expectCompleted(
        res.activity as unknown as Json,
        'ACTIVITY_TYPE_DELETE_USERS',
        'deleteUsersIntent',
        parameters,
        'deleteUsersResult',
      ),
    ).toEqual({ userIds: [id] });
    expect(
      (await root.getUsers({ organizationId: org })).users.map((u: { userId: string }) => u.userId),
    ).not.toContain(id);
    const got = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/get_user',
      JSON.stringify({ organizationId: org, userId: id }),
    );
    expect(got.status).toBe(404);
    await expect(clientFor(key).getWhoami({ organizationId: org })).rejects.toThrow(
      /could not find public key/,
    );
  });

  it('refuses the root user, unknown users and duplicates, deleting none of a batch', async () => {
    const id = await createUser('judy');
    const D = 'ACTIVITY_TYPE_DELETE_USERS';
    await expectRefused(
      () => raw('delete_users', D, { userIds: [id, h.service.credentials.userId] }),
      400,
      3,
      'parameters.userIds.1',
    );
    await expectRefused(
      () => raw('delete_users', D, { userIds: [id, '0f7e0c0e-0000-4000-8000-00000000beef'] }),
      404,
      5,
      'parameters.userIds.1',
    );
    await expectRefused(() => raw('delete_users', D, { userIds: [id, id] }), 400, 3, 'parameters.userIds.1');
    await expectRefused(() => raw('delete_users', D, {}), 400, 3, 'parameters.userIds');
    expect((await getUser(id)).userName).toBe('judy');
  });
});

describe('user tags and invitations', () => {
  it('creates a tag over users and lists it', async () => {
    const a = await createUser('kim');
    const parameters = { userTagName: 'signers', userIds: [a] };
    const res = await root.createUserTag({
      type: 'ACTIVITY_TYPE_CREATE_USER_TAG',
      timestampMs: ts(),
      organizationId: org,
      parameters,
    });
    const result = expectCompleted(
      res.activity as unknown as Json,
      'ACTIVITY_TYPE_CREATE_USER_TAG',
      'createUserTagIntent',
      parameters,
      'createUserTagResult',
    );
    expect(result.userIds).toEqual([a]);
    const tags = (await root.listUserTags({ organizationId: org })).userTags;
    expect(tags).toContainEqual(
      expect.objectContaining({ tagId: result.userTagId, tagName: 'signers', tagType: 'TAG_TYPE_USER' }),
    );
    expect((await getUser(a)).userTags).toEqual([result.userTagId]);
    const T = 'ACTIVITY_TYPE_CREATE_USER_TAG';
    await expectRefused(
      () => raw('create_user_tag', T, { userTagName: 'signers', userIds: [] }),
      400,
      3,
      'parameters.userTagName',
    );
    await expectRefused(
      () =>
        raw('create_user_tag', T, { userTagName: 'x', userIds: ['0f7e0c0e-0000-4000-8000-00000000beef'] }),
      404,
      5,
      'parameters.userIds.0',
    );
    await expectRefused(() => raw('create_user_tag', T, { userIds: [] }), 400, 3, 'parameters.userTagName');
  });

  it('creates and deletes invitations', async () => {
    const parameters = {
      invitations: [
        {
          receiverUserName: 'mallory',
          receiverUserEmail: 'mallory@example.com',
          receiverUserTags: [],
          accessType: 'ACCESS_TYPE_API' as const,
          senderUserId: h.service.credentials.userId,
        },
      ],
    };
    const res = await root.createInvitations({
      type: 'ACTIVITY_TYPE_CREATE_INVITATIONS',
      timestampMs: ts(),
      organizationId: org,
      parameters,
    });
    const { invitationIds } = expectCompleted(
      res.activity as unknown as Json,
      'ACTIVITY_TYPE_CREATE_INVITATIONS',
      'createInvitationsIntent',
      parameters,
      'createInvitationsResult',
    ) as { invitationIds: string[] };
    expect(invitationIds).toHaveLength(1);
    const I = 'ACTIVITY_TYPE_CREATE_INVITATIONS';
    const inv = parameters.invitations[0] as Json;
    await expectRefused(
      () => raw('create_invitations', I, { invitations: [{ ...inv, accessType: 'ACCESS_TYPE_X' }] }),
      400,
      3,
      'parameters.invitations.0.accessType',
    );
    await expectRefused(
      () => raw('create_invitations', I, { invitations: [{ ...inv, receiverUserEmail: 'x' }] }),
      400,
      3,
      'parameters.invitations.0.receiverUserEmail',
    );
    await expectRefused(
      () =>
        raw('create_invitations', I, {
          invitations: [{ ...inv, senderUserId: '0f7e0c0e-0000-4000-8000-00000000beef' }],
        }),
      404,
      5,
      'parameters.invitations.0.senderUserId',
    );

    const del = { invitationId: invitationIds[0] as string };
    const d = await root.deleteInvitation({
      type: 'ACTIVITY_TYPE_DELETE_INVITATION',
      timestampMs: ts(),
      organizationId: org,
      parameters: del,
    });
    expect(
      expectCompleted(
        d.activity as unknown as Json,
        'ACTIVITY_TYPE_DELETE_INVITATION',
        'deleteInvitationIntent',
        del,
        'deleteInvitationResult',
      ),
    ).toEqual(del);
    // Deleted: a second delete finds nothing.
    await expectRefused(
      () => raw('delete_invitation', 'ACTIVITY_TYPE_DELETE_INVITATION', del),
      404,
      5,
      'parameters.invitationId',
    );
    await expectRefused(
      () => raw('delete_invitation', 'ACTIVITY_TYPE_DELETE_INVITATION', {}),
      400,
      3,
      'parameters.invitationId',
    );
  });
});
