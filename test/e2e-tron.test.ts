/**
 * Tron end to end over real parts: the real embedded service, the real gRPC daemon wired to it with
 * the in-process transport exactly as `countersign serve` does, a real grpc-js client, and the
 * public API over real HTTP with @turnkey/http. No Tron node can run here (reference 6.4), so every
 * result is checked against tronweb 6.5.1 itself: its offline transaction builder makes the
 * transactions, its generated protobuf classes decode what we return, its txCheck/ecRecover
 * recompute the txID and recover the signer.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { status as grpcStatus } from '@grpc/grpc-js';
import { ApiKeyStamper as TurnkeyApiKeyStamper } from '@turnkey/api-key-stamper';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { TronWeb, utils } from 'tronweb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transport } from '../src/client/transport.js';
import { ERROR_CODE_TRAILER, ERROR_FIELD_TRAILER } from '../src/daemon/grpc-status.js';
import type { SigningMode } from '../src/daemon/proto.js';
import type { RunningDaemon } from '../src/daemon/start-daemon.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { startDaemonOnEmbedded } from './helpers/embedded-daemon.js';
import type { DescEnum } from '@bufbuild/protobuf';
import {
  ActivityState,
  createSignerClient,
  SignerError,
  SigningModeSchema,
  TronTransactionKindSchema,
  type SignerClient,
  type SigningMode as GeneratedSigningMode,
  type SignTransactionResponse,
  type TronTransactionKind,
} from '../src/signer-client/index.js';
import { tronWebProto, transactionVectors } from './vectors/tron/vectors.js';

/** Mainnet USDT (TRC-20). */
const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
/** A Tron address that is not the wallet's (anvil dev account 0, reference chains.md). */
const STRANGER = transactionVectors.signer;

let h: EmbeddedHarness;
let transport: Transport;
let daemon: RunningDaemon;
let signer: SignerClient;
let org: string;
/** The default wallet's Tron account (m/44'/195'/0'/0/0). */
let account: string;
/** Offline: nothing listens on the full host; every builder call gets a blockHeader. */
const tw = new TronWeb({ fullHost: 'http://127.0.0.1:9' });

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  const tron = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_TRON');
  if (tron === undefined) throw new Error('the default wallet has no Tron account');
  account = tron.address;
  expect(TronWeb.isAddress(account)).toBe(true);

  // As src/cli.ts wires `serve` in embedded mode.
  ({ transport, daemon } = await startDaemonOnEmbedded(h));
  signer = createSignerClient(daemon.address);
});

afterAll(async () => {
  signer?.close();
  await daemon?.close();
  await transport?.close();
  await h?.close();
});

/** The `tron` member of SignTransactionRequest as a client writes it. */
interface TronTransactionInput {
  readonly unsigned?: Uint8Array;
  readonly expectedTxId?: string;
  readonly kind?: 'TRON_TRANSACTION_KIND_TRX_TRANSFER' | 'TRON_TRANSACTION_KIND_TRC20_TRANSFER';
  readonly ownerAddress?: string;
  readonly toAddress?: string;
  readonly amount?: string;
  readonly tokenContract?: string;
  readonly feeLimit?: string;
  readonly refBlockBytes?: string;
  readonly refBlockHash?: string;
  readonly expiration?: string;
  readonly timestamp?: string;
  readonly memo?: Uint8Array;
  readonly permissionId?: number;
}

/** An enum value by its name in the proto (the generated TypeScript names drop the enum's prefix). */
function enumNumber(schema: DescEnum, name: string): number {
  const value = schema.values.find((v) => v.name === name);
  if (value === undefined) throw new Error(`${schema.typeName} has no value ${name}`);
  return value.number;
}

type Result =
  | { readonly ok: true; readonly response: SignTransactionResponse }
  | { readonly ok: false; readonly error: SignerError };

function unwrap(result: Result): SignTransactionResponse {
  if (!result.ok) throw result.error;
  return result.response;
}

/** SignTransaction through countersign/client, the typed client generated from the proto. */
async function signTron(req: {
  signWith: string;
  mode?: SigningMode;
  idempotencyKey?: string;
  tron: TronTransactionInput;
}): Promise<Result> {
  const { tron, mode, ...rest } = req;
  const { kind, ...fields } = tron;
  try {
    const response = await signer.signTransaction(
      {
        ...rest,
        ...(mode === undefined ? {} : { mode: enumNumber(SigningModeSchema, mode) as GeneratedSigningMode }),
        transaction: {
          case: 'tron',
          value: {
            ...fields,
            ...(kind === undefined
              ? {}
              : { kind: enumNumber(TronTransactionKindSchema, kind) as TronTransactionKind }),
          },
        },
      },
      { deadline: Date.now() + 60_000 },
    );
    return { ok: true, response };
  } catch (e) {
    if (e instanceof SignerError) return { ok: false, error: e };
    throw e;
  }
}

/** tronweb's transaction JSON (its types are loose; the fields the tests read). */
interface TronWebTransaction {
  txID: string;
  raw_data_hex: string;
  raw_data: { contract: { type: string }[] } & Record<string, unknown>;
  visible: boolean;
}

interface Header {
  readonly ref_block_bytes: string;
  readonly ref_block_hash: string;
  readonly expiration: number;
  readonly timestamp: number;
}

/** A fresh reference block as tronweb takes it offline (ms timestamps, 60 s validity). */
function header(): Header {
  const timestamp = Date.now();
  return {
    ref_block_bytes: randomBytes(2).toString('hex'),
    ref_block_hash: randomBytes(8).toString('hex'),
    expiration: timestamp + 60_000,
    timestamp,
  };
}

const headerFields = (hd: Header) => ({
  refBlockBytes: hd.ref_block_bytes,
  refBlockHash: hd.ref_block_hash,
  expiration: String(hd.expiration),
  timestamp: String(hd.timestamp),
});

/** A fresh random Tron address to pay. */
const randomRecipient = (): string => TronWeb.address.fromHex(`41${randomBytes(20).toString('hex')}`);

type Kind = 'trx' | 'trc20';

interface Built {
  /** What tronweb's offline builder made. */
  readonly tx: TronWebTransaction;
  /** The same transaction as the structured gRPC fields. */
  readonly fields: TronTransactionInput;
  readonly to: string;
  readonly amount: string;
}

async function buildTrx(owner: string, opts: { memo?: string } = {}): Promise<Built> {
  const hd = header();
  const to = randomRecipient();
  const amount = 1_000_000 + Math.floor(Math.random() * 1_000_000);
  let tx = (await tw.transactionBuilder.sendTrx(to, amount, owner, {
    blockHeader: hd,
  })) as unknown as TronWebTransaction;
  if (opts.memo !== undefined) {
    tx = (await tw.transactionBuilder.addUpdateData(tx as never, opts.memo, 'utf8', {
      txLocal: true,
    } as never)) as unknown as TronWebTransaction;
  }
  return {
    tx,
    to,
    amount: String(amount),
    fields: {
      kind: 'TRON_TRANSACTION_KIND_TRX_TRANSFER',
      ownerAddress: owner,
      toAddress: to,
      amount: String(amount),
      ...headerFields(hd),
      ...(opts.memo === undefined ? {} : { memo: new TextEncoder().encode(opts.memo) }),
    },
  };
}

async function buildTrc20(owner: string): Promise<Built> {
  const hd = header();
  const to = randomRecipient();
  const amount = (10n ** 30n + BigInt(Math.floor(Math.random() * 1e9))).toString();
  const feeLimit = 150_000_000;
  const { transaction } = await tw.transactionBuilder.triggerSmartContract(
    USDT,
    'transfer(address,uint256)',
    { feeLimit, blockHeader: hd, txLocal: true },
    [
      { type: 'address', value: to },
      { type: 'uint256', value: amount },
    ],
    owner,
  );
  return {
    tx: transaction as unknown as TronWebTransaction,
    to,
    amount,
    fields: {
      kind: 'TRON_TRANSACTION_KIND_TRC20_TRANSFER',
      ownerAddress: owner,
      toAddress: to,
      amount,
      tokenContract: USDT,
      feeLimit: String(feeLimit),
      ...headerFields(hd),
    },
  };
}

const build = (kind: Kind, owner: string, memo?: string): Promise<Built> =>
  kind === 'trx' ? buildTrx(owner, memo === undefined ? {} : { memo }) : buildTrc20(owner);

const hexOf = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const bytesOf = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));

/**
 * Checks a signed transaction with tronweb alone: its protobuf classes decode it (and re-encode it
 * byte for byte), the raw_data is tronweb's, the txID is tronweb's, and both its low-level
 * `utils.crypto.ecRecover` and `trx.ecRecover` (which runs txCheck first) give `expectedSigner`.
 */
function checkWithTronWeb(signed: Uint8Array, built: Built, expectedSigner: string): string {
  const pb = tronWebProto.Transaction.deserializeBinary(signed);
  expect(hexOf(pb.serializeBinary())).toBe(hexOf(signed));
  const rawDataHex = utils.transaction.txPbToRawDataHex(pb as never).toLowerCase();
  expect(rawDataHex).toBe(built.tx.raw_data_hex);
  expect(utils.transaction.txPbToTxID(pb as never).replace(/^0x/, '')).toBe(built.tx.txID);
  const sigs = pb.getSignatureList_asU8();
  expect(sigs).toHaveLength(1);
  const sig = sigs[0]!;
  expect(sig).toHaveLength(65);
  // v as tronweb writes it.
  expect([27, 28]).toContain(sig[64]);
  const sigHex = hexOf(sig);
  expect(TronWeb.address.fromHex(utils.crypto.ecRecover(built.tx.txID, sigHex))).toBe(expectedSigner);
  expect(tw.trx.ecRecover({ ...built.tx, signature: [sigHex] } as never)).toBe(expectedSigner);
  // Not valid for another transaction's id.
  expect(TronWeb.address.fromHex(utils.crypto.ecRecover('ab'.repeat(32), sigHex))).not.toBe(expectedSigner);
  return sigHex;
}

/** What tronweb's deserializer reads back from raw_data: owner, recipient and amount. */
function checkContract(kind: Kind, rawDataHex: string, built: Built, owner: string): void {
  const type = kind === 'trx' ? 'TransferContract' : 'TriggerSmartContract';
  const decoded = utils.deserializeTx.deserializeTransaction(type, rawDataHex) as {
    contract: { type: string; parameter: { value: Record<string, unknown> } }[];
  };
  expect(decoded.contract).toHaveLength(1);
  const c = decoded.contract[0]!;
  expect(c.type).toBe(type);
  const v = c.parameter.value;
  expect(TronWeb.address.fromHex(String(v['owner_address']))).toBe(owner);
  if (kind === 'trx') {
    expect(TronWeb.address.fromHex(String(v['to_address']))).toBe(built.to);
    expect(String(v['amount'])).toBe(built.amount);
  } else {
    expect(TronWeb.address.fromHex(String(v['contract_address']))).toBe(USDT);
    const data = String(v['data']).toLowerCase();
    // transfer(address,uint256): selector ‖ recipient word ‖ amount word.
    expect(data.slice(0, 8)).toBe('a9059cbb');
    expect(data.slice(32, 72)).toBe(TronWeb.address.toHex(built.to).slice(2).toLowerCase());
    expect(BigInt(`0x${data.slice(72)}`)).toBe(BigInt(built.amount));
  }
}

const activityCount = async (): Promise<number> =>
  (await h.service.store.listActivities(org, { limit: 1000 })).length;

type Mode = 'SIGNING_MODE_SIGN_TRANSACTION' | 'SIGNING_MODE_SIGN_RAW_PAYLOADS';
type InputForm = 'fields' | 'unsigned';

const CASES: readonly { kind: Kind; mode: Mode; input: InputForm }[] = (['trx', 'trc20'] as const).flatMap(
  (kind) =>
    (['SIGNING_MODE_SIGN_TRANSACTION', 'SIGNING_MODE_SIGN_RAW_PAYLOADS'] as const).flatMap((mode) =>
      (['fields', 'unsigned'] as const).map((input) => ({ kind, mode, input })),
    ),
);

describe('Tron SignTransaction over gRPC, checked with tronweb 6.5.1', () => {
  for (const { kind, mode, input } of CASES) {
    it(`${kind} via ${mode.replace('SIGNING_MODE_', '')} from ${input}: signed, verified by tronweb`, async () => {
      // One TRX case carries a memo so raw_data.data goes through both input forms.
      const memo = kind === 'trx' && mode === 'SIGNING_MODE_SIGN_RAW_PAYLOADS' ? 'countersign ✓' : undefined;
      const built = await build(kind, account, memo);
      expect(utils.transaction.txCheck(built.tx as never)).toBe(true);
      const tron: TronTransactionInput =
        input === 'unsigned'
          ? // tronweb's raw_data_hex as is, with its txID as the (checked) expectation.
            { unsigned: bytesOf(built.tx.raw_data_hex), expectedTxId: built.tx.txID }
          : { ...built.fields, expectedTxId: built.tx.txID.toUpperCase() };

      const res = unwrap(await signTron({ signWith: account, mode, idempotencyKey: randomUUID(), tron }));

      expect(res.state).toBe(ActivityState.COMPLETED);
      expect(SigningModeSchema.value[res.mode]?.name).toBe(mode);
      expect(res.signer).toBe(account);
      // The txID as Tron writes it: 64 lower-case hex digits, no 0x; tronweb's own.
      expect(res.transactionHash).toBe(built.tx.txID);
      const activity = await h.service.store.getActivity(org, res.activityId);
      expect(activity?.type).toBe(
        mode === 'SIGNING_MODE_SIGN_TRANSACTION'
          ? 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'
          : 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
      );
      expect(activity?.status).toBe('ACTIVITY_STATUS_COMPLETED');
      expect(res.fingerprint).toBe(activity?.fingerprint);

      const sigHex = checkWithTronWeb(res.signedTransaction, built, account);
      checkContract(kind, built.tx.raw_data_hex, built, account);
      if (memo !== undefined) {
        const raw = tronWebProto.Transaction.deserializeBinary(res.signedTransaction).getRawData();
        expect(new TextDecoder().decode(raw.getData_asU8())).toBe(memo);
      }

      // The signature fields: r, s and the y-parity of the 65 bytes in the transaction.
      expect(res.signatures).toHaveLength(1);
      const sig = res.signatures[0]!;
      expect(hexOf(sig.r)).toBe(sigHex.slice(0, 64));
      expect(hexOf(sig.s)).toBe(sigHex.slice(64, 128));
      expect(sig.v).toBe(Number.parseInt(sigHex.slice(128), 16) - 27);
    });
  }

  it('AUTO signs through sign_transaction and reports that mode', async () => {
    const built = await buildTrx(account);
    const res = unwrap(
      await signTron({
        signWith: account,
        mode: 'SIGNING_MODE_AUTO',
        tron: { unsigned: bytesOf(built.tx.raw_data_hex) },
      }),
    );
    expect(SigningModeSchema.value[res.mode]?.name).toBe('SIGNING_MODE_SIGN_TRANSACTION');
    expect((await h.service.store.getActivity(org, res.activityId))?.type).toBe(
      'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    );
    expect(res.transactionHash).toBe(built.tx.txID);
    checkWithTronWeb(res.signedTransaction, built, account);
  });

  it('WatchActivity through countersign/client streams the completed activity with its verified result', async () => {
    const built = await buildTrx(account);
    const signed = unwrap(
      await signTron({ signWith: account, tron: { unsigned: bytesOf(built.tx.raw_data_hex) } }),
    );
    const seen = [];
    for await (const m of signer.watchActivity(
      { activityId: signed.activityId },
      { deadline: Date.now() + 60_000 },
    ))
      seen.push(m);
    expect(seen.map((m) => m.state)).toEqual([ActivityState.COMPLETED]);
    const result = seen[0]?.result;
    if (result?.case !== 'transaction') throw new Error(`expected a transaction result, got ${result?.case}`);
    expect(result.value.transactionHash).toBe(built.tx.txID);
    expect(hexOf(result.value.signedTransaction)).toBe(hexOf(signed.signedTransaction));
  });

  it('a repeated idempotency key returns the same activity and signs nothing new', async () => {
    const built = await buildTrc20(account);
    const req = {
      signWith: account,
      mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS' as const,
      idempotencyKey: randomUUID(),
      tron: { unsigned: bytesOf(built.tx.raw_data_hex) },
    };
    const first = unwrap(await signTron(req));
    const before = await activityCount();
    const second = unwrap(await signTron(req));
    expect(second.activityId).toBe(first.activityId);
    expect(hexOf(second.signedTransaction)).toBe(hexOf(first.signedTransaction));
    expect(await activityCount()).toBe(before);
  });
});

/** Expects a refused call: status, error-code and field trailers and ErrorInfo, message, and no new activity. */
async function expectRefused(
  req: Parameters<typeof signTron>[0],
  want: { status: grpcStatus; code: string; field: string; message: RegExp },
): Promise<void> {
  const before = await activityCount();
  const result = await signTron(req);
  if (result.ok) throw new Error(`expected ${want.code}, the call succeeded`);
  expect(result.error.code).toBe(want.status);
  expect(result.error.metadata.get(ERROR_CODE_TRAILER)).toEqual([want.code]);
  expect(result.error.metadata.get(ERROR_FIELD_TRAILER)).toEqual([want.field]);
  // The same code and field in the google.rpc.ErrorInfo of grpc-status-details-bin.
  expect(result.error.errorInfo?.domain).toBe('countersign');
  expect(result.error.reason).toBe(want.code);
  expect(result.error.field).toBe(want.field);
  expect(result.error.details).toMatch(want.message);
  expect(await activityCount()).toBe(before);
}

describe('Tron SignTransaction refuses bad input before anything is signed', () => {
  it('refuses raw_data truncated by one byte', async () => {
    const built = await buildTrx(account);
    const raw = bytesOf(built.tx.raw_data_hex);
    await expectRefused(
      { signWith: account, mode: 'SIGNING_MODE_SIGN_TRANSACTION', tron: { unsigned: raw.subarray(0, -1) } },
      {
        status: grpcStatus.INVALID_ARGUMENT,
        code: 'TRON_MALFORMED_TRANSACTION',
        field: 'tron.unsigned',
        message: /^tron\.unsigned: failed to pre-parse Tron transaction: .*truncated/,
      },
    );
  });

  it('refuses raw_data with trailing bytes', async () => {
    const built = await buildTrc20(account);
    const raw = bytesOf(built.tx.raw_data_hex);
    // A lone tag byte (field 14, varint) with no value after it.
    const trailing = new Uint8Array([...raw, 0x70]);
    await expectRefused(
      { signWith: account, mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', tron: { unsigned: trailing } },
      {
        status: grpcStatus.INVALID_ARGUMENT,
        code: 'TRON_MALFORMED_TRANSACTION',
        field: 'tron.unsigned',
        message: /^tron\.unsigned: failed to pre-parse Tron transaction: /,
      },
    );
    // A whole extra field after fee_limit re-orders the fields: not what tronweb or java-tron write.
    const reordered = new Uint8Array([...raw, 0x08, 0x01]);
    await expectRefused(
      { signWith: account, mode: 'SIGNING_MODE_SIGN_TRANSACTION', tron: { unsigned: reordered } },
      {
        status: grpcStatus.INVALID_ARGUMENT,
        code: 'TRON_MALFORMED_TRANSACTION',
        field: 'tron.unsigned',
        message: /number order/,
      },
    );
  });

  it('refuses raw_data whose txID differs from expected_tx_id, in both input forms', async () => {
    const built = await buildTrx(account);
    const other = await buildTrx(account);
    const want = {
      status: grpcStatus.INVALID_ARGUMENT,
      code: 'TRON_TXID_MISMATCH',
      field: 'tron.expected_tx_id',
      message: new RegExp(`^tron\\.expected_tx_id: does not match sha256\\(raw_data\\) = ${built.tx.txID}$`),
    };
    await expectRefused(
      {
        signWith: account,
        mode: 'SIGNING_MODE_SIGN_TRANSACTION',
        tron: { unsigned: bytesOf(built.tx.raw_data_hex), expectedTxId: other.tx.txID },
      },
      want,
    );
    await expectRefused(
      {
        signWith: account,
        mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
        tron: { ...built.fields, expectedTxId: other.tx.txID },
      },
      want,
    );
  });

  it('refuses a transaction whose owner is not sign_with, in both input forms', async () => {
    const built = await buildTrc20(STRANGER);
    const want = {
      status: grpcStatus.INVALID_ARGUMENT,
      code: 'FIELD_INVALID',
      field: 'sign_with',
      message: new RegExp(`^sign_with: ${account} is not the owner .*owner_address is ${STRANGER}`),
    };
    await expectRefused(
      {
        signWith: account,
        mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
        tron: { unsigned: bytesOf(built.tx.raw_data_hex) },
      },
      want,
    );
    await expectRefused(
      { signWith: account, mode: 'SIGNING_MODE_SIGN_TRANSACTION', tron: built.fields },
      want,
    );
  });

  it('refuses unsigned together with structured fields, and a sign_with that is not a T… address', async () => {
    const built = await buildTrx(account);
    await expectRefused(
      { signWith: account, tron: { unsigned: bytesOf(built.tx.raw_data_hex), amount: '1' } },
      {
        status: grpcStatus.INVALID_ARGUMENT,
        code: 'FIELD_INVALID',
        field: 'tron',
        message: /^tron: set either unsigned or the structured fields/,
      },
    );
    await expectRefused(
      { signWith: TronWeb.address.toHex(account), tron: { unsigned: bytesOf(built.tx.raw_data_hex) } },
      {
        status: grpcStatus.INVALID_ARGUMENT,
        code: 'FIELD_INVALID',
        field: 'sign_with',
        message: /^sign_with: must be the base58check Tron address/,
      },
    );
  });
});

describe('Tron through the public API (@turnkey/http over HTTP)', () => {
  let client: TurnkeyClient;
  beforeAll(() => {
    const c = h.service.credentials;
    client = new TurnkeyClient(
      { baseUrl: h.baseUrl },
      new TurnkeyApiKeyStamper({ apiPublicKey: c.apiPublicKey, apiPrivateKey: c.apiPrivateKey }),
    );
  });

  const signTx = (signWith: string, unsignedTransaction: string) =>
    client.signTransaction({
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { signWith, unsignedTransaction, type: 'TRANSACTION_TYPE_TRON' },
    });

  /** The TurnkeyRequestError of a refused request, after checking nothing was recorded. */
  async function refused(signWith: string, unsignedTransaction: string): Promise<TurnkeyRequestError> {
    const before = await activityCount();
    let err: unknown;
    try {
      await signTx(signWith, unsignedTransaction);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TurnkeyRequestError);
    expect(await activityCount()).toBe(before);
    return err as TurnkeyRequestError;
  }

  const detail = (err: TurnkeyRequestError, key: string): unknown =>
    (err.details as Record<string, unknown>[] | null)?.find((d) => key in d)?.[key];

  it("signs tronweb's raw_data_hex of a TRX and a TRC-20 transfer; tronweb verifies the result", async () => {
    for (const kind of ['trx', 'trc20'] as const) {
      const built = await build(kind, account);
      const res = await signTx(account, built.tx.raw_data_hex);
      expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      expect(res.activity.type).toBe('ACTIVITY_TYPE_SIGN_TRANSACTION_V2');
      const signedHex = res.activity.result.signTransactionResult?.signedTransaction;
      if (signedHex === undefined) throw new Error('no signedTransaction in the result');
      // Hex without 0x, what /wallet/broadcasthex takes.
      expect(signedHex).toMatch(/^(?:[0-9a-f]{2})+$/);
      checkWithTronWeb(bytesOf(signedHex), built, account);
      checkContract(kind, built.tx.raw_data_hex, built, account);
    }
  });

  it('refuses truncated and trailing bytes, naming parameters.unsignedTransaction', async () => {
    const built = await buildTrx(account);
    for (const bad of [built.tx.raw_data_hex.slice(0, -2), `${built.tx.raw_data_hex}70`]) {
      const err = await refused(account, bad);
      expect(err.code).toBe(grpcStatus.INVALID_ARGUMENT);
      expect(detail(err, 'countersignErrorCode')).toBe('TRON_MALFORMED_TRANSACTION');
      expect(detail(err, 'turnkeyErrorCode')).toBe('INVALID_TRANSACTION');
      expect(detail(err, 'fieldViolations')).toEqual([
        {
          field: 'parameters.unsignedTransaction',
          description: expect.stringMatching(
            /^parameters\.unsignedTransaction: failed to pre-parse Tron transaction: /,
          ),
        },
      ]);
    }
  });

  it('refuses to sign as a key that is not the owner, naming parameters.signWith', async () => {
    const built = await buildTrx(STRANGER);
    const err = await refused(account, built.tx.raw_data_hex);
    expect(err.code).toBe(grpcStatus.INVALID_ARGUMENT);
    expect(detail(err, 'countersignErrorCode')).toBe('FIELD_INVALID');
    expect(detail(err, 'fieldViolations')).toEqual([
      {
        field: 'parameters.signWith',
        description: expect.stringMatching(
          new RegExp(
            `^parameters\\.signWith: the signer ${account} is not the owner .*owner_address is ${STRANGER}`,
          ),
        ),
      },
    ]);
  });

  it('refuses an ed25519 key (the Solana account) with CURVE_UNSUPPORTED', async () => {
    const sol = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_SOLANA');
    if (sol === undefined) throw new Error('the default wallet has no Solana account');
    const built = await buildTrx(account);
    const err = await refused(sol.address, built.tx.raw_data_hex);
    expect(err.code).toBe(grpcStatus.INVALID_ARGUMENT);
    expect(detail(err, 'countersignErrorCode')).toBe('CURVE_UNSUPPORTED');
  });
});
