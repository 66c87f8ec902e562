import { createECDH, createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import * as http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { pino } from 'pino';
import {
  hashMessage,
  hashTypedData,
  keccak256,
  parseTransaction,
  serializeTransaction,
  toHex,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { hashAuthorization as viemHashAuthorization } from 'viem/utils';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ANVIL_KEY_0,
  createFakeSigningService,
  FAKE_PRIVATE_KEY_ID,
  type FakeSigningService,
} from '../../test/helpers/fake-signing-service.js';
import { PublicApiClient } from '../client/client.js';
import { inProcessTransport } from '../client/in-process-transport.js';
import { ApiKeyStamper } from '../client/stamper.js';
import type { Transport, TransportRequest, TransportResponse } from '../client/transport.js';
import { CountersignError } from '../shared/errors.js';
import { ERROR_CODE_TRAILER } from './grpc-status.js';
import { LOADER_OPTIONS, loadSignerProto } from './proto.js';
import { startDaemon, type RunningDaemon } from './start-daemon.js';

const ORG = '0195f0a4-2b1c-7d3e-9f00-000000000001';
const account = privateKeyToAccount(ANVIL_KEY_0.privateKey);

/** The transport under test: the fake service behind an optional response tamperer. */
type Tamper = (path: string, json: Record<string, unknown>) => void;
let tamper: Tamper | undefined;
let failWith: Error | undefined;
let delayMs = 0;
let queries = 0;

function tamperingTransport(inner: Transport): Transport {
  return {
    async send(req: TransportRequest): Promise<TransportResponse> {
      if (failWith !== undefined) throw failWith;
      if (req.path.startsWith('/public/v1/query/')) queries++;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      const res = await inner.send(req);
      if (tamper === undefined) return res;
      const json = JSON.parse(new TextDecoder().decode(res.body)) as Record<string, unknown>;
      tamper(req.path, json);
      return { status: res.status, body: new TextEncoder().encode(JSON.stringify(json)) };
    },
    close: () => inner.close(),
  };
}

function flipHexByte(hex: string, byteIndex: number): string {
  const i = byteIndex * 2;
  const flipped = (Number.parseInt(hex.slice(i, i + 2), 16) ^ 0x01).toString(16).padStart(2, '0');
  return hex.slice(0, i) + flipped + hex.slice(i + 2);
}

interface ActivityJson {
  result: {
    signTransactionResult?: { signedTransaction: string };
    signRawPayloadsResult?: { signatures: { r: string; s: string; v: string }[] };
  };
}

let fake: FakeSigningService;
let daemon: RunningDaemon;
let dir: string;
let signer: grpc.Client;

type Unary = (req: unknown, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;
type UnaryWithMetadata = (
  req: unknown,
  md: grpc.Metadata,
  cb: (err: grpc.ServiceError | null, res: unknown) => void,
) => void;

function call<T>(method: 'SignTransaction' | 'SignRawPayloads' | 'SignMessage', req: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const fn = (signer as unknown as Record<string, Unary>)[method]!.bind(signer);
    fn(req, (err, res) => (err ? reject(err) : resolve(res as T)));
  });
}

async function callError(method: 'SignTransaction' | 'SignRawPayloads' | 'SignMessage', req: unknown) {
  const err = await call(method, req).then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as grpc.ServiceError,
  );
  return { code: err.code, details: err.details, errorCode: err.metadata.get(ERROR_CODE_TRAILER)[0] };
}

interface SignTransactionResponse {
  signedTransaction: Buffer;
  transactionHash: string;
  signatures: { r: Buffer; s: Buffer; v: number }[];
  signer: string;
  activityId: string;
  state: string;
  fingerprint: string;
  mode: string;
}

const eip1559 = {
  chainId: 31337,
  type: 'eip1559',
  nonce: 7,
  to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  value: 10n ** 15n,
  gas: 21000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000n,
} as const;

function unsignedBytes(tx: Parameters<typeof serializeTransaction>[0]): Buffer {
  return Buffer.from(serializeTransaction(tx).slice(2), 'hex');
}

beforeAll(async () => {
  fake = createFakeSigningService({ organizationId: ORG });
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const client = new PublicApiClient({
    transport: tamperingTransport(inProcessTransport(fake.handler)),
    stamper: new ApiKeyStamper({
      apiPublicKey: ecdh.getPublicKey('hex', 'compressed'),
      apiPrivateKey: ecdh.getPrivateKey().toString('hex').padStart(64, '0'),
    }),
    organizationId: ORG,
  });
  dir = mkdtempSync(join(tmpdir(), 'countersign-daemon-'));
  daemon = await startDaemon({
    listen: '127.0.0.1:0',
    client,
    defaultOrganizationId: ORG,
    idempotencyDbPath: join(dir, 'idempotency.sqlite'),
    logger: pino({ level: 'silent' }),
  });
  const def = protoLoader.loadSync(loadSignerProto().protoFile, LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    countersign: { v1: { Signer: grpc.ServiceClientConstructor } };
  };
  signer = new pkg.countersign.v1.Signer(daemon.address, grpc.credentials.createInsecure());
});

afterEach(() => {
  tamper = undefined;
  failWith = undefined;
  delayMs = 0;
  fake.setStatus('ACTIVITY_STATUS_COMPLETED');
  fake.setError(undefined);
});

afterAll(async () => {
  signer?.close();
  await daemon?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SignTransaction', () => {
  it('signs unsigned bytes through sign_transaction and returns what viem signs locally', async () => {
    const res = await call<SignTransactionResponse>('SignTransaction', {
      signWith: ANVIL_KEY_0.address,
      mode: 'SIGNING_MODE_SIGN_TRANSACTION',
      ethereum: { unsigned: unsignedBytes(eip1559) },
    });
    const expected = await account.signTransaction(eip1559);
    expect(toHex(res.signedTransaction)).toBe(expected);
    expect(res.transactionHash).toBe(keccak256(expected));
    expect(res.signer).toBe(ANVIL_KEY_0.address);
    expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
    expect(res.mode).toBe('SIGNING_MODE_SIGN_TRANSACTION');
    expect(res.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(res.activityId).not.toBe('');
    const parsed = parseTransaction(expected);
    expect(res.signatures).toHaveLength(1);
    expect(toHex(res.signatures[0]!.r)).toBe(parsed.r);
    expect(res.signatures[0]!.v).toBe(parsed.yParity);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/public/v1/submit/sign_transaction');
    const body = JSON.parse(new TextDecoder().decode(sent.body)) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['type', 'timestampMs', 'organizationId', 'parameters']);
    expect(body['type']).toBe('ACTIVITY_TYPE_SIGN_TRANSACTION_V2');
    expect(body['parameters']).toEqual({
      signWith: ANVIL_KEY_0.address,
      unsignedTransaction: serializeTransaction(eip1559).slice(2),
      type: 'TRANSACTION_TYPE_ETHEREUM',
    });
  });

  it('signs structured fields through raw payloads and assembles the same transaction', async () => {
    const res = await call<SignTransactionResponse>('SignTransaction', {
      signWith: ANVIL_KEY_0.address,
      mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
      ethereum: {
        type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559',
        chainId: '31337',
        nonce: '7',
        to: eip1559.to,
        value: (10n ** 15n).toString(),
        gasLimit: '21000',
        maxFeePerGas: '2000000000',
        maxPriorityFeePerGas: '1000000',
      },
    });
    expect(toHex(res.signedTransaction)).toBe(await account.signTransaction(eip1559));
    expect(res.mode).toBe('SIGNING_MODE_SIGN_RAW_PAYLOADS');
    const body = JSON.parse(new TextDecoder().decode(fake.requests.at(-1)!.body)) as {
      parameters: Record<string, unknown>;
    };
    expect(fake.requests.at(-1)!.path).toBe('/public/v1/submit/sign_raw_payloads');
    expect(body.parameters).toEqual({
      signWith: ANVIL_KEY_0.address,
      payloads: [keccak256(serializeTransaction(eip1559)).slice(2)],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
  });

  it('signs a legacy EIP-155 transaction in AUTO mode via sign_transaction', async () => {
    const legacy = {
      chainId: 31337,
      type: 'legacy',
      nonce: 0,
      to: eip1559.to,
      value: 1n,
      gas: 21000n,
      gasPrice: 1n,
    } as const;
    const res = await call<SignTransactionResponse>('SignTransaction', {
      signWith: ANVIL_KEY_0.address,
      ethereum: { unsigned: unsignedBytes(legacy) },
    });
    expect(res.mode).toBe('SIGNING_MODE_SIGN_TRANSACTION');
    expect(toHex(res.signedTransaction)).toBe(await account.signTransaction(legacy));
  });

  it('resolves a private-key id to its Ethereum address once and verifies against it', async () => {
    const before = queries;
    for (let i = 0; i < 2; i++) {
      const res = await call<SignTransactionResponse>('SignTransaction', {
        signWith: FAKE_PRIVATE_KEY_ID,
        ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 100 + i }) },
      });
      expect(res.signer).toBe(ANVIL_KEY_0.address);
    }
    expect(queries - before).toBe(1);
  });

  it('refuses a flipped byte in signedTransaction with INTERNAL SIGNATURE_VERIFICATION_FAILED', async () => {
    const unsigned = unsignedBytes({ ...eip1559, nonce: 200 });
    for (const pick of [(len: number) => len - 1, (len: number) => Math.floor(len / 2), () => 5]) {
      tamper = (path, json) => {
        const a = (json as { activity?: ActivityJson }).activity;
        const r = a?.result.signTransactionResult;
        if (path.endsWith('/sign_transaction') && r !== undefined) {
          r.signedTransaction = flipHexByte(r.signedTransaction, pick(r.signedTransaction.length / 2));
        }
      };
      const err = await callError('SignTransaction', {
        signWith: ANVIL_KEY_0.address,
        mode: 'SIGNING_MODE_SIGN_TRANSACTION',
        ethereum: { unsigned },
      });
      expect(err.code).toBe(grpc.status.INTERNAL);
      expect(err.errorCode).toBe('SIGNATURE_VERIFICATION_FAILED');
    }
  });

  it('refuses a flipped byte of r in raw-payloads mode with INTERNAL SIGNATURE_VERIFICATION_FAILED', async () => {
    tamper = (_path, json) => {
      const sigs = (json as { activity?: ActivityJson }).activity?.result.signRawPayloadsResult?.signatures;
      if (sigs?.[0] !== undefined) sigs[0].r = flipHexByte(sigs[0].r, 31);
    };
    const err = await callError('SignTransaction', {
      signWith: ANVIL_KEY_0.address,
      mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
      ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 201 }) },
    });
    expect(err.code).toBe(grpc.status.INTERNAL);
    expect(err.errorCode).toBe('SIGNATURE_VERIFICATION_FAILED');
  });

  it('refuses a raw signature whose y-parity was flipped (it recovers another address)', async () => {
    tamper = (_path, json) => {
      const sigs = (json as { activity?: ActivityJson }).activity?.result.signRawPayloadsResult?.signatures;
      if (sigs?.[0] !== undefined) sigs[0].v = sigs[0].v === '00' ? '01' : '00';
    };
    const err = await callError('SignTransaction', {
      signWith: ANVIL_KEY_0.address,
      mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
      ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 203 }) },
    });
    expect(err.code).toBe(grpc.status.INTERNAL);
    expect(err.errorCode).toBe('SIGNATURE_VERIFICATION_FAILED');
  });

  it('answers CONSENSUS_NEEDED with the activity id and fingerprint and no transaction', async () => {
    fake.setStatus('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const res = await call<SignTransactionResponse>('SignTransaction', {
      signWith: ANVIL_KEY_0.address,
      ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 300 }) },
    });
    expect(res.state).toBe('ACTIVITY_STATE_CONSENSUS_NEEDED');
    expect(res.activityId).not.toBe('');
    expect(res.fingerprint).toMatch(/^sha256:/);
    expect(res.signedTransaction).toHaveLength(0);
    expect(res.signatures).toEqual([]);
  });

  it('maps a policy denial from the public API to PERMISSION_DENIED', async () => {
    fake.setError(new CountersignError('POLICY_DENIED', 'policy engine denied request explicitly'));
    const err = await callError('SignTransaction', {
      signWith: ANVIL_KEY_0.address,
      ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 301 }) },
    });
    expect(err).toEqual({
      code: grpc.status.PERMISSION_DENIED,
      details: 'policy engine denied request explicitly',
      errorCode: 'POLICY_DENIED',
    });
  });

  it('rejects bad input with INVALID_ARGUMENT naming the field, before submitting', async () => {
    const before = fake.requests.length;
    const cases: [unknown, string][] = [
      [{ signWith: ANVIL_KEY_0.address }, 'transaction'],
      [{ ethereum: { unsigned: unsignedBytes(eip1559) } }, 'sign_with'],
      [{ signWith: 'not-an-address', ethereum: { unsigned: unsignedBytes(eip1559) } }, 'sign_with'],
      [
        { signWith: ANVIL_KEY_0.address, ethereum: { unsigned: unsignedBytes(eip1559), nonce: '1' } },
        'ethereum',
      ],
      [{ signWith: ANVIL_KEY_0.address, ethereum: { unsigned: Buffer.from('02c0ff', 'hex') } }, ''],
    ];
    for (const [req, field] of cases) {
      const err = await callError('SignTransaction', req);
      expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err.details).toContain(field);
    }
    expect(fake.requests.length).toBe(before);
  });

  it('answers INTERNAL with an error id, and no detail, for an unexpected failure', async () => {
    failWith = new TypeError('secret detail that must not leave the process');
    const err = await callError('SignTransaction', {
      signWith: ANVIL_KEY_0.address,
      ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 302 }) },
    });
    expect(err.code).toBe(grpc.status.INTERNAL);
    expect(err.details).toMatch(/^internal error \([0-9a-f-]{36}\)$/);
  });
});

describe('idempotency', () => {
  it('resubmits the byte-identical body for a retried key and returns the same answer', async () => {
    const req = {
      signWith: ANVIL_KEY_0.address,
      idempotencyKey: 'order-42',
      ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 400 }) },
    };
    const signaturesBefore = fake.signatureCount();
    const first = await call<SignTransactionResponse>('SignTransaction', req);
    const firstBody = fake.requests.at(-1)!.body;
    // A later retry would otherwise carry a different timestampMs.
    await new Promise((r) => setTimeout(r, 5));
    const second = await call<SignTransactionResponse>('SignTransaction', req);
    const secondBody = fake.requests.at(-1)!.body;
    expect(Buffer.compare(Buffer.from(firstBody), Buffer.from(secondBody))).toBe(0);
    expect(second).toEqual(first);
    expect(fake.signatureCount() - signaturesBefore).toBe(1);
  });

  it('keeps the recorded body when the first attempt never reached the service', async () => {
    const req = {
      signWith: ANVIL_KEY_0.address,
      idempotencyKey: 'order-43',
      digest: Buffer.alloc(32, 7),
    };
    failWith = new CountersignError('UPSTREAM_UNAVAILABLE', 'public API unreachable');
    const down = await callError('SignMessage', req);
    expect(down.code).toBe(grpc.status.UNAVAILABLE);
    failWith = undefined;
    await new Promise((r) => setTimeout(r, 5));
    const before = fake.requests.length;
    await call('SignMessage', req);
    await new Promise((r) => setTimeout(r, 5));
    await call('SignMessage', req);
    const [a, b] = fake.requests.slice(before);
    expect(Buffer.compare(Buffer.from(a!.body), Buffer.from(b!.body))).toBe(0);
  });

  it('refuses the same key with a different request with FAILED_PRECONDITION', async () => {
    const base = { signWith: ANVIL_KEY_0.address, idempotencyKey: 'order-44' };
    await call('SignTransaction', {
      ...base,
      ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 500 }) },
    });
    const before = fake.requests.length;
    const err = await callError('SignTransaction', {
      ...base,
      ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 501 }) },
    });
    expect(err.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(err.errorCode).toBe('IDEMPOTENCY_KEY_CONFLICT');
    expect(fake.requests.length).toBe(before);
  });

  it('scopes keys per method', async () => {
    const key = 'shared-key';
    await call('SignMessage', {
      signWith: ANVIL_KEY_0.address,
      idempotencyKey: key,
      digest: Buffer.alloc(32, 1),
    });
    const res = await call<SignTransactionResponse>('SignTransaction', {
      signWith: ANVIL_KEY_0.address,
      idempotencyKey: key,
      ethereum: { unsigned: unsignedBytes({ ...eip1559, nonce: 502 }) },
    });
    expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
  });
});

interface SignRawPayloadsResponse {
  signatures: { r: Buffer; s: Buffer; v: number }[];
  digests: Buffer[];
  signer: string;
  state: string;
}

describe('SignRawPayloads', () => {
  it('signs hex payloads with KECCAK256 and returns verified signatures with their digests', async () => {
    const payloads = ['deadbeef', '0x00', 'cafe'];
    const res = await call<SignRawPayloadsResponse>('SignRawPayloads', {
      signWith: ANVIL_KEY_0.address,
      payloads,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_KECCAK256',
    });
    expect(res.signer).toBe(ANVIL_KEY_0.address);
    expect(res.digests.map((d) => toHex(d))).toEqual(
      payloads.map((p) => keccak256(p.startsWith('0x') ? (p as Hex) : `0x${p}`)),
    );
    for (let i = 0; i < payloads.length; i++) {
      const sig = await account.sign({ hash: toHex(res.digests[i]!) });
      expect(sig.slice(2, 66)).toBe(res.signatures[i]!.r.toString('hex'));
    }
    const body = JSON.parse(new TextDecoder().decode(fake.requests.at(-1)!.body)) as { parameters: unknown };
    expect(body.parameters).toEqual({
      signWith: ANVIL_KEY_0.address,
      payloads,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_KECCAK256',
    });
  });

  it('refuses a flipped byte of r in one of the signatures', async () => {
    tamper = (_path, json) => {
      const sigs = (json as { activity?: ActivityJson }).activity?.result.signRawPayloadsResult?.signatures;
      if (sigs?.[1] !== undefined) sigs[1].r = flipHexByte(sigs[1].r, 0);
    };
    const err = await callError('SignRawPayloads', {
      signWith: ANVIL_KEY_0.address,
      payloads: ['01', '02'],
      encoding: 'PAYLOAD_ENCODING_TEXT_UTF8',
      hashFunction: 'HASH_FUNCTION_SHA256',
    });
    expect(err.code).toBe(grpc.status.INTERNAL);
    expect(err.errorCode).toBe('SIGNATURE_VERIFICATION_FAILED');
  });

  it('rejects what it cannot verify or compute with INVALID_ARGUMENT', async () => {
    const base = { signWith: ANVIL_KEY_0.address, payloads: ['aa'] };
    const cases: [unknown, string][] = [
      [
        { ...base, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE' },
        'hash_function',
      ],
      [
        { ...base, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
        'payloads[0]',
      ],
      [{ ...base, hashFunction: 'HASH_FUNCTION_SHA256' }, 'encoding'],
      [{ ...base, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL' }, 'hash_function'],
      [
        {
          signWith: ANVIL_KEY_0.address,
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_SHA256',
        },
        'payloads',
      ],
    ];
    for (const [req, field] of cases) {
      const err = await callError('SignRawPayloads', req);
      expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(err.details).toContain(field);
    }
  });
});

interface SignMessageResponse {
  signature: { r: Buffer; s: Buffer; v: number };
  serialized: Buffer;
  digest: Buffer;
  signer: string;
  state: string;
}

describe('SignMessage', () => {
  it('signs a personal message as personal_sign does', async () => {
    const message = 'hello countersign';
    const res = await call<SignMessageResponse>('SignMessage', {
      signWith: ANVIL_KEY_0.address,
      personalMessage: Buffer.from(message),
    });
    expect(toHex(res.digest)).toBe(hashMessage(message));
    expect(toHex(res.serialized)).toBe(await account.signMessage({ message }));
    expect(res.signer).toBe(ANVIL_KEY_0.address);
  });

  it('signs EIP-712 typed data as eth_signTypedData does', async () => {
    const typedData = {
      domain: {
        name: 'Ether Mail',
        version: '1',
        chainId: 1,
        verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
      },
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        Person: [
          { name: 'name', type: 'string' },
          { name: 'wallet', type: 'address' },
        ],
        Mail: [
          { name: 'from', type: 'Person' },
          { name: 'to', type: 'Person' },
          { name: 'contents', type: 'string' },
        ],
      },
      primaryType: 'Mail',
      message: {
        from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
        to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
        contents: 'Hello, Bob!',
      },
    } as const;
    const res = await call<SignMessageResponse>('SignMessage', {
      signWith: ANVIL_KEY_0.address,
      typedDataJson: JSON.stringify(typedData),
    });
    // viem's literal typing of nested structs is stricter than this fixture needs.
    const viemTyped = typedData as unknown as Parameters<typeof hashTypedData>[0];
    expect(toHex(res.digest)).toBe(hashTypedData(viemTyped));
    expect(toHex(res.serialized)).toBe(await account.signTypedData(viemTyped));
    const body = JSON.parse(new TextDecoder().decode(fake.requests.at(-1)!.body)) as {
      parameters: { encoding: string; payloads: string[] };
    };
    expect(body.parameters.encoding).toBe('PAYLOAD_ENCODING_EIP712');
    expect(body.parameters.payloads).toEqual([JSON.stringify(typedData)]);
  });

  it('signs an EIP-7702 authorization as viem does and sends it as JSON numbers', async () => {
    const auth = { chainId: 31337, address: '0x5FbDB2315678afecb367f032d93F642f64180aa3' as const, nonce: 3 };
    const res = await call<SignMessageResponse>('SignMessage', {
      signWith: ANVIL_KEY_0.address,
      authorization: { chainId: '31337', address: auth.address, nonce: '3' },
    });
    expect(toHex(res.digest)).toBe(viemHashAuthorization(auth));
    const viemSigned = await account.signAuthorization(auth);
    expect(toHex(res.signature.r)).toBe(viemSigned.r);
    expect(res.signature.v).toBe(viemSigned.yParity);
    const body = JSON.parse(new TextDecoder().decode(fake.requests.at(-1)!.body)) as {
      parameters: { encoding: string; payloads: string[] };
    };
    expect(body.parameters.encoding).toBe('PAYLOAD_ENCODING_EIP7702_AUTHORIZATION');
    expect(body.parameters.payloads).toEqual([`{"address":"${auth.address}","chainId":31337,"nonce":3}`]);
  });

  it('refuses a tampered signature over a digest and rejects a digest that is not 32 bytes', async () => {
    tamper = (_path, json) => {
      const sigs = (json as { activity?: ActivityJson }).activity?.result.signRawPayloadsResult?.signatures;
      if (sigs?.[0] !== undefined) sigs[0].s = flipHexByte(sigs[0].s, 31);
    };
    const err = await callError('SignMessage', {
      signWith: ANVIL_KEY_0.address,
      digest: Buffer.alloc(32, 9),
    });
    expect(err.code).toBe(grpc.status.INTERNAL);
    expect(err.errorCode).toBe('SIGNATURE_VERIFICATION_FAILED');
    tamper = undefined;
    const short = await callError('SignMessage', { signWith: ANVIL_KEY_0.address, digest: Buffer.alloc(31) });
    expect(short.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(short.details).toContain('digest');
  });
});

describe('daemon', () => {
  it('serves grpc.health.v1.Health as SERVING', async () => {
    const healthDef = protoLoader.loadSync(
      join(process.cwd(), 'node_modules/grpc-health-check/proto/health/v1/health.proto'),
      LOADER_OPTIONS,
    );
    const pkg = grpc.loadPackageDefinition(healthDef) as unknown as {
      grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
    };
    const health = new pkg.grpc.health.v1.Health(daemon.address, grpc.credentials.createInsecure());
    try {
      for (const service of ['', 'countersign.v1.Signer']) {
        const res = await new Promise<{ status: string }>((resolve, reject) =>
          (health as unknown as Record<string, Unary>)['Check']!.call(health, { service }, (err, r) =>
            err ? reject(err) : resolve(r as { status: string }),
          ),
        );
        expect(res.status).toBe('SERVING');
      }
    } finally {
      health.close();
    }
  });

  it('lists countersign.v1.Signer through server reflection', async () => {
    const reflectionDef = protoLoader.loadSync(
      join(process.cwd(), 'node_modules/@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto'),
      LOADER_OPTIONS,
    );
    const pkg = grpc.loadPackageDefinition(reflectionDef) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
    };
    const reflection = new pkg.grpc.reflection.v1.ServerReflection(
      daemon.address,
      grpc.credentials.createInsecure(),
    );
    try {
      const stream = (
        reflection as unknown as Record<string, () => grpc.ClientDuplexStream<unknown, unknown>>
      )['ServerReflectionInfo']!.call(reflection);
      const answer = new Promise<{ listServicesResponse?: { service: { name: string }[] } }>(
        (resolve, reject) => {
          stream.once('data', (d) =>
            resolve(d as { listServicesResponse?: { service: { name: string }[] } }),
          );
          stream.once('error', reject);
        },
      );
      stream.write({ listServices: '' });
      const res = await answer;
      stream.end();
      expect(res.listServicesResponse?.service.map((s) => s.name)).toContain('countersign.v1.Signer');
    } finally {
      reflection.close();
    }
  });

  it('lets an in-flight call finish when it is closed', async () => {
    const fake2 = createFakeSigningService({ organizationId: ORG });
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let entered: () => void = () => {};
    const reached = new Promise<void>((r) => (entered = r));
    const slow: Transport = {
      async send(req) {
        entered();
        await gate;
        return fake2.handler(req);
      },
      async close() {},
    };
    const d2 = await startDaemon({
      listen: '127.0.0.1:0',
      client: new PublicApiClient({
        transport: slow,
        stamper: new ApiKeyStamper({
          apiPublicKey: ecdh.getPublicKey('hex', 'compressed'),
          apiPrivateKey: ecdh.getPrivateKey().toString('hex').padStart(64, '0'),
        }),
        organizationId: ORG,
      }),
      defaultOrganizationId: ORG,
      idempotencyDbPath: join(dir, 'drain.sqlite'),
      logger: pino({ level: 'silent' }),
    });
    const Signer = signer.constructor as grpc.ServiceClientConstructor;
    const c2 = new Signer(d2.address, grpc.credentials.createInsecure());
    try {
      const pending = new Promise<SignMessageResponse>((resolve, reject) =>
        (c2 as unknown as Record<string, Unary>)['SignMessage']!.call(
          c2,
          { signWith: ANVIL_KEY_0.address, digest: Buffer.alloc(32, 3) },
          (err, r) => (err ? reject(err) : resolve(r as SignMessageResponse)),
        ),
      );
      await reached;
      const closed = d2.close();
      release();
      const res = await pending;
      expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
      await closed;
    } finally {
      c2.close();
    }
  });
});

describe('idle connections', () => {
  const IDLE_MS = 300;
  const newStamperKey = () => {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    return {
      apiPublicKey: ecdh.getPublicKey('hex', 'compressed'),
      apiPrivateKey: ecdh.getPrivateKey().toString('hex').padStart(64, '0'),
    };
  };
  for (const grpcServer of ['lean', 'grpc-js'] as const) {
    it(`sends GOAWAY NO_ERROR to a connection without calls for idleTimeoutMs, and a client reconnects (${grpcServer})`, async () => {
      const d = await startDaemon({
        listen: '127.0.0.1:0',
        client: new PublicApiClient({
          transport: inProcessTransport(fake.handler),
          stamper: new ApiKeyStamper(newStamperKey()),
          organizationId: ORG,
        }),
        defaultOrganizationId: ORG,
        idempotencyDbPath: join(dir, `idle-${grpcServer}.sqlite`),
        logger: pino({ level: 'silent' }),
        grpcServer,
        idleTimeoutMs: IDLE_MS,
      });
      const session = http2.connect(`http://${d.address}`);
      session.on('error', () => {});
      const Signer = signer.constructor as grpc.ServiceClientConstructor;
      const c = new Signer(d.address, grpc.credentials.createInsecure());
      const sign = () =>
        new Promise<SignMessageResponse>((resolve, reject) =>
          (c as unknown as Record<string, Unary>)['SignMessage']!.call(
            c,
            { signWith: ANVIL_KEY_0.address, personalMessage: Buffer.from('still here') },
            (err, res) => (err ? reject(err) : resolve(res as SignMessageResponse)),
          ),
        );
      try {
        const goaway = await new Promise<number>((resolve) => session.once('goaway', resolve));
        expect(goaway).toBe(http2.constants.NGHTTP2_NO_ERROR);
        await new Promise<void>((resolve) => (session.closed ? resolve() : session.once('close', resolve)));
        // A client's channel outlives its connection: a call, a pause past the timeout, a call.
        expect((await sign()).signer).toBe(ANVIL_KEY_0.address);
        await new Promise((r) => setTimeout(r, IDLE_MS * 3));
        expect((await sign()).signer).toBe(ANVIL_KEY_0.address);
        if (grpcServer === 'lean')
          expect(d.metricsText()).toMatch(/^countersign_grpc_connections_idle_closed_total [2-9]\d*$/m);
      } finally {
        c.close();
        session.destroy();
        await d.close();
      }
    });
  }
});

describe('a caller the callers list does not name', () => {
  const TOKEN = 'the-known-callers-token';
  for (const grpcServer of ['lean', 'grpc-js'] as const) {
    it(`is refused at its call's headers: its message is never read or inflated (${grpcServer})`, async () => {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const d = await startDaemon({
        listen: '127.0.0.1:0',
        client: new PublicApiClient({
          transport: inProcessTransport(fake.handler),
          stamper: new ApiKeyStamper({
            apiPublicKey: ecdh.getPublicKey('hex', 'compressed'),
            apiPrivateKey: ecdh.getPrivateKey().toString('hex').padStart(64, '0'),
          }),
          organizationId: ORG,
        }),
        defaultOrganizationId: ORG,
        idempotencyDbPath: join(dir, `admission-${grpcServer}.sqlite`),
        logger: pino({ level: 'silent' }),
        grpcServer,
        callers: [
          {
            name: 'batch',
            certificateSubject: undefined,
            tokenSha256: createHash('sha256').update(TOKEN).digest(),
            signWith: '*',
            chains: undefined,
            methods: undefined,
            apiKey: undefined,
          },
        ],
      });
      const session = http2.connect(`http://${d.address}`);
      session.on('error', () => {});
      // Flagged gzip, and not gzip: a server that inflated it would answer INTERNAL.
      const notGzip = Buffer.concat([Buffer.from([1, 0, 0, 0x40, 0]), Buffer.alloc(0x4000, 0x5a)]);
      const call = (token: string, path = '/countersign.v1.Signer/SignMessage') =>
        new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
          const req = session.request({
            ':method': 'POST',
            ':path': path,
            'content-type': 'application/grpc',
            'grpc-encoding': 'gzip',
            authorization: `Bearer ${token}`,
            te: 'trailers',
          });
          req.on('response', (h) => {
            if (h['grpc-status'] !== undefined) resolve(h);
          });
          req.on('trailers', resolve);
          req.on('error', reject);
          req.on('data', () => {});
          req.end(notGzip);
        });
      try {
        const stranger = await call('not-the-token');
        expect(stranger['grpc-status']).toBe(String(grpc.status.UNAUTHENTICATED));
        expect(stranger[ERROR_CODE_TRAILER]).toBe('CALLER_UNKNOWN');
        const known = await call(TOKEN);
        expect(known['grpc-status']).toBe(String(grpc.status.INTERNAL));
        expect(d.metricsText()).toMatch(/^countersign_grpc_refused_total\{reason="unauthenticated"\} 1$/m);
        // The known caller's well-formed call goes through the check and is signed.
        const Signer = signer.constructor as grpc.ServiceClientConstructor;
        const c = new Signer(d.address, grpc.credentials.createInsecure());
        const md = new grpc.Metadata();
        md.set('authorization', `Bearer ${TOKEN}`);
        try {
          const res = await new Promise<SignMessageResponse>((resolve, reject) =>
            (c as unknown as Record<string, UnaryWithMetadata>)['SignMessage']!.call(
              c,
              { signWith: ANVIL_KEY_0.address, personalMessage: Buffer.from('known') },
              md,
              (err, r) => (err ? reject(err) : resolve(r as SignMessageResponse)),
            ),
          );
          expect(res.signer).toBe(ANVIL_KEY_0.address);
        } finally {
          c.close();
        }
      } finally {
        session.destroy();
        await d.close();
      }
    });
  }
});
