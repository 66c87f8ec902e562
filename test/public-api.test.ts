/**
 * The public API over real HTTP against the real embedded service: signing semantics per curve,
 * idempotency, queries, and every kind of bad input — each refused with the right code, a message
 * naming the field, and nothing written.
 */
import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  sign as nodeSign,
  verify as nodeVerify,
} from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schnorr } from '@noble/curves/secp256k1.js';
import { p256 } from '@noble/curves/nist.js';
import { bech32m } from '@scure/base';
import { keccak256, recoverAddress, serializeTransaction, toHex } from 'viem';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';

let h: EmbeddedHarness;
let org: string;

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
});
afterAll(async () => {
  await h.close();
});

const account = (format: string) => {
  const a = h.service.credentials.accounts.find((x) => x.addressFormat === format);
  if (a === undefined) throw new Error(`no ${format} account`);
  return a.address;
};

const activityCount = async () => (await h.service.store.listActivities(org, { limit: 1000 })).length;

const submit = (path: string, type: string, parameters: unknown, ts?: number) =>
  post(h.baseUrl, h.service.credentials, `/public/v1/submit/${path}`, envelope(type, org, parameters, ts));

const unsigned1559 = () =>
  serializeTransaction({
    type: 'eip1559',
    chainId: 1,
    nonce: 1,
    to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    value: 1n,
    gas: 21000n,
    maxFeePerGas: 2n,
    maxPriorityFeePerGas: 1n,
  }).slice(2);

/** Asserts a refusal: HTTP status, gRPC code, a message naming the field, and no activity written. */
async function expectRefused(
  call: () => Promise<{ status: number; json: Record<string, unknown> }>,
  status: number,
  code: number,
  mentions: string,
) {
  const before = await activityCount();
  const res = await call();
  expect(res.status).toBe(status);
  expect(res.json.code).toBe(code);
  expect(String(res.json.message)).toContain(mentions);
  expect(Array.isArray(res.json.details)).toBe(true);
  expect(await activityCount()).toBe(before);
  return res;
}

describe('signing semantics', () => {
  it('returns an activity with the swagger shape and the seed nested record', async () => {
    const res = await submit('sign_transaction', 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', {
      signWith: ethAddressOf(h),
      unsignedTransaction: unsigned1559(),
      type: 'TRANSACTION_TYPE_ETHEREUM',
    });
    expect(res.status).toBe(200);
    const a = res.json.activity as Record<string, any>;
    expect(a.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(a.type).toBe('ACTIVITY_TYPE_SIGN_TRANSACTION_V2');
    expect(a.intent.signTransactionIntentV2.signWith).toBe(ethAddressOf(h));
    expect(a.result.signTransactionResult.signedTransaction).toMatch(/^02[0-9a-f]+$/);
    expect(a.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(a.createdAt).toEqual({
      seconds: expect.stringMatching(/^[0-9]+$/),
      nanos: expect.stringMatching(/^[0-9]+$/),
    });
    expect(a.votes).toHaveLength(1);
    expect(a.votes[0].selection).toBe('VOTE_SELECTION_APPROVED');
    expect(a.failure).toBeNull();
    expect(a.result.activity.id).toBe(a.id);
    expect(a.result.activity.result.signTransactionResult).toEqual(a.result.signTransactionResult);
    expect(a.result.activity.intent).toEqual(a.intent);
  });

  it('signs a NO_OP digest with secp256k1: low-S, 64-char r/s, v 00/01, recovers to the account', async () => {
    const digest = keccak256(toHex('countersign'));
    const res = await submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
      signWith: ethAddressOf(h),
      payload: digest,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    const sig = (res.json.activity as any).result.signRawPayloadResult as { r: string; s: string; v: string };
    expect(sig.r).toMatch(/^[0-9a-f]{64}$/);
    expect(sig.s).toMatch(/^[0-9a-f]{64}$/);
    expect(['00', '01']).toContain(sig.v);
    expect(BigInt(`0x${sig.s}`) <= 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n).toBe(
      true,
    );
    const addr = await recoverAddress({
      hash: digest,
      signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) },
    });
    expect(addr).toBe(ethAddressOf(h));
  });

  it('signs SHA256 and KECCAK256 of the decoded payload, for every payload of sign_raw_payloads', async () => {
    const payloads = ['68656c6c6f', '0x776f726c64'];
    for (const hashFunction of ['HASH_FUNCTION_SHA256', 'HASH_FUNCTION_KECCAK256'] as const) {
      const res = await submit('sign_raw_payloads', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', {
        signWith: ethAddressOf(h),
        payloads,
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction,
      });
      const sigs = (res.json.activity as any).result.signRawPayloadsResult.signatures as {
        r: string;
        s: string;
        v: string;
      }[];
      expect(sigs).toHaveLength(2);
      for (const [i, p] of payloads.entries()) {
        const bytes = Buffer.from(p.replace(/^0x/, ''), 'hex');
        const hash =
          hashFunction === 'HASH_FUNCTION_SHA256'
            ? (`0x${createHash('sha256').update(bytes).digest('hex')}` as const)
            : keccak256(bytes);
        const s = sigs[i] as { r: string; s: string; v: string };
        const addr = await recoverAddress({
          hash,
          signature: { r: `0x${s.r}`, s: `0x${s.s}`, yParity: Number(s.v) },
        });
        expect(addr).toBe(ethAddressOf(h));
      }
    }
  });

  it('signs with ed25519 over the message itself (NOT_APPLICABLE), v 00', async () => {
    const solana = account('ADDRESS_FORMAT_SOLANA');
    const message = Buffer.from('a solana message');
    const res = await submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
      signWith: solana,
      payload: message.toString('hex'),
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
    });
    const sig = (res.json.activity as any).result.signRawPayloadResult as { r: string; s: string; v: string };
    expect(sig.v).toBe('00');
    const accounts = await h.service.store.listWalletAccounts(org, h.service.credentials.walletId, {
      limit: 100,
    });
    const pub = accounts.find((a) => a.address === solana)?.publicKey as string;
    const key = createPublicKey({
      key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(pub, 'hex')]),
      format: 'der',
      type: 'spki',
    });
    expect(nodeVerify(null, message, key, Buffer.from(sig.r + sig.s, 'hex'))).toBe(true);
  });

  it('signs BIP-340 Schnorr over the taproot-tweaked key for a P2TR address', async () => {
    const p2tr = account('ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR');
    const digest = createHash('sha256').update('taproot sighash').digest('hex');
    const res = await submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
      signWith: p2tr,
      payload: digest,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    const sig = (res.json.activity as any).result.signRawPayloadResult as { r: string; s: string; v: string };
    const outputKey = Uint8Array.from(
      bech32m.fromWords(bech32m.decode(p2tr as `${string}1${string}`).words.slice(1)),
    );
    expect(schnorr.verify(Buffer.from(sig.r + sig.s, 'hex'), Buffer.from(digest, 'hex'), outputKey)).toBe(
      true,
    );
  });

  it('creates P-256 private keys whose signatures verify, and reads them back', async () => {
    const res = await submit('create_private_keys', 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2', {
      privateKeys: [
        {
          privateKeyName: 'p256 key',
          curve: 'CURVE_P256',
          privateKeyTags: [],
          addressFormats: ['ADDRESS_FORMAT_COMPRESSED'],
        },
      ],
    });
    expect(res.status).toBe(200);
    const created = (res.json.activity as any).result.createPrivateKeysResultV2.privateKeys[0];
    const digest = createHash('sha256').update('p256').digest('hex');
    const signed = await submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
      signWith: created.privateKeyId,
      payload: digest,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    const sig = (signed.json.activity as any).result.signRawPayloadResult;
    const q = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/get_private_key',
      JSON.stringify({ organizationId: org, privateKeyId: created.privateKeyId }),
    );
    expect(q.status).toBe(200);
    const pk = q.json.privateKey as any;
    expect(pk.privateKeyName).toBe('p256 key');
    expect(pk.addresses[0].address).toBe(pk.publicKey);
    expect(
      p256.verify(
        Buffer.from(sig.r + sig.s, 'hex'),
        Buffer.from(digest, 'hex'),
        Buffer.from(pk.publicKey, 'hex'),
        { prehash: false },
      ),
    ).toBe(true);
  });
});

describe('idempotency', () => {
  it('the same body returns the same activity and never signs twice', async () => {
    const body = envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', org, {
      signWith: ethAddressOf(h),
      payload: keccak256(toHex('once')),
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    const before = await activityCount();
    const [a, b] = await Promise.all([
      post(h.baseUrl, h.service.credentials, '/public/v1/submit/sign_raw_payload', body),
      post(h.baseUrl, h.service.credentials, '/public/v1/submit/sign_raw_payload', body),
    ]);
    const c = await post(h.baseUrl, h.service.credentials, '/public/v1/submit/sign_raw_payload', body);
    const ids = [a, b, c].map((r) => (r.json.activity as any).id);
    expect(new Set(ids).size).toBe(1);
    expect((c.json.activity as any).result).toEqual((a.json.activity as any).result);
    expect(await activityCount()).toBe(before + 1);
  });
});

describe('queries', () => {
  it('lists wallets and accounts and finds an account by address and by path', async () => {
    const c = h.service.credentials;
    const q = (name: string, body: Record<string, unknown>) =>
      post(h.baseUrl, c, `/public/v1/query/${name}`, JSON.stringify({ organizationId: org, ...body }));
    const wallets = await q('list_wallets', {});
    expect((wallets.json.wallets as any[]).map((w) => w.walletId)).toContain(c.walletId);
    const accounts = await q('list_wallet_accounts', {
      walletId: c.walletId,
      paginationOptions: { limit: '100' },
    });
    expect((accounts.json.accounts as any[]).map((a) => a.address).sort()).toEqual(
      c.accounts.map((a) => a.address).sort(),
    );
    const byAddr = await q('get_wallet_account', {
      walletId: c.walletId,
      address: ethAddressOf(h).toLowerCase(),
    });
    expect((byAddr.json.account as any).path).toBe("m/44'/60'/0'/0/0");
    const byPath = await q('get_wallet_account', { walletId: c.walletId, path: "m/44'/501'/0'/0'" });
    expect((byPath.json.account as any).addressFormat).toBe('ADDRESS_FORMAT_SOLANA');
    const who = await q('whoami', {});
    expect(who.json).toEqual({
      organizationId: org,
      organizationName: 'Root Organization',
      userId: c.userId,
      username: 'root',
    });
  });

  it('creates wallets and accounts whose addresses the queries return', async () => {
    const res = await submit('create_wallet', 'ACTIVITY_TYPE_CREATE_WALLET', {
      walletName: 'second',
      accounts: [
        {
          curve: 'CURVE_SECP256K1',
          pathFormat: 'PATH_FORMAT_BIP32',
          path: "m/44'/60'/0'/0/0",
          addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
        },
      ],
    });
    const walletId = (res.json.activity as any).result.createWalletResult.walletId as string;
    const more = await submit('create_wallet_accounts', 'ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS', {
      walletId,
      accounts: [
        {
          curve: 'CURVE_SECP256K1',
          pathFormat: 'PATH_FORMAT_BIP32',
          path: "m/44'/60'/0'/0/1",
          addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
        },
      ],
    });
    const added = (more.json.activity as any).result.createWalletAccountsResult.addresses as string[];
    expect(added).toHaveLength(1);
    const list = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/query/list_wallet_accounts',
      JSON.stringify({ organizationId: org, walletId }),
    );
    expect((list.json.accounts as any[]).map((a) => a.address)).toContain(added[0]);
  });
});

describe('bad input is refused with the field named and nothing written', () => {
  const signTx = (unsignedTransaction: string) =>
    submit('sign_transaction', 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', {
      signWith: ethAddressOf(h),
      unsignedTransaction,
      type: 'TRANSACTION_TYPE_ETHEREUM',
    });

  it('malformed RLP', () => expectRefused(() => signTx('02c3c2'), 400, 3, 'parameters.unsignedTransaction'));
  it('trailing bytes', () =>
    expectRefused(() => signTx(`${unsigned1559()}00`), 400, 3, 'parameters.unsignedTransaction'));
  it('unknown transaction type', () =>
    expectRefused(() => signTx(`05${unsigned1559().slice(2)}`), 400, 3, 'parameters.unsignedTransaction'));
  it('a transaction type outside the enum', () =>
    expectRefused(
      () =>
        submit('sign_transaction', 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', {
          signWith: ethAddressOf(h),
          unsignedTransaction: unsigned1559(),
          type: 'TRANSACTION_TYPE_DOGE',
        }),
      400,
      3,
      'parameters.type',
    ));
  it('unknown sign_with', () =>
    expectRefused(
      () =>
        submit('sign_transaction', 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', {
          signWith: '0x000000000000000000000000000000000000dEaD',
          unsignedTransaction: unsigned1559(),
          type: 'TRANSACTION_TYPE_ETHEREUM',
        }),
      404,
      5,
      'Could not find any resource to sign with',
    ));
  it('stamp from an unknown key', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = privateKey.export({ format: 'jwk' });
    const y = Buffer.from(jwk.y as string, 'base64url');
    const keys = {
      apiPublicKey:
        ((y[31] as number) & 1 ? '03' : '02') + Buffer.from(jwk.x as string, 'base64url').toString('hex'),
      apiPrivateKey: Buffer.from(jwk.d as string, 'base64url').toString('hex'),
    };
    const body = envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', org, {
      signWith: ethAddressOf(h),
      payloads: ['00'.repeat(32)],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    return expectRefused(
      () => post(h.baseUrl, h.service.credentials, '/public/v1/submit/sign_raw_payloads', body, { keys }),
      401,
      16,
      'could not find public key in organization or its parent organization',
    );
  });
  it('stamp over a different body', () => {
    const params = {
      signWith: ethAddressOf(h),
      payloads: ['11'.repeat(32)],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    };
    const body = envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', org, params);
    const other = envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', org, {
      ...params,
      payloads: ['22'.repeat(32)],
    });
    return expectRefused(
      () =>
        post(h.baseUrl, h.service.credentials, '/public/v1/submit/sign_raw_payloads', body, {
          stampBody: other,
        }),
      401,
      16,
      'could not verify',
    );
  });
  it('no stamp', () =>
    expectRefused(
      () =>
        post(
          h.baseUrl,
          h.service.credentials,
          '/public/v1/submit/sign_raw_payloads',
          envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', org, {}),
          { noStamp: true },
        ),
      401,
      16,
      'X-Stamp',
    ));
  const raw32 = {
    signWith: '',
    payload: '33'.repeat(32),
    encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
    hashFunction: 'HASH_FUNCTION_NO_OP',
  };
  it('stale timestampMs', () =>
    expectRefused(
      () =>
        submit(
          'sign_raw_payload',
          'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
          { ...raw32, signWith: ethAddressOf(h) },
          Date.now() - 2 * 86_400_000,
        ),
      400,
      3,
      'timestampMs',
    ));
  it('future timestampMs', () =>
    expectRefused(
      () =>
        submit(
          'sign_raw_payload',
          'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
          { ...raw32, signWith: ethAddressOf(h) },
          Date.now() + 3_600_000,
        ),
      400,
      3,
      'timestampMs',
    ));
  it('NO_OP payload that is not 32 bytes', () =>
    expectRefused(
      () =>
        submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
          ...raw32,
          signWith: ethAddressOf(h),
          payload: '33'.repeat(31),
        }),
      400,
      3,
      'parameters.payload',
    ));
  it('ed25519 key with KECCAK256', () =>
    expectRefused(
      () =>
        submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
          ...raw32,
          signWith: account('ADDRESS_FORMAT_SOLANA'),
          hashFunction: 'HASH_FUNCTION_KECCAK256',
        }),
      400,
      3,
      'parameters.hashFunction',
    ));
  it('secp256k1 key with NOT_APPLICABLE', () =>
    expectRefused(
      () =>
        submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
          ...raw32,
          signWith: ethAddressOf(h),
          hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
        }),
      400,
      3,
      'parameters.hashFunction',
    ));
  it('EIP-712 JSON without EIP712Domain', () =>
    expectRefused(
      () =>
        submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', {
          signWith: ethAddressOf(h),
          payload: JSON.stringify({
            types: { Mail: [{ name: 'contents', type: 'string' }] },
            primaryType: 'Mail',
            domain: {},
            message: { contents: 'x' },
          }),
          encoding: 'PAYLOAD_ENCODING_EIP712',
          hashFunction: 'HASH_FUNCTION_NO_OP',
        }),
      400,
      3,
      'EIP712Domain',
    ));
  it('missing required parameter', () =>
    expectRefused(
      () => submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', { signWith: ethAddressOf(h) }),
      400,
      3,
      'parameters.',
    ));
  it('a type that does not belong to the path', () =>
    expectRefused(() => submit('sign_raw_payload', 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', {}), 400, 3, 'type'));
  it('a malformed organization id', () =>
    expectRefused(
      () =>
        post(
          h.baseUrl,
          h.service.credentials,
          '/public/v1/submit/sign_raw_payload',
          envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', 'not-a-uuid', raw32),
        ),
      400,
      3,
      'organizationId',
    ));
  it('an unknown organization', () =>
    expectRefused(
      () =>
        post(
          h.baseUrl,
          h.service.credentials,
          '/public/v1/submit/sign_raw_payload',
          envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', '00000000-0000-4000-8000-000000000000', raw32),
        ),
      404,
      5,
      'organizationId',
    ));
  it('a body that is not JSON', () =>
    expectRefused(
      () => post(h.baseUrl, h.service.credentials, '/public/v1/submit/sign_raw_payload', '{"type":'),
      400,
      3,
      'JSON',
    ));
  it('a duplicate wallet name leaves no wallet behind', async () => {
    const params = { walletName: 'Default Wallet', accounts: [] };
    const walletsBefore = (await h.service.store.listWallets(org)).length;
    await expectRefused(
      () => submit('create_wallet', 'ACTIVITY_TYPE_CREATE_WALLET', params),
      400,
      3,
      'parameters.walletName',
    );
    expect((await h.service.store.listWallets(org)).length).toBe(walletsBefore);
  });
  it('an address format the curve cannot give', () =>
    expectRefused(
      () =>
        submit('create_private_keys', 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2', {
          privateKeys: [
            {
              privateKeyName: 'bad',
              curve: 'CURVE_ED25519',
              privateKeyTags: [],
              addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
            },
          ],
        }),
      400,
      3,
      'parameters.privateKeys.0.addressFormats.0',
    ));
});

describe('X-Stamp-Webauthn', () => {
  it('accepts a passkey assertion over the body and refuses one over another body', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const y = Buffer.from(jwk.y as string, 'base64url');
    const compressed =
      ((y[31] as number) & 1 ? '03' : '02') + Buffer.from(jwk.x as string, 'base64url').toString('hex');
    const credentialId = Buffer.from('credential-1').toString('base64url');
    // Registration activities arrive with a later issue; the authenticator is inserted directly.
    await h.service.store.write((tx) =>
      tx.insertAuthenticator({
        id: '5f1b7c1e-0000-4000-8000-000000000001',
        userId: h.service.credentials.userId,
        organizationId: org,
        name: 'passkey',
        credentialId,
        publicKey: compressed,
        createdAtMs: Date.now(),
      }),
    );
    const stampFor = (signedBody: string) => {
      const challenge = Buffer.from(createHash('sha256').update(signedBody).digest('hex')).toString(
        'base64url',
      );
      const clientDataJson = Buffer.from(
        JSON.stringify({ type: 'webauthn.get', challenge, origin: 'http://localhost' }),
      );
      const authenticatorData = Buffer.concat([
        createHash('sha256').update('localhost').digest(),
        Buffer.from([0x05, 0, 0, 0, 1]),
      ]);
      const signature = nodeSign(
        'sha256',
        Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJson).digest()]),
        privateKey,
      );
      return JSON.stringify({
        authenticatorData: authenticatorData.toString('base64url'),
        clientDataJson: clientDataJson.toString('base64url'),
        credentialId,
        signature: signature.toString('base64url'),
      });
    };
    const body = JSON.stringify({ organizationId: org });
    const ok = await fetch(`${h.baseUrl}/public/v1/query/whoami`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'X-Stamp-Webauthn': stampFor(body) },
      body,
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).userId).toBe(h.service.credentials.userId);
    const bad = await fetch(`${h.baseUrl}/public/v1/query/whoami`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'X-Stamp-Webauthn': stampFor(JSON.stringify({ organizationId: org, x: 1 })),
      },
      body,
    });
    expect(bad.status).toBe(401);
  });
});
