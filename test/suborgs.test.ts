/**
 * Sub-organizations (create_sub_organization V8, list_suborgs) and sessions (stamp_login) against
 * the real service over HTTP on SQLite, through Turnkey's unmodified clients: @turnkey/sdk-server's
 * apiClient() and @turnkey/http's TurnkeyClient; sessions are checked by @turnkey/crypto's
 * verifySessionJwtSignature with our published service key. The handler is built here (as in
 * policies.test.ts) so its clock can be moved past a session's expiry.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { Turnkey } from '@turnkey/sdk-server';
import { verifySessionJwtSignature } from '@turnkey/crypto';
import { p256 } from '@noble/curves/nist.js';
import { openEmbeddedService, type Credentials } from '../src/service/embedded.js';
import { openSqliteStore } from '../src/service/store/sqlite.js';
import type { Store } from '../src/service/store/types.js';
import {
  KeyVault,
  SERVICE_NOTARIZER_KEY_ID,
  SERVICE_SIGNER_KEY_ID,
  loadOrCreateMasterKey,
} from '../src/service/keys/index.js';
import { signVerificationToken } from '../src/service/keys/jwt.js';
import { createApiHandler } from '../src/service/api/handler.js';
import { Metrics } from '../src/service/api/metrics.js';
import { startHttpServer, type HttpListener } from '../src/service/api/http-server.js';
import { bytesToHex, utf8 } from '../src/shared/encoding.js';
import { envelope, post } from './helpers/http.js';
import { newApiKey } from './helpers/api-key.js';

type Keys = { apiPublicKey: string; apiPrivateKey: string };

let dataDir: string;
let store: Store;
let vault: KeyVault;
let http: HttpListener;
let baseUrl: string;
let creds: Credentials;
let parentOrg: string;
let root: TurnkeyClient;
let signerPublicKey: string;
let clockOffsetMs = 0;

const clientFor = (k: Keys) => new TurnkeyClient({ baseUrl }, new ApiKeyStamper(k));
const ts = () => String(Date.now());

async function refusal(p: Promise<unknown>): Promise<TurnkeyRequestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TurnkeyRequestError) return e;
    throw e;
  }
  throw new Error('expected the request to be refused');
}

const ETH_ACCOUNT = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
} as const;

function rootUser(name: string, keys: Keys, extra: Record<string, unknown> = {}) {
  return {
    userName: name,
    apiKeys: [
      { apiKeyName: `${name} key`, publicKey: keys.apiPublicKey, curveType: 'API_KEY_CURVE_P256' as const },
    ],
    authenticators: [],
    oauthProviders: [],
    ...extra,
  };
}

// ---- WebAuthn fixtures (as in users.test.ts): a minimal CBOR encoder and a software authenticator ----

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
  const cose = new Map<number, unknown>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, pub.slice(1, 33)],
    [-3, pub.slice(33)],
  ]);
  const authData = Buffer.concat([
    createHash('sha256').update('localhost').digest(),
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
      authenticatorName: 'passkey',
      challenge,
      attestation: {
        credentialId: credId.toString('base64url'),
        clientDataJson: clientDataJson.toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['AUTHENTICATOR_TRANSPORT_INTERNAL' as const],
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

const subOrgIds = async (filter: Record<string, string> = {}) =>
  (await root.getSubOrgIds({ organizationId: parentOrg, ...filter })).organizationIds;
const parentActivityCount = async () => (await store.listActivities(parentOrg, { limit: 1000 })).length;

/** A raw create_sub_organization by the root key that must be refused, with nothing changed. */
async function expectRefused(
  parameters: unknown,
  status: number,
  field: string,
  keys?: Keys,
  org = parentOrg,
) {
  const beforeSubOrgs = await subOrgIds();
  const beforeActivities = await parentActivityCount();
  const res = await post(
    baseUrl,
    creds,
    '/public/v1/submit/create_sub_organization',
    envelope('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', org, parameters),
    keys === undefined ? {} : { keys },
  );
  expect(res.status).toBe(status);
  expect(String(res.json.message)).toContain(field);
  const violations = (res.json.details as { fieldViolations?: { field: string }[] }[]).flatMap(
    (d) => d.fieldViolations ?? [],
  );
  expect(violations.map((v) => v.field)).toContain(field);
  expect(await subOrgIds()).toEqual(beforeSubOrgs);
  expect(await parentActivityCount()).toBe(beforeActivities);
  return res;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'countersign-suborgs-'));
  const logger = pino({ level: 'silent' });
  const svc = await openEmbeddedService({ dataDir, logger });
  creds = svc.credentials;
  await svc.close();
  const masterKey = loadOrCreateMasterKey({ dataDir });
  vault = new KeyVault(masterKey);
  masterKey.fill(0);
  store = openSqliteStore(join(dataDir, 'countersign.db'));
  const handler = createApiHandler({
    store,
    vault,
    logger,
    metrics: new Metrics(),
    maxRequestAgeMs: 100 * 60 * 60 * 1000,
    maxClockSkewMs: 100 * 60 * 60 * 1000,
    now: () => Date.now() + clockOffsetMs,
  });
  http = await startHttpServer({ host: '127.0.0.1', port: 0, handler, metrics: () => '', logger });
  baseUrl = `http://${http.address}`;
  parentOrg = creds.organizationId;
  root = clientFor({ apiPublicKey: creds.apiPublicKey, apiPrivateKey: creds.apiPrivateKey });
  const signer = await store.getServiceKey(SERVICE_SIGNER_KEY_ID);
  signerPublicKey = String(signer?.publicKey);
});

afterAll(async () => {
  await http.close();
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('create_sub_organization', () => {
  const alice = newApiKey();
  const bob = newApiKey();
  const carol = newApiKey();
  let subOrgId: string;
  let walletId: string;
  let address: string;
  let rootUserIds: string[];
  let soloOrgId: string;

  const parameters = {
    subOrganizationName: 'Customer 1',
    rootUsers: [
      rootUser('alice', alice, {
        userEmail: 'alice@example.com',
        userPhoneNumber: '+14155550100',
        oauthProviders: [
          {
            providerName: 'google',
            oidcClaims: { iss: 'https://accounts.google.com', sub: '1234', aud: 'app' },
          },
        ],
      }),
      rootUser('bob', bob),
    ],
    rootQuorumThreshold: 2,
    wallet: { walletName: 'Customer wallet', accounts: [ETH_ACCOUNT], mnemonicLength: 24 },
    disableEmailRecovery: false,
    disableEmailAuth: false,
    disableSmsAuth: true,
    disableOtpEmailAuth: false,
  };

  it('creates a sub-organization with two root users, a threshold, a wallet and API keys through @turnkey/sdk-server', async () => {
    const sdk = new Turnkey({
      apiBaseUrl: baseUrl,
      apiPublicKey: creds.apiPublicKey,
      apiPrivateKey: creds.apiPrivateKey,
      defaultOrganizationId: parentOrg,
    }).apiClient();
    const res = await sdk.createSubOrganization(parameters);
    expect(res.subOrganizationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.rootUserIds).toHaveLength(2);
    expect(res.wallet?.addresses).toHaveLength(1);
    subOrgId = res.subOrganizationId;
    walletId = String(res.wallet?.walletId);
    address = String(res.wallet?.addresses[0]);
    rootUserIds = res.rootUserIds ?? [];
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);

    // The full record, read back by the parent through @turnkey/http.
    const { activity } = await root.getActivity({ organizationId: parentOrg, activityId: res.activity.id });
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(activity.type).toBe('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8');
    expect(activity.organizationId).toBe(parentOrg);
    expect(activity.intent.createSubOrganizationIntentV8).toEqual(parameters);
    expect(activity.result.createSubOrganizationResultV8).toEqual({
      subOrganizationId: subOrgId,
      wallet: { walletId, addresses: [address] },
      rootUserIds,
    });
    expect(activity.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(activity.votes).toHaveLength(1);
    expect(activity.votes[0]?.selection).toBe('VOTE_SELECTION_APPROVED');
    expect(activity.votes[0]?.userId).toBe(creds.userId);
    expect(activity.canApprove).toBe(false);
    expect(activity.canReject).toBe(false);
    expect(Number(activity.createdAt.seconds)).toBeGreaterThan(0);
    expect(Number(activity.updatedAt.seconds)).toBeGreaterThan(0);
    const nested = (activity.result as Record<string, unknown>).activity as Record<string, unknown>;
    expect(nested.type).toBe('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8');
    expect(nested.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(nested.intent).toEqual({ createSubOrganizationIntentV8: parameters });
    expect(nested.result).toEqual({
      createSubOrganizationResultV8: activity.result.createSubOrganizationResultV8,
    });
    expect(nested.fingerprint).toBe(activity.fingerprint);
  });

  it("lets the sub-organization's root users act in it with their own keys", async () => {
    const a = clientFor(alice);
    const who = await a.getWhoami({ organizationId: subOrgId });
    expect(who).toMatchObject({
      organizationId: subOrgId,
      organizationName: 'Customer 1',
      username: 'alice',
    });
    expect(rootUserIds).toContain(who.userId);
    const whoBob = await clientFor(bob).getWhoami({ organizationId: subOrgId });
    expect(whoBob.username).toBe('bob');
    const { wallets } = await a.getWallets({ organizationId: subOrgId });
    expect(wallets.map((w) => [w.walletId, w.walletName])).toEqual([[walletId, 'Customer wallet']]);
    const { accounts } = await a.getWalletAccounts({ organizationId: subOrgId, walletId });
    expect(accounts.map((x) => x.address)).toEqual([address]);
    const { organizationData } = await a.getOrganization({ organizationId: subOrgId });
    expect(organizationData.rootQuorum?.threshold).toBe(2);
    expect([...(organizationData.rootQuorum?.userIds ?? [])].sort()).toEqual([...rootUserIds].sort());
    expect(organizationData.features).toEqual(
      expect.arrayContaining([
        { name: 'FEATURE_NAME_SMS_AUTH', value: 'false' },
        { name: 'FEATURE_NAME_EMAIL_AUTH', value: 'true' },
      ]),
    );
    const users = organizationData.users ?? [];
    expect(users.find((u) => u.userName === 'alice')).toMatchObject({
      userEmail: 'alice@example.com',
      userPhoneNumber: '+14155550100',
    });

    // A sub-organization with one root user (threshold 1): its root writes there on its own.
    const solo = await root.createSubOrganization({
      type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
      timestampMs: ts(),
      organizationId: parentOrg,
      parameters: {
        subOrganizationName: 'Solo',
        rootUsers: [rootUser('carol', carol)],
        rootQuorumThreshold: 1,
      },
    });
    expect(solo.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const soloResult = solo.activity.result.createSubOrganizationResultV8;
    expect(soloResult?.wallet).toBeUndefined();
    soloOrgId = String(soloResult?.subOrganizationId);
    const created = await clientFor(carol).createWallet({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: ts(),
      organizationId: soloOrgId,
      parameters: { walletName: 'carol wallet', accounts: [ETH_ACCOUNT] },
    });
    expect(created.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(created.activity.organizationId).toBe(soloOrgId);
  });

  it('lets the parent read the sub-organization (list_suborgs with filters, get_wallets with its id)', async () => {
    expect(await subOrgIds()).toEqual(expect.arrayContaining([subOrgId, soloOrgId]));
    expect(await subOrgIds({ filterType: 'NAME', filterValue: 'Customer 1' })).toEqual([subOrgId]);
    expect(await subOrgIds({ filterType: 'EMAIL', filterValue: 'ALICE@example.com' })).toEqual([subOrgId]);
    expect(await subOrgIds({ filterType: 'PHONE_NUMBER', filterValue: '+14155550100' })).toEqual([subOrgId]);
    expect(await subOrgIds({ filterType: 'USERNAME', filterValue: 'carol' })).toEqual([soloOrgId]);
    expect(await subOrgIds({ filterType: 'PUBLIC_KEY', filterValue: bob.apiPublicKey })).toEqual([subOrgId]);
    expect(await subOrgIds({ filterType: 'PUBLIC_KEY', filterValue: newApiKey().apiPublicKey })).toEqual([]);
    const paged = await root.getSubOrgIds({ organizationId: parentOrg, paginationOptions: { limit: '1' } });
    expect(paged.organizationIds).toHaveLength(1);
    const bad = await refusal(
      root.getSubOrgIds({ organizationId: parentOrg, filterType: 'COLOR', filterValue: 'x' }),
    );
    expect(bad.code).toBe(3);
    expect(bad.message).toContain('filterType');

    const { wallets } = await root.getWallets({ organizationId: subOrgId });
    expect(wallets.map((w) => w.walletId)).toEqual([walletId]);
    const { organizationData } = await root.getOrganization({ organizationId: subOrgId });
    expect(organizationData.name).toBe('Customer 1');
    // A sub-organization has no sub-organizations of its own.
    expect((await clientFor(alice).getSubOrgIds({ organizationId: subOrgId })).organizationIds).toEqual([]);
  });

  it("refuses the parent's writes into the sub-organization (403 REQUEST_NOT_AUTHORIZED), changing nothing", async () => {
    const before = await store.listActivities(subOrgId, { limit: 100 });
    const e = await refusal(
      root.createWallet({
        type: 'ACTIVITY_TYPE_CREATE_WALLET',
        timestampMs: ts(),
        organizationId: subOrgId,
        parameters: { walletName: 'parent sneaks in', accounts: [ETH_ACCOUNT] },
      }),
    );
    expect(e.code).toBe(7);
    expect(e.message).toContain('request not authorized');
    expect(JSON.stringify(e.details)).toContain('REQUEST_NOT_AUTHORIZED');
    expect((await root.getWallets({ organizationId: subOrgId })).wallets.map((w) => w.walletId)).toEqual([
      walletId,
    ]);
    expect(await store.listActivities(subOrgId, { limit: 100 })).toEqual(before);
  });

  it('refuses bad input naming the field, with nothing created', async () => {
    const k = newApiKey();
    const base = { subOrganizationName: 'Bad', rootUsers: [rootUser('dan', k)], rootQuorumThreshold: 1 };
    await expectRefused({ ...base, subOrganizationName: undefined }, 400, 'parameters.subOrganizationName');
    await expectRefused({ ...base, rootQuorumThreshold: 0 }, 400, 'parameters.rootQuorumThreshold');
    await expectRefused({ ...base, rootQuorumThreshold: 2 }, 400, 'parameters.rootQuorumThreshold');
    await expectRefused({ ...base, rootQuorumThreshold: '1' }, 400, 'parameters.rootQuorumThreshold');
    await expectRefused({ ...base, rootUsers: [] }, 400, 'parameters.rootUsers');
    await expectRefused({ ...base, rootUsers: 'dan' }, 400, 'parameters.rootUsers');
    await expectRefused(
      { ...base, rootUsers: [rootUser('dan', { ...k, apiPublicKey: `02${'ff'.repeat(32)}` })] },
      400,
      'parameters.rootUsers.0.apiKeys.0.publicKey',
    );
    await expectRefused(
      { ...base, rootUsers: [rootUser('dan', { ...k, apiPublicKey: k.apiPublicKey.slice(2) })] },
      400,
      'parameters.rootUsers.0.apiKeys.0.publicKey',
    );
    await expectRefused(
      { ...base, rootUsers: [rootUser('dan', k), rootUser('dan', newApiKey())], rootQuorumThreshold: 2 },
      400,
      'parameters.rootUsers.1.userName',
    );
    await expectRefused(
      { ...base, rootUsers: [rootUser('dan', k), rootUser('eve', k)] },
      400,
      'parameters.rootUsers.1.apiKeys.0.publicKey',
    );
    await expectRefused(
      { ...base, subOrganizationName: 'Customer 1' },
      400,
      'parameters.subOrganizationName',
    );
    await expectRefused(
      { ...base, rootUsers: [rootUser('dan', k, { userPhoneNumber: '4155550100' })] },
      400,
      'parameters.rootUsers.0.userPhoneNumber',
    );
    await expectRefused(
      { ...base, rootUsers: [{ ...rootUser('dan', k), apiKeys: undefined }] },
      400,
      'parameters.rootUsers.0.apiKeys',
    );
    await expectRefused(
      {
        ...base,
        rootUsers: [
          rootUser('dan', k, {
            authenticators: [
              {
                authenticatorName: 'pk',
                challenge: 'c',
                attestation: {
                  credentialId: 'x',
                  clientDataJson: 'y',
                  attestationObject: 'z',
                  transports: [],
                },
              },
            ],
          }),
        ],
      },
      400,
      'parameters.rootUsers.0.authenticators.0.attestation.clientDataJson',
    );
    await expectRefused(
      {
        ...base,
        rootUsers: [rootUser('dan', k, { oauthProviders: [{ providerName: 'google', oidcToken: 'a.b.c' }] })],
      },
      400,
      'parameters.rootUsers.0.oauthProviders.0.oidcToken',
    );
    await expectRefused(
      { ...base, wallet: { walletName: 'w', accounts: [{ ...ETH_ACCOUNT, curve: 'CURVE_ED25519' }] } },
      400,
      'parameters.wallet.accounts.0.addressFormat',
    );
    await expectRefused(
      { ...base, wallet: { walletName: 'w', accounts: [], mnemonicLength: 13 } },
      400,
      'parameters.wallet.mnemonicLength',
    );
    await expectRefused({ ...base, disableSmsAuth: 'yes' }, 400, 'parameters.disableSmsAuth');
  });

  it("registers root users' passkeys (authenticators) parsed as create_users does; the passkey stamps whoami", async () => {
    const auth = softAuthenticator();
    const res = await root.createSubOrganization({
      type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
      timestampMs: ts(),
      organizationId: parentOrg,
      parameters: {
        subOrganizationName: 'Passkey org',
        rootUsers: [{ ...rootUser('paula', newApiKey()), apiKeys: [], authenticators: [auth.params] }],
        rootQuorumThreshold: 1,
      },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const result = res.activity.result.createSubOrganizationResultV8;
    const orgId = String(result?.subOrganizationId);
    const userId = String(result?.rootUserIds?.[0]);
    const { user } = await root.getUser({ organizationId: orgId, userId });
    expect(user.authenticators).toEqual([
      expect.objectContaining({
        authenticatorName: 'passkey',
        credentialId: auth.credentialId,
        credential: expect.objectContaining({ publicKey: auth.compressed }),
      }),
    ]);
    const body = JSON.stringify({ organizationId: orgId });
    const r = await fetch(`${baseUrl}/public/v1/query/whoami`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-stamp-webauthn': webauthnStamp(auth, body) },
      body,
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ organizationId: orgId, userId, username: 'paula' });
  });

  it('refuses a malformed attestation naming the field, with nothing created', async () => {
    const k = newApiKey();
    const a = softAuthenticator();
    const base = { subOrganizationName: 'Bad passkey', rootQuorumThreshold: 1 };
    const withAuth = (authenticator: unknown) => ({
      ...base,
      rootUsers: [rootUser('dan', k, { authenticators: [authenticator] })],
    });
    await expectRefused(
      withAuth({ ...a.params, attestation: { ...a.params.attestation, attestationObject: 'AAAA' } }),
      400,
      'parameters.rootUsers.0.authenticators.0.attestation.attestationObject',
    );
    await expectRefused(
      withAuth({ ...a.params, challenge: randomBytes(32).toString('base64url') }),
      400,
      'parameters.rootUsers.0.authenticators.0.challenge',
    );
    await expectRefused(
      withAuth({ ...a.params, attestation: { ...a.params.attestation, credentialId: 'AAAA' } }),
      400,
      'parameters.rootUsers.0.authenticators.0.attestation.credentialId',
    );
    await expectRefused(
      withAuth({ ...a.params, authenticatorName: undefined }),
      400,
      'parameters.rootUsers.0.authenticators.0.authenticatorName',
    );
    // The same credential for two root users of one request.
    await expectRefused(
      {
        ...base,
        rootQuorumThreshold: 2,
        rootUsers: [
          rootUser('dan', k, { authenticators: [a.params] }),
          rootUser('eve', newApiKey(), { authenticators: [a.params] }),
        ],
      },
      400,
      'parameters.rootUsers.1.authenticators.0.attestation.credentialId',
    );
    expect(await subOrgIds({ filterType: 'NAME', filterValue: 'Bad passkey' })).toEqual([]);
  });

  it('refuses a sub-organization of a sub-organization (403)', async () => {
    const before = await store.listActivities(soloOrgId, { limit: 100 });
    const res = await post(
      baseUrl,
      creds,
      '/public/v1/submit/create_sub_organization',
      envelope('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8', soloOrgId, {
        subOrganizationName: 'Nested',
        rootUsers: [rootUser('nina', newApiKey())],
        rootQuorumThreshold: 1,
      }),
      { keys: carol },
    );
    expect(res.status).toBe(403);
    expect(String(res.json.message)).toContain('cannot create sub-organizations');
    expect(await store.listActivities(soloOrgId, { limit: 100 })).toEqual(before);
    expect((await clientFor(carol).getSubOrgIds({ organizationId: soloOrgId })).organizationIds).toEqual([]);
  });
});

describe('create_sub_organization with a verification token', () => {
  const clientSecret = p256.utils.randomSecretKey();
  const clientPub = bytesToHex(p256.getPublicKey(clientSecret, true));

  async function token(contact: string, organizationId = parentOrg) {
    const signer = await store.getServiceKey(SERVICE_SIGNER_KEY_ID);
    if (signer === undefined) throw new Error('no service key');
    const id = randomUUID();
    const jwt = signVerificationToken({
      vault,
      key: signer,
      claims: {
        id,
        verification_type: 'OTP_TYPE_EMAIL',
        contact,
        organization_id: organizationId,
        public_key: clientPub,
        exp: String(Date.now() + 10 * 60_000),
      },
    });
    return { id, jwt };
  }

  /** The signup signature @turnkey/core builds (getClientSignatureMessageForSignup). */
  function clientSignature(tokenId: string, email: string, apiKeys: unknown[], secret = clientSecret) {
    const message = JSON.stringify({ signupV2: { apiKeys, email }, tokenId, type: 'USAGE_TYPE_SIGNUP' });
    return {
      publicKey: clientPub,
      scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256' as const,
      message,
      signature: bytesToHex(p256.sign(utf8(message), secret, { format: 'compact' })),
    };
  }

  it('accepts a token signed by the service with the signup signed by its key, once', async () => {
    const k = newApiKey();
    const user = rootUser('frank', k, { userEmail: 'frank@example.com' });
    const t = await token('frank@example.com');
    const params = {
      subOrganizationName: 'Verified',
      rootUsers: [user],
      rootQuorumThreshold: 1,
      verificationToken: t.jwt,
      clientSignature: clientSignature(t.id, 'frank@example.com', user.apiKeys),
    };
    const res = await root.createSubOrganization({
      type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
      timestampMs: ts(),
      organizationId: parentOrg,
      parameters: params,
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(res.activity.intent.createSubOrganizationIntentV8).toEqual(params);
    const id = String(res.activity.result.createSubOrganizationResultV8?.subOrganizationId);
    expect(await subOrgIds({ filterType: 'EMAIL', filterValue: 'frank@example.com' })).toEqual([id]);
    // The same token again (a new request body): already used.
    await expectRefused(
      { ...params, subOrganizationName: 'Verified again' },
      400,
      'parameters.verificationToken',
    );
  });

  it('refuses a token without a client signature, a wrong signature, a foreign contact or a forged token', async () => {
    const k = newApiKey();
    const user = rootUser('gina', k, { userEmail: 'gina@example.com' });
    const base = { subOrganizationName: 'Gina', rootUsers: [user], rootQuorumThreshold: 1 };
    const t = await token('gina@example.com');
    await expectRefused({ ...base, verificationToken: t.jwt }, 400, 'parameters.clientSignature');
    await expectRefused(
      {
        ...base,
        verificationToken: t.jwt,
        clientSignature: clientSignature(
          t.id,
          'gina@example.com',
          user.apiKeys,
          p256.utils.randomSecretKey(),
        ),
      },
      400,
      'parameters.clientSignature.signature',
    );
    // Signed for other API keys than the request registers.
    await expectRefused(
      { ...base, verificationToken: t.jwt, clientSignature: clientSignature(t.id, 'gina@example.com', []) },
      400,
      'parameters.clientSignature.message',
    );
    await expectRefused(
      {
        ...base,
        verificationToken: t.jwt,
        clientSignature: clientSignature(randomUUID(), 'gina@example.com', user.apiKeys),
      },
      400,
      'parameters.clientSignature.message',
    );
    const other = await token('someone@example.com');
    await expectRefused(
      {
        ...base,
        verificationToken: other.jwt,
        clientSignature: clientSignature(other.id, 'gina@example.com', user.apiKeys),
      },
      400,
      'parameters.verificationToken',
    );
    const foreignOrg = await token('gina@example.com', randomUUID());
    await expectRefused(
      {
        ...base,
        verificationToken: foreignOrg.jwt,
        clientSignature: clientSignature(foreignOrg.id, 'gina@example.com', user.apiKeys),
      },
      400,
      'parameters.verificationToken',
    );
    const [h, p] = t.jwt.split('.') as [string, string];
    const forged = `${h}.${p}.${Buffer.from(p256.sign(utf8(`${h}.${p}`), p256.utils.randomSecretKey())).toString('base64url')}`;
    await expectRefused(
      {
        ...base,
        verificationToken: forged,
        clientSignature: clientSignature(t.id, 'gina@example.com', user.apiKeys),
      },
      400,
      'parameters.verificationToken',
    );
    await expectRefused(
      { ...base, clientSignature: clientSignature(t.id, 'gina@example.com', user.apiKeys) },
      400,
      'parameters.clientSignature',
    );
  });
});

describe('stamp_login', () => {
  const login = (client: TurnkeyClient, parameters: Record<string, unknown>, organizationId = parentOrg) =>
    client.stampLogin({
      type: 'ACTIVITY_TYPE_STAMP_LOGIN',
      timestampMs: ts(),
      organizationId,
      parameters: parameters as never,
    });

  const claimsOf = (jwt: string) =>
    JSON.parse(Buffer.from(String(jwt.split('.')[1]), 'base64url').toString()) as Record<string, unknown>;

  it('returns a session JWT @turnkey/crypto verifies with our service key, whose key then stamps requests', async () => {
    const session = newApiKey();
    const before = Date.now();
    const res = await login(root, { publicKey: session.apiPublicKey });
    const { activity } = res;
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(activity.type).toBe('ACTIVITY_TYPE_STAMP_LOGIN');
    expect(activity.intent.stampLoginIntent).toEqual({ publicKey: session.apiPublicKey });
    expect(activity.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(activity.votes).toHaveLength(1);
    expect(activity.canApprove).toBe(false);
    expect(activity.canReject).toBe(false);
    expect(Number(activity.createdAt.seconds)).toBeGreaterThan(0);
    const nested = (activity.result as Record<string, unknown>).activity as Record<string, unknown>;
    expect(nested.result).toEqual({ stampLoginResult: activity.result.stampLoginResult });
    const jwt = String(activity.result.stampLoginResult?.session);

    const notarizer = String((await store.getServiceKey(SERVICE_NOTARIZER_KEY_ID))?.publicKey);
    expect(await verifySessionJwtSignature(jwt, notarizer)).toBe(true);
    expect(await verifySessionJwtSignature(jwt, signerPublicKey)).toBe(false); // sessions have their own key
    expect(await verifySessionJwtSignature(jwt)).toBe(false); // Turnkey's production key did not sign it
    expect(JSON.parse(Buffer.from(String(jwt.split('.')[0]), 'base64url').toString())).toEqual({
      alg: 'ES256',
      typ: 'JWT',
    });
    const claims = claimsOf(jwt);
    expect(claims).toMatchObject({
      public_key: session.apiPublicKey,
      session_type: 'SESSION_TYPE_READ_WRITE',
      user_id: creds.userId,
      organization_id: parentOrg,
    });
    expect(typeof claims.exp).toBe('number');
    // 15 minutes by default.
    expect(Number(claims.exp)).toBeGreaterThanOrEqual(Math.floor(before / 1000) + 899);
    expect(Number(claims.exp)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 900);

    const who = await clientFor(session).getWhoami({ organizationId: parentOrg });
    expect(who.userId).toBe(creds.userId);
    const { apiKeys } = await root.getApiKeys({ organizationId: parentOrg, userId: creds.userId });
    const registered = apiKeys.find((k) => k.credential.publicKey === session.apiPublicKey);
    expect(registered?.expirationSeconds).toBe('900');
  });

  it('lets a session key stamp until it expires, then 401 expired api key', async () => {
    const session = newApiKey();
    await login(root, { publicKey: session.apiPublicKey, expirationSeconds: '60' });
    const client = clientFor(session);
    expect((await client.getWhoami({ organizationId: parentOrg })).userId).toBe(creds.userId);
    clockOffsetMs = 61_000;
    try {
      const e = await refusal(client.getWhoami({ organizationId: parentOrg }));
      expect(e.code).toBe(16);
      expect(e.message).toContain('expired api key');
      const w = await refusal(
        client.createWallet({
          type: 'ACTIVITY_TYPE_CREATE_WALLET',
          timestampMs: ts(),
          organizationId: parentOrg,
          parameters: { walletName: 'late', accounts: [] },
        }),
      );
      expect(w.message).toContain('expired api key');
    } finally {
      clockOffsetMs = 0;
    }
  });

  it('works for a sub-organization user in the sub-organization', async () => {
    const carolKeys = newApiKey();
    const sub = await root.createSubOrganization({
      type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
      timestampMs: ts(),
      organizationId: parentOrg,
      parameters: {
        subOrganizationName: 'Login org',
        rootUsers: [rootUser('hank', carolKeys)],
        rootQuorumThreshold: 1,
      },
    });
    const subId = String(sub.activity.result.createSubOrganizationResultV8?.subOrganizationId);
    const session = newApiKey();
    const res = await login(clientFor(carolKeys), { publicKey: session.apiPublicKey }, subId);
    const claims = claimsOf(String(res.activity.result.stampLoginResult?.session));
    expect(claims.organization_id).toBe(subId);
    expect((await clientFor(session).getWhoami({ organizationId: subId })).username).toBe('hank');
  });

  it('invalidateExisting revokes the earlier session keys and keeps the new one and long-lived keys', async () => {
    const first = newApiKey();
    const second = newApiKey();
    await login(root, { publicKey: first.apiPublicKey });
    expect((await clientFor(first).getWhoami({ organizationId: parentOrg })).userId).toBe(creds.userId);
    await login(root, { publicKey: second.apiPublicKey, invalidateExisting: true });
    const e = await refusal(clientFor(first).getWhoami({ organizationId: parentOrg }));
    expect(e.code).toBe(16);
    expect(e.message).toContain('could not find public key');
    expect((await clientFor(second).getWhoami({ organizationId: parentOrg })).userId).toBe(creds.userId);
    expect((await root.getWhoami({ organizationId: parentOrg })).userId).toBe(creds.userId);
  });

  it('refuses bad input naming the field, registering nothing', async () => {
    const count = async () => (await store.listApiKeys(creds.userId)).length;
    const check = async (parameters: unknown, field: string) => {
      const keys = await count();
      const activities = await parentActivityCount();
      const res = await post(
        baseUrl,
        creds,
        '/public/v1/submit/stamp_login',
        envelope('ACTIVITY_TYPE_STAMP_LOGIN', parentOrg, parameters),
      );
      expect(res.status).toBe(400);
      expect(String(res.json.message)).toContain(field);
      expect(await count()).toBe(keys);
      expect(await parentActivityCount()).toBe(activities);
    };
    await check({}, 'parameters.publicKey');
    await check({ publicKey: 42 }, 'parameters.publicKey');
    await check({ publicKey: `04${'11'.repeat(64)}` }, 'parameters.publicKey');
    await check({ publicKey: `02${'ff'.repeat(32)}` }, 'parameters.publicKey');
    await check(
      { publicKey: newApiKey().apiPublicKey, expirationSeconds: 'soon' },
      'parameters.expirationSeconds',
    );
    await check(
      { publicKey: newApiKey().apiPublicKey, expirationSeconds: '0' },
      'parameters.expirationSeconds',
    );
    await check(
      { publicKey: newApiKey().apiPublicKey, invalidateExisting: 'yes' },
      'parameters.invalidateExisting',
    );
    // The root's own long-lived key: already a credential here.
    await check({ publicKey: creds.apiPublicKey }, 'parameters.publicKey');
  });
});
