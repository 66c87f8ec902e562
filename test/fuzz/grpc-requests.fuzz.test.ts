/**
 * Fuzzing the daemon's gRPC requests under fast-check (fixed seed, bounded runs, a time budget):
 * SignTransaction for every chain, from fields and from unsigned bytes (and Ethereum, Solana, Tron
 * and Tempo requests one field away from signing), SignRawPayloads and SignMessage, with field values drawn from valid ones, near misses (out-of-range numbers, wrong
 * lengths, another chain's address, mixed case, whitespace) and garbage, sent by a real grpc-js
 * client to the real daemon on the embedded service, as `serve` wires them. Every call is answered:
 * signed, or refused with a status that is not INTERNAL or UNKNOWN and that carries the error-code
 * trailer and a message; an INVALID_ARGUMENT names its field. The daemon keeps answering afterwards.
 */
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transport } from '../../src/client/transport.js';
import { ERROR_CODE_TRAILER, ERROR_FIELD_TRAILER } from '../../src/daemon/grpc-status.js';
import type { RunningDaemon } from '../../src/daemon/start-daemon.js';
import { startEmbedded, type EmbeddedHarness } from '../helpers/embedded.js';
import { startDaemonOnEmbedded } from '../helpers/embedded-daemon.js';
import { createSignerClient, type RpcResult, type SignerClient } from '../helpers/grpc-client.js';

const SEED = 0x9e1f7;
const RUNS = 2000;
const BUDGET_MS = 45_000;

let h: EmbeddedHarness;
let transport: Transport;
let daemon: RunningDaemon;
let signer: SignerClient;
let org: string;
const addresses: Record<string, string> = {};

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  for (const a of h.service.credentials.accounts) addresses[a.addressFormat] = a.address;
  // As src/cli.ts wires `serve` in embedded mode.
  ({ transport, daemon } = await startDaemonOnEmbedded(h));
  signer = createSignerClient({ address: daemon.address, deadlineMs: 20_000 });
});

afterAll(async () => {
  signer?.close();
  await daemon?.close();
  await transport?.close();
  await h?.close();
});

/** One of the default wallet's addresses (known once the service is up, so drawn late). */
const walletAddress = (): fc.Arbitrary<string> =>
  fc.constant(null).chain(() => fc.constantFrom(...Object.values(addresses)));

/** Any of the default wallet's addresses, another chain's, or a near miss of one. */
const anyAddress = (): fc.Arbitrary<string> =>
  fc.oneof(
    walletAddress(),
    walletAddress().chain((a) =>
      fc.oneof(
        fc.constant(a.toUpperCase()),
        fc.constant(` ${a}`),
        fc.constant(a.slice(0, -1)),
        fc.constant(`${a}0`),
        fc
          .nat({ max: a.length - 1 })
          .map((i) => `${a.slice(0, i)}${a[i] === 'a' ? 'b' : 'a'}${a.slice(i + 1)}`),
      ),
    ),
    fc.constantFrom(
      '',
      '0x',
      '0x0000000000000000000000000000000000000000',
      'T',
      'bc1q',
      '11111111111111111111111111111111',
    ),
    fc.string({ maxLength: 80 }),
  );

/** Decimal strings as the proto carries them: valid, at and past the edges, and not numbers. */
const decimal = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String),
    fc.constantFrom('', '0', '-1', '1.5', '0x10', '1e3', ' 7', '18446744073709551616', '9'.repeat(90)),
    fc.bigInt({ min: 0n, max: 2n ** 257n }).map(String),
    fc.string({ maxLength: 20 }),
  );

const bytes = (max = 80): fc.Arbitrary<Uint8Array> => fc.uint8Array({ maxLength: max });
const hex = (max: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), maxLength: max });

const ethereumFields = {
  unsigned: bytes(200),
  type: fc.constantFrom(
    'ETHEREUM_TRANSACTION_TYPE_UNSPECIFIED',
    'ETHEREUM_TRANSACTION_TYPE_LEGACY',
    'ETHEREUM_TRANSACTION_TYPE_EIP2930',
    'ETHEREUM_TRANSACTION_TYPE_EIP1559',
    'ETHEREUM_TRANSACTION_TYPE_EIP4844',
    'ETHEREUM_TRANSACTION_TYPE_EIP7702',
  ),
  chainId: decimal(),
  nonce: decimal(),
  to: anyAddress(),
  value: decimal(),
  data: bytes(),
  gasLimit: decimal(),
  gasPrice: decimal(),
  maxFeePerGas: decimal(),
  maxPriorityFeePerGas: decimal(),
  accessList: fc.array(
    fc.record({ address: anyAddress(), storageKeys: fc.array(bytes(40), { maxLength: 2 }) }),
    {
      maxLength: 2,
    },
  ),
  maxFeePerBlobGas: decimal(),
  blobVersionedHashes: fc.array(bytes(40), { maxLength: 2 }),
  authorizationList: fc.array(
    fc.record({
      chainId: decimal(),
      address: anyAddress(),
      nonce: decimal(),
      yParity: fc.nat({ max: 3 }),
      r: bytes(40),
      s: bytes(40),
    }),
    { maxLength: 2 },
  ),
  legacyWithoutChainId: fc.boolean(),
};
const ethereum = fc.record(ethereumFields, { requiredKeys: [] });

const solanaFields = {
  unsigned: bytes(300),
  feePayer: anyAddress(),
  recentBlockhash: fc.oneof(anyAddress(), fc.constant('11111111111111111111111111111111')),
  instructions: fc.array(
    fc.record({
      programId: anyAddress(),
      accounts: fc.array(
        fc.record({ pubkey: anyAddress(), isSigner: fc.boolean(), isWritable: fc.boolean() }),
        {
          maxLength: 3,
        },
      ),
      data: bytes(),
    }),
    { maxLength: 2 },
  ),
  addressLookupTables: fc.array(
    fc.record({ address: anyAddress(), addresses: fc.array(anyAddress(), { maxLength: 2 }) }),
    {
      maxLength: 1,
    },
  ),
  version: fc.constantFrom(
    'SOLANA_MESSAGE_VERSION_UNSPECIFIED',
    'SOLANA_MESSAGE_VERSION_LEGACY',
    'SOLANA_MESSAGE_VERSION_V0',
  ),
};
const solana = fc.record(solanaFields, { requiredKeys: [] });

const tronFields = {
  unsigned: bytes(200),
  expectedTxId: fc.oneof(hex(66), fc.string({ maxLength: 10 })),
  kind: fc.constantFrom(
    'TRON_TRANSACTION_KIND_UNSPECIFIED',
    'TRON_TRANSACTION_KIND_TRX_TRANSFER',
    'TRON_TRANSACTION_KIND_TRC20_TRANSFER',
  ),
  ownerAddress: anyAddress(),
  toAddress: anyAddress(),
  amount: decimal(),
  tokenContract: anyAddress(),
  feeLimit: decimal(),
  refBlockBytes: fc.oneof(hex(6), fc.string({ maxLength: 6 })),
  refBlockHash: fc.oneof(hex(18), fc.string({ maxLength: 6 })),
  expiration: decimal(),
  timestamp: decimal(),
  memo: bytes(),
  permissionId: fc.nat({ max: 5 }),
};
const tron = fc.record(tronFields, { requiredKeys: [] });

const bitcoin = fc.record(
  {
    unsigned: bytes(400),
    network: fc.constantFrom(
      'BITCOIN_NETWORK_UNSPECIFIED',
      'BITCOIN_NETWORK_MAINNET',
      'BITCOIN_NETWORK_TESTNET',
      'BITCOIN_NETWORK_REGTEST',
    ),
    finalize: fc.boolean(),
  },
  { requiredKeys: [] },
);

const tempoFields = {
  unsigned: bytes(200),
  chainId: decimal(),
  nonce: decimal(),
  nonceKey: decimal(),
  gasLimit: decimal(),
  maxFeePerGas: decimal(),
  maxPriorityFeePerGas: decimal(),
  calls: fc.array(fc.record({ to: anyAddress(), value: decimal(), data: bytes() }), { maxLength: 2 }),
  validBefore: decimal(),
  validAfter: decimal(),
  feeToken: anyAddress(),
  sponsored: fc.boolean(),
};
const tempo = fc.record(tempoFields, { requiredKeys: [] });

// Weighted towards the organization and the wallet's own addresses, so that many calls get past
// the first checks and reach the later ones (and some are signed).
/**
 * A request that would sign (the wallet's addresses are read when one is drawn), with each field swapped for a drawn one now and then: the later
 * checks (fee rules, type rules, lists) see values one step from valid, not only garbage.
 */
function nearValid<T extends object>(
  base: () => T,
  fields: { readonly [K in keyof T]?: fc.Arbitrary<unknown> },
): fc.Arbitrary<T> {
  const swaps = Object.fromEntries(
    Object.entries(fields).map(([k, a]) => [
      k,
      fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, a as fc.Arbitrary<unknown>),
    ]),
  );
  return fc.record(swaps).map((drawn) => {
    const out: Record<string, unknown> = { ...(base() as Record<string, unknown>) };
    for (const [k, v] of Object.entries(drawn)) if (v !== undefined) out[k] = v;
    return out as T;
  });
}

/** An EIP-1559 transfer from the wallet's Ethereum account's point of view. */
const nearEthereum = nearValid(
  () => ({
    type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559',
    chainId: '1',
    nonce: '0',
    to: '0x8ba1f109551bD432803012645Ac136ddd64DBA72',
    value: '1000',
    gasLimit: '21000',
    maxFeePerGas: '30000000000',
    maxPriorityFeePerGas: '1000000000',
  }),
  ethereumFields,
);

/** A legacy System transfer of 1,000 lamports from the wallet's Solana account. */
const nearSolana = nearValid(
  () => ({
    feePayer: addresses['ADDRESS_FORMAT_SOLANA']!,
    recentBlockhash: '11111111111111111111111111111111',
    instructions: [
      {
        programId: '11111111111111111111111111111111',
        accounts: [
          { pubkey: addresses['ADDRESS_FORMAT_SOLANA']!, isSigner: true, isWritable: true },
          { pubkey: 'Vote111111111111111111111111111111111111111', isSigner: false, isWritable: true },
        ],
        // SystemInstruction::Transfer (2), then the lamports, both little-endian.
        data: Uint8Array.from([2, 0, 0, 0, 0xe8, 3, 0, 0, 0, 0, 0, 0]),
      },
    ],
    version: 'SOLANA_MESSAGE_VERSION_LEGACY',
  }),
  solanaFields,
);

/** A TRX transfer of 1,000 sun from the wallet's Tron account. */
const nearTron = nearValid(
  () => ({
    kind: 'TRON_TRANSACTION_KIND_TRX_TRANSFER',
    ownerAddress: addresses['ADDRESS_FORMAT_TRON']!,
    toAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8',
    amount: '1000',
    refBlockBytes: 'abcd',
    refBlockHash: '0123456789abcdef',
    expiration: String(Date.now() + 60_000),
    timestamp: String(Date.now()),
  }),
  tronFields,
);

/** A Tempo call from the wallet's Ethereum account. */
const nearTempo = nearValid(
  () => ({
    chainId: '42431',
    nonce: '0',
    gasLimit: '100000',
    maxFeePerGas: '30000000000',
    maxPriorityFeePerGas: '1000000000',
    calls: [{ to: '0x8ba1f109551bD432803012645Ac136ddd64DBA72', value: '0', data: Uint8Array.from([1, 2]) }],
  }),
  tempoFields,
);

const common = {
  organizationId: fc.oneof(
    { weight: 4, arbitrary: fc.constant('ORG') },
    fc.constant(''),
    fc.uuid(),
    fc.string({ maxLength: 40 }),
  ),
  signWith: fc.oneof({ weight: 2, arbitrary: walletAddress() }, anyAddress()),
  idempotencyKey: fc.oneof(fc.constant(''), fc.string({ maxLength: 300 })),
};

const signTransaction = fc
  .record({
    ...common,
    mode: fc.constantFrom(
      'SIGNING_MODE_AUTO',
      'SIGNING_MODE_SIGN_TRANSACTION',
      'SIGNING_MODE_SIGN_RAW_PAYLOADS',
    ),
    feePayerSignWith: fc.oneof(fc.constant(''), anyAddress()),
    chain: fc.oneof(
      ethereum.map((ethereum) => ({ ethereum })),
      { weight: 3, arbitrary: nearEthereum.map((ethereum) => ({ ethereum })) },
      { weight: 2, arbitrary: nearSolana.map((solana) => ({ solana })) },
      { weight: 2, arbitrary: nearTron.map((tron) => ({ tron })) },
      { weight: 2, arbitrary: nearTempo.map((tempo) => ({ tempo })) },
      solana.map((solana) => ({ solana })),
      tron.map((tron) => ({ tron })),
      bitcoin.map((bitcoin) => ({ bitcoin })),
      tempo.map((tempo) => ({ tempo })),
      fc.constant({}),
    ),
  })
  .map(({ chain, ...rest }) => ({ kind: 'SignTransaction' as const, req: { ...rest, ...chain } }));

const signRawPayloads = fc
  .record({
    ...common,
    payloads: fc.array(fc.oneof(hex(64), hex(70), fc.string({ maxLength: 70 })), {
      maxLength: 4,
    }),
    encoding: fc.constantFrom(
      'PAYLOAD_ENCODING_UNSPECIFIED',
      'PAYLOAD_ENCODING_HEXADECIMAL',
      'PAYLOAD_ENCODING_TEXT_UTF8',
      'PAYLOAD_ENCODING_EIP712',
      'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
    ),
    hashFunction: fc.constantFrom(
      'HASH_FUNCTION_UNSPECIFIED',
      'HASH_FUNCTION_NO_OP',
      'HASH_FUNCTION_SHA256',
      'HASH_FUNCTION_KECCAK256',
      'HASH_FUNCTION_NOT_APPLICABLE',
    ),
  })
  .map((req) => ({ kind: 'SignRawPayloads' as const, req }));

const signMessage = fc
  .record({
    ...common,
    message: fc.oneof(
      bytes().map((personalMessage) => ({ personalMessage })),
      fc
        .oneof(fc.json({ maxDepth: 3 }), fc.string({ maxLength: 60 }))
        .map((typedDataJson) => ({ typedDataJson })),
      fc
        .record({ chainId: decimal(), address: anyAddress(), nonce: decimal() }, { requiredKeys: [] })
        .map((authorization) => ({ authorization })),
      bytes(40).map((digest) => ({ digest })),
      fc.constant({}),
    ),
  })
  .map(({ message, ...rest }) => ({ kind: 'SignMessage' as const, req: { ...rest, ...message } }));

/** 'ORG' stands for the organization, so a share of the calls reach the signing path. */
const withOrg = (req: Record<string, unknown>) =>
  req['organizationId'] === 'ORG' ? { ...req, organizationId: org } : req;

const call = (kind: string, req: Record<string, unknown>): Promise<RpcResult<unknown>> => {
  const r = withOrg(req) as never;
  if (kind === 'SignTransaction') return signer.signTransaction(r);
  if (kind === 'SignRawPayloads') return signer.signRawPayloads(r);
  return signer.signMessage(r);
};

describe('the daemon’s gRPC requests, fuzzed', () => {
  it('answers every request signed or refused with a status, an error code and (for a bad argument) the field', async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.oneof(signTransaction, signRawPayloads, signMessage), async ({ kind, req }) => {
        const r = await call(kind, req as Record<string, unknown>);
        const key = r.ok ? `${kind} OK` : `${kind} ${grpc.status[r.error.code]}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        if (r.ok) return;
        const { code, details, metadata } = r.error;
        const where = `${kind} ${JSON.stringify(withOrg(req as Record<string, unknown>), (_, v: unknown) =>
          v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v,
        )}: ${grpc.status[code]} ${details}`;
        expect(
          [grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED],
          where,
        ).not.toContain(code);
        expect(metadata.get(ERROR_CODE_TRAILER)[0], where).toBeTypeOf('string');
        expect(details.length, where).toBeGreaterThan(0);
        if (code === grpc.status.INVALID_ARGUMENT)
          expect(metadata.get(ERROR_FIELD_TRAILER)[0], where).toBeTypeOf('string');
      }),
      { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: BUDGET_MS },
    );
    // The run reached past the argument checks, and the daemon still answers.
    expect([...seen.keys()].some((k) => k.endsWith(' OK') || k.endsWith('PERMISSION_DENIED'))).toBe(true);
    const after = await signer.signRawPayloads({
      organizationId: org,
      signWith: addresses['ADDRESS_FORMAT_ETHEREUM']!,
      payloads: ['11'.repeat(32)],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    expect(after.ok).toBe(true);
  }, 120_000);
});
