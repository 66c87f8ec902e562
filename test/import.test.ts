/**
 * Key and wallet import (init_import_wallet, import_wallet, init_import_private_key,
 * import_private_key) over real HTTP against the embedded service, driven by Turnkey's unmodified
 * @turnkey/sdk-server and @turnkey/http clients; bundles are made by @turnkey/crypto's own
 * encryptWalletToBundle / encryptPrivateKeyToBundle with our published signer key as the override,
 * and viem checks every signature the imported keys make.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { Turnkey } from '@turnkey/sdk-server';
import { createAccount } from '@turnkey/viem';
import {
  decryptExportBundle,
  encryptPrivateKeyToBundle,
  encryptWalletToBundle,
  generateP256KeyPair,
} from '@turnkey/crypto';
import { p256 } from '@noble/curves/nist.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import {
  keccak256,
  recoverAddress,
  recoverTransactionAddress,
  serializeSignature,
  toHex,
  verifyMessage,
} from 'viem';
import {
  english,
  generateMnemonic,
  generatePrivateKey,
  mnemonicToAccount,
  privateKeyToAccount,
} from 'viem/accounts';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { insertUserWithApiKey } from './helpers/users.js';
import type { ApiKeyPair } from './helpers/api-key.js';
import { newApiKey } from './helpers/api-key.js';

type Api = ReturnType<Turnkey['apiClient']>;

let h: EmbeddedHarness;
let org: string;
let userId: string;
let api: Api;
let http: TurnkeyClient;
let signerPublicKey: string;

const ETH_ACCOUNT = (index: number) =>
  ({
    curve: 'CURVE_SECP256K1',
    pathFormat: 'PATH_FORMAT_BIP32',
    path: `m/44'/60'/0'/0/${index}`,
    addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
  }) as const;

const sdkFor = (keys: ApiKeyPair, organizationId: string): Api =>
  new Turnkey({
    apiBaseUrl: h.baseUrl,
    apiPublicKey: keys.apiPublicKey,
    apiPrivateKey: keys.apiPrivateKey,
    defaultOrganizationId: organizationId,
  }).apiClient();

beforeAll(async () => {
  h = await startEmbedded();
  const c = h.service.credentials;
  org = c.organizationId;
  userId = c.userId;
  api = sdkFor(c, org);
  http = new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(c));
  const res = await fetch(`${h.baseUrl}/public/v1/discovery/keys`);
  signerPublicKey = String(((await res.json()) as Record<string, unknown>).signerPublicKey);
});
afterAll(async () => {
  await h.close();
});

const activityCount = async () => (await h.service.store.listActivities(org, { limit: 1000 })).length;

/** A refusal over raw HTTP by the bootstrap root user: status 400 naming the field, nothing recorded. */
async function expectRefused(path: string, type: string, parameters: unknown, field: string, says: string) {
  const before = await activityCount();
  const wallets = (await h.service.store.listWallets(org)).length;
  const keys = (await h.service.store.listPrivateKeys(org)).length;
  const res = await post(
    h.baseUrl,
    h.service.credentials,
    `/public/v1/submit/${path}`,
    envelope(type, org, parameters),
  );
  expect(res.status).toBe(400);
  expect(String(res.json.message)).toContain(field);
  expect(String(res.json.message)).toContain(says);
  expect(await activityCount()).toBe(before);
  expect((await h.service.store.listWallets(org)).length).toBe(wallets);
  expect((await h.service.store.listPrivateKeys(org)).length).toBe(keys);
  return String(res.json.message);
}

async function refusal(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Error) return e;
    throw e;
  }
  throw new Error('expected the request to be refused');
}

async function initKeyImport(client: Api = api, user = userId): Promise<string> {
  const { importBundle } = await client.initImportPrivateKey({ userId: user });
  return importBundle;
}

async function initWalletImport(client: Api = api, user = userId): Promise<string> {
  const { importBundle } = await client.initImportWallet({ userId: user });
  return importBundle;
}

const sealKey = (
  importBundle: string,
  privateKey: string,
  keyFormat: 'HEXADECIMAL' | 'SOLANA' = 'HEXADECIMAL',
  ids: { userId: string; organizationId: string } = { userId, organizationId: org },
) =>
  encryptPrivateKeyToBundle({
    privateKey,
    keyFormat,
    importBundle,
    ...ids,
    dangerouslyOverrideSignerPublicKey: signerPublicKey,
  });

const sealMnemonic = (
  importBundle: string,
  mnemonic: string,
  ids: { userId: string; organizationId: string } = { userId, organizationId: org },
) =>
  encryptWalletToBundle({
    mnemonic,
    importBundle,
    ...ids,
    dangerouslyOverrideSignerPublicKey: signerPublicKey,
  });

const keyParams = (encryptedBundle: string, privateKeyName: string, user = userId) => ({
  userId: user,
  privateKeyName,
  encryptedBundle,
  curve: 'CURVE_SECP256K1' as const,
  addressFormats: ['ADDRESS_FORMAT_ETHEREUM' as const],
});

/** sign_raw_payload (no hashing) over a keccak digest, and sign_transaction through @turnkey/viem. */
async function expectSignsFor(client: Api, organizationId: string, address: `0x${string}`) {
  const digest = keccak256(toHex('imported keys sign'));
  const raw = await client.signRawPayload({
    signWith: address,
    payload: digest,
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  });
  const signature = serializeSignature({
    r: `0x${raw.r}`,
    s: `0x${raw.s}`,
    yParity: Number.parseInt(raw.v, 16),
  });
  expect(await recoverAddress({ hash: digest, signature })).toBe(address);

  const account = await createAccount({ client, organizationId, signWith: address });
  const signedTx = await account.signTransaction({
    type: 'eip1559',
    chainId: 31337,
    nonce: 1,
    to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    value: 10n ** 15n,
    gas: 21000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
  expect(await recoverTransactionAddress({ serializedTransaction: signedTx as never })).toBe(address);
  const message = 'hello from an imported key';
  expect(await verifyMessage({ address, message, signature: await account.signMessage({ message }) })).toBe(
    true,
  );
}

describe('init_import_*', () => {
  it('returns a bundle signed by the published signer key over {organizationId, userId, targetPublic}', async () => {
    for (const importBundle of [await initKeyImport(), await initWalletImport()]) {
      const b = JSON.parse(importBundle) as Record<string, string>;
      expect(b.enclaveQuorumPublic).toBe(signerPublicKey);
      const data = Buffer.from(String(b.data), 'hex');
      const signed = JSON.parse(data.toString('utf8')) as Record<string, string>;
      expect(signed.organizationId).toBe(org);
      expect(signed.userId).toBe(userId);
      expect(signed.targetPublic).toMatch(/^04[0-9a-f]{128}$/);
      const sig = p256.Signature.fromBytes(Buffer.from(String(b.dataSignature), 'hex'), 'der');
      expect(
        p256.verify(sig.toBytes(), sha256(data), Buffer.from(signerPublicKey, 'hex'), { prehash: false }),
      ).toBe(true);
    }
    // Every init hands out a new target.
    const a = JSON.parse(Buffer.from(JSON.parse(await initKeyImport()).data, 'hex').toString()).targetPublic;
    const b = JSON.parse(Buffer.from(JSON.parse(await initKeyImport()).data, 'hex').toString()).targetPublic;
    expect(a).not.toBe(b);
  });

  it("refuses a userId other than the caller's, naming the field", async () => {
    const other = await insertUserWithApiKey(h.service.store, { organizationId: org, name: 'someone else' });
    await expectRefused(
      'init_import_wallet',
      'ACTIVITY_TYPE_INIT_IMPORT_WALLET',
      { userId: other.userId },
      'parameters.userId',
      'must be the id of the user making this request',
    );
    await expectRefused(
      'init_import_private_key',
      'ACTIVITY_TYPE_INIT_IMPORT_PRIVATE_KEY',
      { userId: 'not-a-uuid' },
      'parameters.userId',
      'UUID',
    );
  });
});

describe('import_private_key', () => {
  it('imports a secp256k1 key (@turnkey/sdk-server): it signs raw payloads and transactions as viem derives it', async () => {
    const pk = generatePrivateKey();
    const expected = privateKeyToAccount(pk).address;
    const encryptedBundle = await sealKey(await initKeyImport(), pk);
    const res = await api.importPrivateKey(keyParams(encryptedBundle, 'imported eth key'));
    expect(res.privateKeyId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.addresses).toEqual([{ format: 'ADDRESS_FORMAT_ETHEREUM', address: expected }]);
    const { privateKey } = await api.getPrivateKey({ privateKeyId: res.privateKeyId });
    expect(privateKey.imported).toBe(true);
    expect(privateKey.exported).toBe(false);
    expect(privateKey.privateKeyName).toBe('imported eth key');
    await expectSignsFor(api, org, expected);
    // The stored record is sealed: the key bytes are nowhere in it.
    const rec = await h.service.store.getPrivateKey(org, res.privateKeyId);
    expect(Buffer.from(rec!.sealedKey).toString('hex')).not.toContain(pk.slice(2));

    // And a replay of the same bundle is refused: the target was used.
    const msg = await expectRefused(
      'import_private_key',
      'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
      keyParams(encryptedBundle, 'imported eth key again'),
      'parameters.encryptedBundle',
      'already imported',
    );
    expect(msg).toContain('init_import_private_key');
  });

  it('imports a Solana key given as base58 keypair (keyFormat SOLANA); it signs ed25519 for its address', async () => {
    const secret = ed25519.utils.randomSecretKey();
    const pub = ed25519.getPublicKey(secret);
    const encryptedBundle = await sealKey(
      await initKeyImport(),
      base58.encode(new Uint8Array([...secret, ...pub])),
      'SOLANA',
    );
    const res = await http.importPrivateKey({
      type: 'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: {
        userId,
        privateKeyName: 'imported solana key',
        encryptedBundle,
        curve: 'CURVE_ED25519',
        addressFormats: ['ADDRESS_FORMAT_SOLANA'],
      },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const result = res.activity.result.importPrivateKeyResult;
    const address = base58.encode(pub);
    expect(result?.addresses).toEqual([{ format: 'ADDRESS_FORMAT_SOLANA', address }]);
    const message = new TextEncoder().encode('a solana message');
    const raw = await api.signRawPayload({
      signWith: address,
      payload: toHex(message),
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
    });
    expect(ed25519.verify(Buffer.from(raw.r + raw.s, 'hex'), message, pub)).toBe(true);
  });

  it('imports exactly once when the same bundle is submitted twice at the same time', async () => {
    const pk = generatePrivateKey();
    const encryptedBundle = await sealKey(await initKeyImport(), pk);
    const outcomes = await Promise.allSettled([
      api.importPrivateKey(keyParams(encryptedBundle, 'race a')),
      api.importPrivateKey(keyParams(encryptedBundle, 'race b')),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const names = (await h.service.store.listPrivateKeys(org)).map((k) => k.name);
    expect(names.filter((n) => n === 'race a' || n === 'race b')).toHaveLength(1);
  });

  it('refuses a key that is not a secp256k1 scalar, or not 32 bytes, naming encryptedBundle; the target stays usable', async () => {
    const importBundle = await initKeyImport();
    const n = 'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141';
    for (const [bad, says] of [
      ['00'.repeat(32), 'invalid private key'],
      [n, 'invalid private key'],
      ['11'.repeat(31), 'has 31 bytes'],
    ] as const) {
      await expectRefused(
        'import_private_key',
        'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
        keyParams(await sealKey(importBundle, bad), 'never stored'),
        'parameters.encryptedBundle',
        says,
      );
    }
    const pk = generatePrivateKey();
    const ok = await api.importPrivateKey(keyParams(await sealKey(importBundle, pk), 'after the refusals'));
    expect(ok.addresses[0]?.address).toBe(privateKeyToAccount(pk).address);
  });

  it('refuses a malformed or tampered encryptedBundle, and a wallet bundle, naming the field', async () => {
    await expectRefused(
      'import_private_key',
      'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
      keyParams('not json', 'x'),
      'parameters.encryptedBundle',
      'encappedPublic, ciphertext',
    );
    const sealed = JSON.parse(await sealKey(await initKeyImport(), generatePrivateKey())) as Record<
      string,
      string
    >;
    await expectRefused(
      'import_private_key',
      'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
      keyParams(JSON.stringify({ ...sealed, encappedPublic: `04${'11'.repeat(64)}` }), 'x'),
      'parameters.encryptedBundle.encappedPublic',
      'P-256',
    );
    const ct = String(sealed.ciphertext);
    const flipped = (Number.parseInt(ct.slice(0, 2), 16) ^ 1).toString(16).padStart(2, '0') + ct.slice(2);
    await expectRefused(
      'import_private_key',
      'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
      keyParams(JSON.stringify({ ...sealed, ciphertext: flipped }), 'x'),
      'parameters.encryptedBundle',
      'cannot be decrypted',
    );
    const walletBundle = await sealKey(await initWalletImport(), generatePrivateKey());
    await expectRefused(
      'import_private_key',
      'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
      keyParams(walletBundle, 'x'),
      'parameters.encryptedBundle',
      'init_import_wallet',
    );
    await expectRefused(
      'import_private_key',
      'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
      { ...keyParams(JSON.stringify(sealed), 'x'), addressFormats: ['ADDRESS_FORMAT_SOLANA'] },
      'parameters.addressFormats.0',
      'cannot be derived',
    );
  });
});

describe('import_wallet', () => {
  it('imports a mnemonic (@turnkey/http): its accounts sign as viem derives them, and it exports back', async () => {
    const mnemonic = generateMnemonic(english);
    const init = await http.initImportWallet({
      type: 'ACTIVITY_TYPE_INIT_IMPORT_WALLET',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { userId },
    });
    const importBundle = String(init.activity.result.initImportWalletResult?.importBundle);
    const encryptedBundle = await sealMnemonic(importBundle, mnemonic);
    const res = await http.importWallet({
      type: 'ACTIVITY_TYPE_IMPORT_WALLET',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: {
        userId,
        walletName: 'imported wallet',
        encryptedBundle,
        accounts: [ETH_ACCOUNT(0), ETH_ACCOUNT(1)],
      },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const result = res.activity.result.importWalletResult;
    const expected = [0, 1].map((i) => mnemonicToAccount(mnemonic, { addressIndex: i }).address);
    expect(result?.addresses).toEqual(expected);
    const walletId = String(result?.walletId);

    const { wallets } = await http.getWallets({ organizationId: org });
    const w = wallets.find((x) => x.walletId === walletId);
    expect(w?.walletName).toBe('imported wallet');
    expect(w?.imported).toBe(true);
    for (const address of expected) await expectSignsFor(api, org, address);

    const target = generateP256KeyPair();
    const exported = await api.exportWallet({ walletId, targetPublicKey: target.publicKeyUncompressed });
    const back = await decryptExportBundle({
      exportBundle: exported.exportBundle,
      embeddedKey: target.privateKey,
      organizationId: org,
      returnMnemonic: true,
      dangerouslyOverrideSignerPublicKey: signerPublicKey,
    });
    expect(back).toBe(mnemonic);

    await expectRefused(
      'import_wallet',
      'ACTIVITY_TYPE_IMPORT_WALLET',
      { userId, walletName: 'imported twice', encryptedBundle, accounts: [ETH_ACCOUNT(0)] },
      'parameters.encryptedBundle',
      'already imported',
    );
  });

  it('refuses a malformed mnemonic with "invalid mnemonic" naming encryptedBundle; a good one imports after', async () => {
    const importBundle = await initWalletImport();
    const params = async (mnemonic: string, walletName: string) => ({
      userId,
      walletName,
      encryptedBundle: await sealMnemonic(importBundle, mnemonic),
      accounts: [ETH_ACCOUNT(0)],
    });
    for (const [bad, says] of [
      ['abandon '.repeat(11) + 'abandon', 'checksum'],
      ['abandon '.repeat(10) + 'about', 'it has 11 words'],
      ['abandon '.repeat(11) + 'notaword', 'wordlist'],
      ['abandon '.repeat(11) + 'about\nmy passphrase', 'passphrase'],
    ] as const) {
      const msg = await expectRefused(
        'import_wallet',
        'ACTIVITY_TYPE_IMPORT_WALLET',
        await params(bad, 'never stored'),
        'parameters.encryptedBundle',
        says,
      );
      if (!bad.includes('\n')) expect(msg).toContain('invalid mnemonic');
      expect(msg).not.toContain('abandon');
    }
    const good = 'abandon '.repeat(11) + 'about';
    const res = await api.importWallet(await params(good, 'abandon about'));
    expect(res.addresses).toEqual([mnemonicToAccount(good).address]);
  });

  it('refuses a wallet name already taken, and consumes nothing', async () => {
    const importBundle = await initWalletImport();
    const mnemonic = generateMnemonic(english);
    const encryptedBundle = await sealMnemonic(importBundle, mnemonic);
    await expectRefused(
      'import_wallet',
      'ACTIVITY_TYPE_IMPORT_WALLET',
      { userId, walletName: 'imported wallet', encryptedBundle, accounts: [ETH_ACCOUNT(0)] },
      'parameters.walletName',
      'already exists',
    );
    const res = await api.importWallet({
      userId,
      walletName: 'a fresh name',
      encryptedBundle,
      accounts: [ETH_ACCOUNT(0)],
    });
    expect(res.addresses).toEqual([mnemonicToAccount(mnemonic).address]);
  });
});

describe('binding to the user and organization', () => {
  it('refuses a bundle another user initialized; that user can still import it', async () => {
    const bob = await insertUserWithApiKey(h.service.store, {
      organizationId: org,
      name: 'bob',
      isRoot: true,
    });
    const bobApi = sdkFor(bob.key, org);
    const importBundle = await initKeyImport(bobApi, bob.userId);
    const pk = generatePrivateKey();
    const bobsBundle = await sealKey(importBundle, pk, 'HEXADECIMAL', {
      userId: bob.userId,
      organizationId: org,
    });

    // The root user submits Bob's bundle as its own import: no target of the root user opens it.
    await expectRefused(
      'import_private_key',
      'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
      keyParams(bobsBundle, 'not mine'),
      'parameters.encryptedBundle',
      'cannot be decrypted with any open import target of this user',
    );
    // Naming Bob as the importer does not help.
    await expectRefused(
      'import_private_key',
      'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY',
      keyParams(bobsBundle, 'not mine', bob.userId),
      'parameters.userId',
      'must be the id of the user making this request',
    );
    // Bob's target was not consumed by the refusals.
    const res = await bobApi.importPrivateKey(keyParams(bobsBundle, "bob's key", bob.userId));
    expect(res.addresses[0]?.address).toBe(privateKeyToAccount(pk).address);
  });

  it("refuses a bundle made for another organization's target", async () => {
    const alice = newApiKey();
    const sub = await api.createSubOrganization({
      subOrganizationName: 'import elsewhere',
      rootUsers: [
        {
          userName: 'alice',
          apiKeys: [
            { apiKeyName: 'alice key', publicKey: alice.apiPublicKey, curveType: 'API_KEY_CURVE_P256' },
          ],
          authenticators: [],
          oauthProviders: [],
        },
      ],
      rootQuorumThreshold: 1,
    });
    const subOrg = sub.subOrganizationId;
    const aliceId = String(sub.rootUserIds?.[0]);
    const aliceApi = sdkFor(alice, subOrg);
    const importBundle = await initWalletImport(aliceApi, aliceId);
    const mnemonic = generateMnemonic(english);
    const subBundle = await sealMnemonic(importBundle, mnemonic, { userId: aliceId, organizationId: subOrg });

    await expectRefused(
      'import_wallet',
      'ACTIVITY_TYPE_IMPORT_WALLET',
      { userId, walletName: 'from another org', encryptedBundle: subBundle, accounts: [ETH_ACCOUNT(0)] },
      'parameters.encryptedBundle',
      'in this organization',
    );
    // @turnkey/crypto itself refuses to encrypt to a bundle for another organization.
    const e = await refusal(sealMnemonic(importBundle, mnemonic));
    expect(e.message).toContain('organization id does not match');

    const res = await aliceApi.importWallet({
      userId: aliceId,
      walletName: 'alice wallet',
      encryptedBundle: subBundle,
      accounts: [ETH_ACCOUNT(0)],
    });
    expect(res.addresses).toEqual([mnemonicToAccount(mnemonic).address]);
    expect(await h.service.store.getWallet(org, res.walletId)).toBeUndefined();
    expect((await h.service.store.getWallet(subOrg, res.walletId))?.imported).toBe(true);
  });

  it('is refused by @turnkey/http when the intent misses encryptedBundle', async () => {
    const e = await refusal(
      http.importWallet({
        type: 'ACTIVITY_TYPE_IMPORT_WALLET',
        timestampMs: String(Date.now()),
        organizationId: org,
        parameters: { userId, walletName: 'x', accounts: [] } as never,
      }),
    );
    expect(e).toBeInstanceOf(TurnkeyRequestError);
    expect(e.message).toContain('parameters.encryptedBundle');
  });
});

describe('target lifetime', () => {
  it('keeps the newest 10 open targets per user and kind: a bundle to an older one is refused', async () => {
    const c = await insertUserWithApiKey(h.service.store, {
      organizationId: org,
      name: 'carol',
      isRoot: true,
    });
    const carol = sdkFor(c.key, org);
    const ids = { userId: c.userId, organizationId: org };
    const first = await initKeyImport(carol, c.userId);
    for (let i = 0; i < 9; i++) await initKeyImport(carol, c.userId);
    // Ten key targets are open; a wallet init leaves them be, the eleventh key init drops the first.
    const pkKept = generatePrivateKey();
    const keptBundle = await sealKey(first, pkKept, 'HEXADECIMAL', ids);
    await initWalletImport(carol, c.userId); // the other kind does not count against this one
    const eleventh = await initKeyImport(carol, c.userId);
    const dropped = await refusal(carol.importPrivateKey(keyParams(keptBundle, 'too old', c.userId)));
    expect(dropped.message).toContain('cannot be decrypted with any open import target');
    const pk = generatePrivateKey();
    const res = await carol.importPrivateKey(
      keyParams(await sealKey(eleventh, pk, 'HEXADECIMAL', ids), 'newest', c.userId),
    );
    expect(res.addresses[0]?.address).toBe(privateKeyToAccount(pk).address);
  });

  it('stops offering a target once it expires, and never consumes one twice', async () => {
    const store = h.service.store;
    const organizationId = 'a0000000-0000-4000-8000-000000000001';
    const user = 'a0000000-0000-4000-8000-000000000002';
    const t0 = 1_000_000;
    const record = {
      id: 'a0000000-0000-4000-8000-000000000003',
      organizationId,
      userId: user,
      kind: 'WALLET' as const,
      publicKey: '04' + '00'.repeat(64),
      sealedKey: new Uint8Array([1, 2, 3]),
      expiresAtMs: t0 + 1000,
      createdAtMs: t0,
      consumedAtMs: null,
      consumedEnc: null,
    };
    await store.write((tx) => tx.insertImportTarget(record));
    expect((await store.listOpenImportTargets(organizationId, user, t0 + 999)).map((t) => t.id)).toEqual([
      record.id,
    ]);
    expect(await store.listOpenImportTargets(organizationId, user, t0 + 1000)).toEqual([]);
    expect(await store.listOpenImportTargets(organizationId, 'someone else', t0)).toEqual([]);
    expect(
      await store.write((tx) => tx.consumeImportTarget(organizationId, user, record.id, 'e1', t0 + 1000)),
    ).toBe(false);
    expect(
      await store.write((tx) => tx.consumeImportTarget(organizationId, 'other', record.id, 'e1', t0)),
    ).toBe(false);
    expect(await store.write((tx) => tx.consumeImportTarget(organizationId, user, record.id, 'e1', t0))).toBe(
      true,
    );
    expect(await store.write((tx) => tx.consumeImportTarget(organizationId, user, record.id, 'e2', t0))).toBe(
      false,
    );
    const used = await store.getImportTargetConsumedBy(organizationId, 'e1');
    expect(used?.id).toBe(record.id);
    expect(used?.sealedKey).toBeNull();
    expect(await store.getImportTargetConsumedBy(organizationId, 'e2')).toBeUndefined();
    // An expired open target goes at the user's next init.
    await store.write((tx) =>
      tx.insertImportTarget({ ...record, id: 'a0000000-0000-4000-8000-000000000004' }),
    );
    expect(
      await store.write((tx) => tx.pruneImportTargets(organizationId, user, 'PRIVATE_KEY', 9, t0 + 2000)),
    ).toBe(1);
  });
});

describe('logs', () => {
  it('never carry the imported mnemonic or key, even at trace level, also when an import is refused', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
    const h2 = await startEmbedded({ logger });
    try {
      const c = h2.service.credentials;
      const client = new Turnkey({
        apiBaseUrl: h2.baseUrl,
        apiPublicKey: c.apiPublicKey,
        apiPrivateKey: c.apiPrivateKey,
        defaultOrganizationId: c.organizationId,
      }).apiClient();
      const signer = String(
        ((await (await fetch(`${h2.baseUrl}/public/v1/discovery/keys`)).json()) as Record<string, unknown>)
          .signerPublicKey,
      );
      const ids = { userId: c.userId, organizationId: c.organizationId };
      const mnemonic = generateMnemonic(english);
      const pk = generatePrivateKey();
      const walletTarget = (await client.initImportWallet({ userId: c.userId })).importBundle;
      const keyTarget = (await client.initImportPrivateKey({ userId: c.userId })).importBundle;
      const seal = { dangerouslyOverrideSignerPublicKey: signer, ...ids };
      await client.importWallet({
        userId: c.userId,
        walletName: 'logged?',
        encryptedBundle: await encryptWalletToBundle({ mnemonic, importBundle: walletTarget, ...seal }),
        accounts: [ETH_ACCOUNT(0)],
      });
      // Reversed, with a last word off the list: never a valid mnemonic.
      const badWords = [...mnemonic.split(' ').reverse().slice(0, 11), 'qqqq'].join(' ');
      await refusal(
        client.importWallet({
          userId: c.userId,
          walletName: 'refused',
          encryptedBundle: await encryptWalletToBundle({
            mnemonic: badWords,
            importBundle: await client.initImportWallet({ userId: c.userId }).then((r) => r.importBundle),
            ...seal,
          }),
          accounts: [ETH_ACCOUNT(0)],
        }),
      );
      await client.importPrivateKey({
        ...keyParams(
          await encryptPrivateKeyToBundle({
            privateKey: pk,
            keyFormat: 'HEXADECIMAL',
            importBundle: keyTarget,
            ...seal,
          }),
          'logged key?',
          c.userId,
        ),
      });
      const text = lines.join('\n');
      expect(text).toContain('activity completed');
      // Any leak of a sentence carries adjacent word pairs; single words could be ordinary log words.
      for (const sentence of [mnemonic, badWords]) {
        const w = sentence.split(' ');
        for (let i = 0; i + 1 < w.length; i++) expect(text).not.toContain(`${w[i]} ${w[i + 1]}`);
      }
      expect(text.toLowerCase()).not.toContain(pk.slice(2).toLowerCase());
    } finally {
      await h2.close();
    }
  });
});
