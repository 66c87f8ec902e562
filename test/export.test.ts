/**
 * Export bundles and wallet deletion over real HTTP against the real embedded service, driven by
 * Turnkey's unmodified @turnkey/http client; bundles are opened by @turnkey/crypto's own
 * decryptExportBundle with our published signer key as the override.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptExportBundle, generateP256KeyPair } from '@turnkey/crypto';
import { p256 } from '@noble/curves/nist.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { base58 } from '@scure/base';
import { privateKeyToAccount } from 'viem/accounts';
import { deriveAddress, derivePrivateKey, mnemonicToSeed, publicKeyOf } from '../src/service/keys/index.js';
import { bytesToHex } from '../src/shared/encoding.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';

let h: EmbeddedHarness;
let org: string;
let client: TurnkeyClient;
let signerPublicKey: string;

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  const { apiPublicKey, apiPrivateKey } = h.service.credentials;
  client = new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper({ apiPublicKey, apiPrivateKey }));
  const res = await post(
    h.baseUrl,
    h.service.credentials,
    '/public/v1/query/get_service_public_keys',
    JSON.stringify({ organizationId: org }),
  );
  expect(res.status).toBe(200);
  signerPublicKey = String(res.json.signerPublicKey);
});
afterAll(async () => {
  await h.close();
});

const ts = () => String(Date.now());

const accountAddress = (format: string) => {
  const a = h.service.credentials.accounts.find((x) => x.addressFormat === format);
  if (a === undefined) throw new Error(`no ${format} account`);
  return a.address;
};

const activityCount = async () => (await h.service.store.listActivities(org, { limit: 1000 })).length;

const submit = (path: string, type: string, parameters: unknown) =>
  post(h.baseUrl, h.service.credentials, `/public/v1/submit/${path}`, envelope(type, org, parameters));

/** A refusal over raw HTTP: status, a message naming the field, and no activity written. */
async function expectRefused(path: string, type: string, parameters: unknown, status: number, field: string) {
  const before = await activityCount();
  const res = await submit(path, type, parameters);
  expect(res.status).toBe(status);
  expect(String(res.json.message)).toContain(field);
  expect(await activityCount()).toBe(before);
  return res;
}

async function refusal(p: Promise<unknown>): Promise<TurnkeyRequestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TurnkeyRequestError) return e;
    throw e;
  }
  throw new Error('expected the request to be refused');
}

function decrypt(
  exportBundle: string,
  embeddedKey: string,
  opts: { keyFormat?: 'SOLANA' | 'HEXADECIMAL'; returnMnemonic?: boolean } = {},
) {
  return decryptExportBundle({
    exportBundle,
    embeddedKey,
    organizationId: org,
    dangerouslyOverrideSignerPublicKey: signerPublicKey,
    returnMnemonic: opts.returnMnemonic ?? false,
    ...(opts.keyFormat === undefined ? {} : { keyFormat: opts.keyFormat }),
  });
}

async function exportAccount(address: string, target: { publicKeyUncompressed: string }) {
  const res = await client.exportWalletAccount({
    type: 'ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT',
    timestampMs: ts(),
    organizationId: org,
    parameters: { address, targetPublicKey: target.publicKeyUncompressed },
  });
  expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  const result = res.activity.result.exportWalletAccountResult;
  expect(result?.address).toBe(address);
  return String(result?.exportBundle);
}

async function createWallet(name: string) {
  const res = await client.createWallet({
    type: 'ACTIVITY_TYPE_CREATE_WALLET',
    timestampMs: ts(),
    organizationId: org,
    parameters: {
      walletName: name,
      accounts: [
        {
          curve: 'CURVE_SECP256K1',
          pathFormat: 'PATH_FORMAT_BIP32',
          path: "m/44'/60'/0'/0/0",
          addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
        },
      ],
    },
  });
  const r = res.activity.result.createWalletResult;
  return { walletId: String(r?.walletId), address: String(r?.addresses[0]) };
}

const listWalletIds = async () =>
  (await client.getWallets({ organizationId: org })).wallets.map((w) => w.walletId).sort();

describe('the service public key', () => {
  it('is published by get_service_public_keys and by the embedded service, uncompressed P-256', () => {
    expect(signerPublicKey).toMatch(/^04[0-9a-f]{128}$/);
    expect(signerPublicKey).toBe(h.service.signerPublicKey);
  });

  it('is loaded, not re-created, when the service reopens its data dir', async () => {
    const first = await startEmbedded();
    const key = first.service.signerPublicKey;
    expect(key).not.toBe(signerPublicKey);
    await first.close({ keepDir: true });
    const again = await startEmbedded({ dataDir: first.dataDir });
    try {
      expect(again.service.signerPublicKey).toBe(key);
    } finally {
      await again.close();
    }
  });
});

describe('export_wallet_account', () => {
  it('exports the default Ethereum account: the decrypted key signs for its address', async () => {
    const target = generateP256KeyPair();
    const address = ethAddressOf(h);
    const bundle = await exportAccount(address, target);
    const parsed = JSON.parse(bundle) as Record<string, string>;
    expect(parsed.version).toBe('v1.0.0');
    expect(parsed.enclaveQuorumPublic).toBe(signerPublicKey);
    const privateKey = await decrypt(bundle, target.privateKey, { keyFormat: 'HEXADECIMAL' });
    expect(privateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(privateKeyToAccount(`0x${privateKey}`).address).toBe(address);
    const wallets = await client.getWallets({ organizationId: org });
    expect(wallets.wallets.find((w) => w.walletId === h.service.credentials.walletId)?.exported).toBe(true);
  });

  it('exports the Solana (ed25519) account in the SOLANA key format', async () => {
    const target = generateP256KeyPair();
    const address = accountAddress('ADDRESS_FORMAT_SOLANA');
    const bundle = await exportAccount(address, target);
    const solanaKey = base58.decode(await decrypt(bundle, target.privateKey, { keyFormat: 'SOLANA' }));
    expect(solanaKey).toHaveLength(64);
    expect(base58.encode(solanaKey.subarray(32))).toBe(address);
    const hexKey = await decrypt(bundle, target.privateKey, { keyFormat: 'HEXADECIMAL' });
    expect(bytesToHex(solanaKey.subarray(0, 32))).toBe(hexKey);
  });

  it('yields a bundle that fails verification once tampered with, or when pinned to another signer', async () => {
    const target = generateP256KeyPair();
    const bundle = await exportAccount(ethAddressOf(h), target);
    const parsed = JSON.parse(bundle) as Record<string, string>;
    const data = Buffer.from(String(parsed.data), 'hex').toString('utf8');
    const forgedData = Buffer.from(
      data.replace(org, '00000000-0000-4000-8000-000000000000'),
      'utf8',
    ).toString('hex');
    const flipped = (hex: string, at: number) =>
      hex.slice(0, at) + (parseInt(hex[at] as string, 16) ^ 1).toString(16) + hex.slice(at + 1);
    const tampered = [
      { ...parsed, data: forgedData },
      { ...parsed, dataSignature: flipped(String(parsed.dataSignature), 20) },
      { ...parsed, data: flipped(String(parsed.data), 40) },
    ];
    for (const t of tampered) await expect(decrypt(JSON.stringify(t), target.privateKey)).rejects.toThrow();
    // Turnkey's production key is the default pin: our bundles do not verify against it.
    await expect(
      decryptExportBundle({
        exportBundle: bundle,
        embeddedKey: target.privateKey,
        organizationId: org,
        returnMnemonic: false,
      }),
    ).rejects.toThrow();
    // Another receiver key cannot open it.
    await expect(decrypt(bundle, generateP256KeyPair().privateKey)).rejects.toThrow();
  });

  it('refuses a bad targetPublicKey or an unknown address, naming the field, changing nothing', async () => {
    const address = ethAddressOf(h);
    const compressed = generateP256KeyPair().publicKey;
    const type = 'ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT';
    for (const targetPublicKey of [compressed, 'zz', '04' + '11'.repeat(64), '']) {
      await expectRefused(
        'export_wallet_account',
        type,
        { address, targetPublicKey },
        400,
        'parameters.targetPublicKey',
      );
    }
    await expectRefused('export_wallet_account', type, { address }, 400, 'parameters.targetPublicKey');
    const target = generateP256KeyPair().publicKeyUncompressed;
    await expectRefused(
      'export_wallet_account',
      type,
      { address: '0x000000000000000000000000000000000000dEaD', targetPublicKey: target },
      404,
      'parameters.address',
    );
    const e = await refusal(
      client.exportWalletAccount({
        type,
        timestampMs: ts(),
        organizationId: org,
        parameters: { address, targetPublicKey: compressed },
      }),
    );
    expect(e.code).toBe(3);
  });
});

describe('export_wallet', () => {
  it('yields the mnemonic that derives the default wallet’s Ethereum address', async () => {
    const target = generateP256KeyPair();
    const res = await client.exportWallet({
      type: 'ACTIVITY_TYPE_EXPORT_WALLET',
      timestampMs: ts(),
      organizationId: org,
      parameters: {
        walletId: h.service.credentials.walletId,
        targetPublicKey: target.publicKeyUncompressed,
        language: 'MNEMONIC_LANGUAGE_ENGLISH',
      },
    });
    const result = res.activity.result.exportWalletResult;
    expect(result?.walletId).toBe(h.service.credentials.walletId);
    const mnemonic = await decrypt(String(result?.exportBundle), target.privateKey, { returnMnemonic: true });
    expect(mnemonic.split(' ')).toHaveLength(12);
    const seed = mnemonicToSeed(mnemonic);
    const priv = derivePrivateKey(seed, 'CURVE_SECP256K1', "m/44'/60'/0'/0/0", 'path');
    const address = deriveAddress(
      'CURVE_SECP256K1',
      publicKeyOf('CURVE_SECP256K1', priv),
      'ADDRESS_FORMAT_ETHEREUM',
      'f',
    );
    expect(address).toBe(ethAddressOf(h));
  });

  it('refuses an unknown wallet, a malformed id, and a language it does not hold', async () => {
    const targetPublicKey = generateP256KeyPair().publicKeyUncompressed;
    const type = 'ACTIVITY_TYPE_EXPORT_WALLET';
    await expectRefused(
      'export_wallet',
      type,
      { walletId: '00000000-0000-4000-8000-000000000000', targetPublicKey },
      404,
      'parameters.walletId',
    );
    await expectRefused(
      'export_wallet',
      type,
      { walletId: 'nope', targetPublicKey },
      400,
      'parameters.walletId',
    );
    await expectRefused(
      'export_wallet',
      type,
      { walletId: h.service.credentials.walletId, targetPublicKey, language: 'MNEMONIC_LANGUAGE_FRENCH' },
      400,
      'parameters.language',
    );
  });
});

describe('export_private_key', () => {
  async function createKey(
    name: string,
    curve: 'CURVE_P256' | 'CURVE_SECP256K1',
    format: 'ADDRESS_FORMAT_COMPRESSED' | 'ADDRESS_FORMAT_ETHEREUM',
  ) {
    const res = await client.createPrivateKeys({
      type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2',
      timestampMs: ts(),
      organizationId: org,
      parameters: {
        privateKeys: [{ privateKeyName: name, curve, privateKeyTags: [], addressFormats: [format] }],
      },
    });
    const k = res.activity.result.createPrivateKeysResultV2?.privateKeys[0];
    return { privateKeyId: String(k?.privateKeyId), address: String(k?.addresses?.[0]?.address) };
  }

  async function exportKey(privateKeyId: string) {
    const target = generateP256KeyPair();
    const res = await client.exportPrivateKey({
      type: 'ACTIVITY_TYPE_EXPORT_PRIVATE_KEY',
      timestampMs: ts(),
      organizationId: org,
      parameters: { privateKeyId, targetPublicKey: target.publicKeyUncompressed },
    });
    const result = res.activity.result.exportPrivateKeyResult;
    expect(result?.privateKeyId).toBe(privateKeyId);
    return decrypt(String(result?.exportBundle), target.privateKey, { keyFormat: 'HEXADECIMAL' });
  }

  it('exports a P-256 private key whose public key is the recorded one, and marks it exported', async () => {
    const { privateKeyId, address } = await createKey(
      'export p256',
      'CURVE_P256',
      'ADDRESS_FORMAT_COMPRESSED',
    );
    const priv = await exportKey(privateKeyId);
    expect(bytesToHex(p256.getPublicKey(Buffer.from(priv, 'hex'), true))).toBe(address.toLowerCase());
    const got = await client.getPrivateKey({ organizationId: org, privateKeyId });
    expect(got.privateKey.exported).toBe(true);
  });

  it('exports a secp256k1 private key that signs for its Ethereum address', async () => {
    const { privateKeyId, address } = await createKey(
      'export k1',
      'CURVE_SECP256K1',
      'ADDRESS_FORMAT_ETHEREUM',
    );
    const priv = await exportKey(privateKeyId);
    expect(secp256k1.utils.isValidSecretKey(Buffer.from(priv, 'hex'))).toBe(true);
    expect(privateKeyToAccount(`0x${priv}`).address).toBe(address);
  });

  it('refuses an unknown private key id', async () => {
    await expectRefused(
      'export_private_key',
      'ACTIVITY_TYPE_EXPORT_PRIVATE_KEY',
      {
        privateKeyId: '00000000-0000-4000-8000-000000000001',
        targetPublicKey: generateP256KeyPair().publicKeyUncompressed,
      },
      404,
      'parameters.privateKeyId',
    );
  });
});

describe('delete_wallets', () => {
  const type = 'ACTIVITY_TYPE_DELETE_WALLETS';

  const signWith = (address: string) =>
    submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
      signWith: address,
      payload: 'ab'.repeat(32),
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });

  it('refuses a wallet that was never exported, deleting nothing (not even the others named)', async () => {
    const a = await createWallet('del refused a');
    const b = await createWallet('del refused b');
    await client.exportWallet({
      type: 'ACTIVITY_TYPE_EXPORT_WALLET',
      timestampMs: ts(),
      organizationId: org,
      parameters: { walletId: a.walletId, targetPublicKey: generateP256KeyPair().publicKeyUncompressed },
    });
    const before = await listWalletIds();
    const res = await expectRefused(
      'delete_wallets',
      type,
      { walletIds: [a.walletId, b.walletId] },
      400,
      'parameters.walletIds.1',
    );
    expect(String(res.json.message)).toContain('wallet account has not been exported');
    const e = await refusal(
      client.deleteWallets({
        type,
        timestampMs: ts(),
        organizationId: org,
        parameters: { walletIds: [b.walletId] },
      }),
    );
    expect(e.code).toBe(3);
    expect(await listWalletIds()).toEqual(before);
    expect((await signWith(b.address)).status).toBe(200);
  });

  it('deletes an exported wallet with its accounts; signing with its address is then 404', async () => {
    const w = await createWallet('del exported');
    await exportAccount(w.address, generateP256KeyPair());
    expect((await signWith(w.address)).status).toBe(200);
    const res = await client.deleteWallets({
      type,
      timestampMs: ts(),
      organizationId: org,
      parameters: { walletIds: [w.walletId] },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(res.activity.result.deleteWalletsResult?.walletIds).toEqual([w.walletId]);
    expect(await listWalletIds()).not.toContain(w.walletId);
    expect(await h.service.store.listWalletAccounts(org, w.walletId, { limit: 10 })).toEqual([]);
    const sign = await signWith(w.address);
    expect(sign.status).toBe(404);
  });

  it('deletes an unexported wallet when deleteWithoutExport is true', async () => {
    const w = await createWallet('del without export');
    await client.deleteWallets({
      type,
      timestampMs: ts(),
      organizationId: org,
      parameters: { walletIds: [w.walletId], deleteWithoutExport: true },
    });
    expect(await listWalletIds()).not.toContain(w.walletId);
    expect((await signWith(w.address)).status).toBe(404);
  });

  it('refuses unknown, malformed, duplicate or missing ids, naming the index, deleting nothing', async () => {
    const w = await createWallet('del bad input');
    const before = await listWalletIds();
    const unknown = '00000000-0000-4000-8000-000000000002';
    await expectRefused(
      'delete_wallets',
      type,
      { walletIds: [w.walletId, unknown], deleteWithoutExport: true },
      404,
      'parameters.walletIds.1',
    );
    await expectRefused(
      'delete_wallets',
      type,
      { walletIds: ['x'], deleteWithoutExport: true },
      400,
      'parameters.walletIds.0',
    );
    await expectRefused(
      'delete_wallets',
      type,
      { walletIds: [w.walletId, w.walletId], deleteWithoutExport: true },
      400,
      'parameters.walletIds.1',
    );
    await expectRefused('delete_wallets', type, { walletIds: [] }, 400, 'parameters.walletIds');
    await expectRefused('delete_wallets', type, {}, 400, 'parameters.walletIds');
    await expectRefused(
      'delete_wallets',
      type,
      { walletIds: [w.walletId], deleteWithoutExport: 'yes' },
      400,
      'parameters.deleteWithoutExport',
    );
    expect(await listWalletIds()).toEqual(before);
  });
});
