/**
 * Solana end to end over real parts only: the real embedded service, the real gRPC daemon wired to
 * it with the in-process transport exactly as `countersign serve` does, a real grpc-js client and
 * a real litesvm. Legacy and v0 (with an address lookup table) System transfers are signed in both
 * signing modes from both input forms, checked by a second implementation (@solana/web3.js's
 * decoder and node:crypto's ed25519), and executed; a 2-signer transaction is partially signed;
 * bad input is refused before anything is signed.
 */
import { randomUUID, verify as nodeVerify, createPublicKey } from 'node:crypto';
import { status as grpcStatus } from '@grpc/grpc-js';
import { base58 } from '@scure/base';
import { address, lamports } from '@solana/kit';
import {
  AddressLookupTableAccount,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedTransaction,
  type VersionedMessage,
} from '@solana/web3.js';
import { LiteSVM } from 'litesvm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transport } from '../src/client/transport.js';
import { ERROR_CODE_TRAILER, ERROR_FIELD_TRAILER } from '../src/daemon/grpc-status.js';
import { payloadDigest } from '../src/daemon/payload-digest.js';
import type { RunningDaemon } from '../src/daemon/start-daemon.js';
import { signatureSchemeOf, verifyDigestSignature } from '../src/daemon/verify-signature.js';
import { CountersignError } from '../src/shared/errors.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { startDaemonOnEmbedded } from './helpers/embedded-daemon.js';
import {
  createSignerClient,
  unwrap,
  type RpcResult,
  type SignerClient,
  type SignTransactionInput,
  type SignTransactionResponse,
} from './helpers/grpc-client.js';
import { envelope, post } from './helpers/http.js';
import { signerFromSeed, toHex, type TestSigner } from './vectors/solana/keys.js';
import { balanceOf, execute, installLookupTable } from './vectors/solana/litesvm.js';
import { SYSTEM_PROGRAM, systemTransferData } from './vectors/solana/web3.js';

const SOL = 1_000_000_000n;
/** Base fee per signature (litesvm's default fee structure, as mainnet). */
const FEE_PER_SIGNATURE = 5_000n;
/** Above the rent-exempt minimum of a 0-byte account (890,880 lamports), so a new recipient may hold it. */
const AMOUNT = 1_000_000n;

let h: EmbeddedHarness;
let transport: Transport;
let daemon: RunningDaemon;
let signer: SignerClient;
let org: string;
/** The default wallet's Solana account (base58), our signer. */
let account: string;
let svm: LiteSVM;
/** A lookup table holding a filler key and every recipient of a v0 case. */
const TABLE = PublicKey.unique().toBase58();
const v0Recipients = [PublicKey.unique().toBase58(), PublicKey.unique().toBase58()];
const tableEntries = [PublicKey.unique().toBase58(), ...v0Recipients];

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  const sol = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_SOLANA');
  if (sol === undefined) throw new Error('the default wallet has no Solana account');
  account = sol.address;

  // As src/cli.ts wires `serve` in embedded mode.
  ({ transport, daemon } = await startDaemonOnEmbedded(h));
  signer = createSignerClient({ address: daemon.address });

  svm = new LiteSVM();
  installLookupTable(svm, TABLE, tableEntries);
  svm.airdrop(address(account), lamports(10n * SOL));
  expect(balanceOf(svm, account)).toBe(10n * SOL);
});

afterAll(async () => {
  signer?.close();
  await daemon?.close();
  await transport?.close();
  await h?.close();
});

/** The `solana` member of SignTransactionRequest as a client writes it. */
interface SolanaInput {
  readonly unsigned?: Uint8Array;
  readonly feePayer?: string;
  readonly recentBlockhash?: string;
  readonly instructions?: readonly {
    programId: string;
    accounts: { pubkey: string; isSigner: boolean; isWritable: boolean }[];
    data: Uint8Array;
  }[];
  readonly addressLookupTables?: readonly { address: string; addresses: string[] }[];
  readonly version?:
    'SOLANA_MESSAGE_VERSION_UNSPECIFIED' | 'SOLANA_MESSAGE_VERSION_LEGACY' | 'SOLANA_MESSAGE_VERSION_V0';
}

type Mode = 'SIGNING_MODE_AUTO' | 'SIGNING_MODE_SIGN_TRANSACTION' | 'SIGNING_MODE_SIGN_RAW_PAYLOADS';

/** SignTransaction with the `solana` oneof member (the shared helper's input type names only `ethereum`). */
function signSolana(req: {
  signWith: string;
  mode?: Mode;
  idempotencyKey?: string;
  solana: SolanaInput;
}): Promise<RpcResult<SignTransactionResponse>> {
  return signer.signTransaction(req as unknown as SignTransactionInput);
}

const activityCount = async () => (await h.service.store.listActivities(org, { limit: 1000 })).length;

interface Transfer {
  readonly from: string;
  readonly to: string;
  readonly amount: bigint;
}

/** One transaction as web3.js compiles it, and as the structured gRPC fields. */
interface Built {
  readonly message: VersionedMessage;
  readonly unsigned: Uint8Array;
  readonly fields: SolanaInput;
}

function build(feePayer: string, transfers: readonly Transfer[], v0: boolean): Built {
  const recentBlockhash = svm.latestBlockhash();
  const tm = new TransactionMessage({
    payerKey: new PublicKey(feePayer),
    recentBlockhash,
    instructions: transfers.map((t) =>
      SystemProgram.transfer({
        fromPubkey: new PublicKey(t.from),
        toPubkey: new PublicKey(t.to),
        lamports: t.amount,
      }),
    ),
  });
  const table = new AddressLookupTableAccount({
    key: new PublicKey(TABLE),
    state: {
      deactivationSlot: BigInt('0xffffffffffffffff'),
      lastExtendedSlot: 0,
      lastExtendedSlotStartIndex: 0,
      addresses: tableEntries.map((a) => new PublicKey(a)),
    },
  });
  const message = v0 ? tm.compileToV0Message([table]) : tm.compileToLegacyMessage();
  return {
    message,
    unsigned: new VersionedTransaction(message).serialize(),
    fields: {
      feePayer,
      recentBlockhash,
      instructions: transfers.map((t) => ({
        programId: SYSTEM_PROGRAM,
        accounts: [
          { pubkey: t.from, isSigner: true, isWritable: true },
          { pubkey: t.to, isSigner: false, isWritable: true },
        ],
        data: systemTransferData(t.amount),
      })),
      ...(v0
        ? { addressLookupTables: [{ address: TABLE, addresses: tableEntries }] }
        : { version: 'SOLANA_MESSAGE_VERSION_LEGACY' as const }),
    },
  };
}

// RFC 8410: SubjectPublicKeyInfo DER for an Ed25519 key is this prefix followed by the raw 32 bytes.
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** Independent check: node:crypto (OpenSSL) ed25519 over the message web3.js re-serializes. */
function ed25519Verifies(signature: Uint8Array, message: Uint8Array, key: PublicKey): boolean {
  const spki = createPublicKey({
    key: Buffer.concat([SPKI_ED25519_PREFIX, key.toBytes()]),
    format: 'der',
    type: 'spki',
  });
  return nodeVerify(null, message, spki, signature);
}

const isZero = (b: Uint8Array) => b.every((x) => x === 0);

/** Checks the response and the signed bytes with web3.js + node:crypto; returns web3.js's view. */
async function checkSigned(
  res: SignTransactionResponse,
  built: Built,
  mode: Exclude<Mode, 'SIGNING_MODE_AUTO'>,
  ourSlot: number,
): Promise<VersionedTransaction> {
  expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
  expect(res.mode).toBe(mode);
  expect(res.signer).toBe(account);
  const activity = await h.service.store.getActivity(org, res.activityId);
  expect(activity?.type).toBe(
    mode === 'SIGNING_MODE_SIGN_TRANSACTION'
      ? 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'
      : 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
  );
  expect(activity?.status).toBe('ACTIVITY_STATUS_COMPLETED');
  expect(activity?.fingerprint).toBe(res.fingerprint);

  const signed = new Uint8Array(res.signedTransaction);
  const vtx = VersionedTransaction.deserialize(signed);
  expect(vtx.version).toBe(built.message.version);
  // The message is the one web3.js compiled, whichever input form the daemon was given.
  const messageBytes = vtx.message.serialize();
  expect(toHex(messageBytes)).toBe(toHex(built.message.serialize()));
  expect(toHex(signed.subarray(signed.length - messageBytes.length))).toBe(toHex(messageBytes));
  expect(vtx.message.staticAccountKeys[ourSlot]?.toBase58()).toBe(account);

  const ours = vtx.signatures[ourSlot]!;
  expect(ed25519Verifies(ours, messageBytes, new PublicKey(account))).toBe(true);
  expect(ed25519Verifies(ours, Uint8Array.from([...messageBytes, 0]), new PublicKey(account))).toBe(false);
  expect(res.signatures).toHaveLength(1);
  expect(toHex(res.signatures[0]!.r)).toBe(toHex(ours.subarray(0, 32)));
  expect(toHex(res.signatures[0]!.s)).toBe(toHex(ours.subarray(32)));
  expect(res.signatures[0]!.v).toBe(0);
  // Every other slot comes back as sent (zero here).
  vtx.signatures.forEach((sig, i) => {
    if (i !== ourSlot) expect(isZero(sig), `slot ${i}`).toBe(true);
  });
  expect(res.transactionHash).toBe(ourSlot === 0 ? base58.encode(ours) : '');
  return vtx;
}

type InputForm = 'fields' | 'unsigned';
interface Case {
  readonly v0: boolean;
  readonly mode: Exclude<Mode, 'SIGNING_MODE_AUTO'>;
  readonly input: InputForm;
}

/** Each message version in each mode; each input form in each mode and for each version. */
const CASES: readonly Case[] = [
  { v0: false, mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'fields' },
  { v0: false, mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'unsigned' },
  { v0: true, mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'unsigned' },
  { v0: true, mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'fields' },
];

describe('SignTransaction (solana) over gRPC, executed on litesvm', () => {
  CASES.forEach(({ v0, mode, input }, n) => {
    it(`${v0 ? 'v0 with a lookup table' : 'legacy'} via ${mode.replace('SIGNING_MODE_', '')} from ${input}: signed, verified independently, executed`, async () => {
      // v0 recipients sit in the lookup table, so the message loads them from it.
      const to = v0 ? v0Recipients[n % 2]! : PublicKey.unique().toBase58();
      const amount = AMOUNT + BigInt(n);
      const built = build(account, [{ from: account, to, amount }], v0);
      if (v0) {
        expect(built.message.addressTableLookups).toHaveLength(1);
        expect(built.message.staticAccountKeys.map((k) => k.toBase58())).not.toContain(to);
      }
      const solana = input === 'unsigned' ? { unsigned: built.unsigned } : built.fields;

      const res = unwrap(await signSolana({ signWith: account, mode, idempotencyKey: randomUUID(), solana }));
      const vtx = await checkSigned(res, built, mode, 0);

      const before = { payer: balanceOf(svm, account), to: balanceOf(svm, to) };
      const meta = execute(svm, new Uint8Array(res.signedTransaction));
      expect(base58.encode(meta.signature())).toBe(res.transactionHash);
      expect(base58.encode(vtx.signatures[0]!)).toBe(res.transactionHash);
      expect(balanceOf(svm, to) - before.to).toBe(amount);
      expect(before.payer - balanceOf(svm, account)).toBe(amount + FEE_PER_SIGNATURE);
    });
  });

  it('AUTO signs through sign_transaction and reports that mode', async () => {
    const to = PublicKey.unique().toBase58();
    const built = build(account, [{ from: account, to, amount: AMOUNT }], false);
    const res = unwrap(
      await signSolana({
        signWith: account,
        mode: 'SIGNING_MODE_AUTO',
        solana: { unsigned: built.unsigned },
      }),
    );
    await checkSigned(res, built, 'SIGNING_MODE_SIGN_TRANSACTION', 0);
    execute(svm, new Uint8Array(res.signedTransaction));
    expect(balanceOf(svm, to)).toBe(AMOUNT);
  });

  describe.each([
    ['SIGNING_MODE_SIGN_TRANSACTION', 'unsigned', true],
    ['SIGNING_MODE_SIGN_RAW_PAYLOADS', 'fields', false],
  ] as const)('a 2-signer transaction via %s from %s', (mode, input, v0) => {
    it('fills only our slot; the fee payer signs slot 0 afterwards and litesvm executes it', async () => {
      const payer: TestSigner = signerFromSeed(PublicKey.unique().toBytes());
      svm.airdrop(address(payer.address), lamports(SOL));
      const to = v0 ? v0Recipients[0]! : PublicKey.unique().toBase58();
      const built = build(
        payer.address,
        [
          { from: payer.address, to, amount: AMOUNT },
          { from: account, to, amount: 2n * AMOUNT },
        ],
        v0,
      );
      expect(built.message.header.numRequiredSignatures).toBe(2);
      const solana = input === 'unsigned' ? { unsigned: built.unsigned } : built.fields;

      const res = unwrap(await signSolana({ signWith: account, mode, solana }));
      const vtx = await checkSigned(res, built, mode, 1);
      const partial = new Uint8Array(res.signedTransaction);
      // Slot 0 (the fee payer's) is still zero, so there is no transaction id yet.
      expect(res.transactionHash).toBe('');
      expect(toHex(partial.subarray(0, 65))).toBe(toHex(built.unsigned.subarray(0, 65)));
      expect(toHex(partial.subarray(129))).toBe(toHex(built.unsigned.subarray(129)));
      expect(() => execute(svm, partial)).toThrow(/missing signature/i);

      // The fee payer signs the same message bytes and fills slot 0 (bytes 1..65 of the wire).
      const payerSig = payer.sign(vtx.message.serialize());
      const full = Uint8Array.from(partial);
      full.set(payerSig, 1);
      const both = VersionedTransaction.deserialize(full);
      expect(
        ed25519Verifies(both.signatures[0]!, both.message.serialize(), new PublicKey(payer.address)),
      ).toBe(true);
      const before = {
        payer: balanceOf(svm, payer.address),
        ours: balanceOf(svm, account),
        to: balanceOf(svm, to),
      };
      const meta = execute(svm, full);
      expect(base58.encode(meta.signature())).toBe(base58.encode(payerSig));
      expect(balanceOf(svm, to) - before.to).toBe(3n * AMOUNT);
      expect(before.ours - balanceOf(svm, account)).toBe(2n * AMOUNT);
      expect(before.payer - balanceOf(svm, payer.address)).toBe(AMOUNT + 2n * FEE_PER_SIGNATURE);
    });
  });
});

describe('SignTransaction (solana): bad input is refused and nothing is signed', () => {
  const refused = async (
    req: Parameters<typeof signSolana>[0],
    code: grpcStatus,
    errorCode: string,
    field: string,
    mentions: string,
  ) => {
    const before = await activityCount();
    const result = await signSolana(req);
    if (result.ok) throw new Error(`expected ${errorCode}, the call succeeded`);
    expect(result.error.code).toBe(code);
    expect(result.error.metadata.get(ERROR_CODE_TRAILER)).toEqual([errorCode]);
    expect(result.error.metadata.get(ERROR_FIELD_TRAILER)).toEqual([field]);
    expect(result.error.details).toContain(mentions);
    expect(await activityCount()).toBe(before);
  };
  const transfer = () =>
    build(account, [{ from: account, to: PublicKey.unique().toBase58(), amount: 1n }], false);

  it.each(['SIGNING_MODE_SIGN_TRANSACTION', 'SIGNING_MODE_SIGN_RAW_PAYLOADS'] as const)(
    'truncated wire bytes (%s)',
    async (mode) => {
      const { unsigned } = transfer();
      await refused(
        { signWith: account, mode, solana: { unsigned: unsigned.subarray(0, unsigned.length - 1) } },
        grpcStatus.INVALID_ARGUMENT,
        'SOLANA_MALFORMED_TRANSACTION',
        'solana.unsigned',
        'solana.unsigned: failed to pre-parse Solana transaction',
      );
    },
  );

  it('trailing bytes after the message', async () => {
    const { unsigned } = transfer();
    await refused(
      { signWith: account, solana: { unsigned: Uint8Array.from([...unsigned, 0]) } },
      grpcStatus.INVALID_ARGUMENT,
      'SOLANA_MALFORMED_TRANSACTION',
      'solana.unsigned',
      'trailing byte',
    );
  });

  it.each([
    ['unsigned', 'SIGNING_MODE_SIGN_TRANSACTION'],
    ['fields', 'SIGNING_MODE_SIGN_RAW_PAYLOADS'],
  ] as const)('sign_with is not a required signer (%s, %s)', async (input, mode) => {
    // Our account only receives: it is in the message but has no signature slot.
    const other = signerFromSeed(PublicKey.unique().toBytes());
    const built = build(other.address, [{ from: other.address, to: account, amount: 1n }], false);
    expect(built.message.staticAccountKeys.map((k) => k.toBase58())).toContain(account);
    await refused(
      { signWith: account, mode, solana: input === 'unsigned' ? { unsigned: built.unsigned } : built.fields },
      grpcStatus.INVALID_ARGUMENT,
      'SOLANA_SIGNER_NOT_REQUIRED',
      'sign_with',
      'sign_with: is not a required signer of this transaction',
    );
  });

  it('unsigned bytes together with structured fields', async () => {
    const built = transfer();
    await refused(
      { signWith: account, solana: { ...built.fields, unsigned: built.unsigned } },
      grpcStatus.INVALID_ARGUMENT,
      'FIELD_INVALID',
      'solana',
      'set either unsigned or the structured fields',
    );
  });

  it('sign_with that is not a Solana address', async () => {
    const eth = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
    await refused(
      { signWith: eth!.address, solana: { unsigned: transfer().unsigned } },
      grpcStatus.INVALID_ARGUMENT,
      'FIELD_INVALID',
      'sign_with',
      'sign_with: is not a base58 string',
    );
  });
});

describe('raw-payload checks for a Solana sign_with (verify-signature, payload-digest)', () => {
  it('verifies an ed25519 signature from the service over the message itself, and refuses a flipped bit', async () => {
    const message = new TextEncoder().encode(`countersign raw ${randomUUID()}`);
    const payload = toHex(message);
    expect(signatureSchemeOf(account)).toBe('ED25519');
    const decoded = payloadDigest(
      payload,
      'PAYLOAD_ENCODING_HEXADECIMAL',
      'HASH_FUNCTION_NOT_APPLICABLE',
      'payloads[0]',
      'ED25519',
    );
    expect(toHex(decoded)).toBe(payload);
    const res = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/submit/sign_raw_payloads',
      envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', org, {
        signWith: account,
        payloads: [payload],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
      }),
    );
    expect(res.status).toBe(200);
    const activity = res.json['activity'] as {
      result: { signRawPayloadsResult: { signatures: { r: string; s: string; v: string }[] } };
    };
    const [wire] = activity.result.signRawPayloadsResult.signatures;
    const sig = { r: Buffer.from(wire!.r, 'hex'), s: Buffer.from(wire!.s, 'hex'), v: 0 as const };
    expect(verifyDigestSignature(decoded, sig, account, 'payloads[0]')).toBe(account);
    expect(ed25519Verifies(Buffer.concat([sig.r, sig.s]), message, new PublicKey(account))).toBe(true);

    const flipped = { ...sig, s: Uint8Array.from(sig.s) };
    flipped.s[0]! ^= 1;
    expect(() => verifyDigestSignature(decoded, flipped, account, 'payloads[0]')).toThrow(
      'payloads[0]: the ed25519 signature',
    );
    const otherKey = PublicKey.unique().toBase58();
    expect(() => verifyDigestSignature(decoded, sig, otherKey, 'payloads[0]')).toThrow(CountersignError);
  });

  it('refuses hash functions other than NOT_APPLICABLE for ed25519, and NOT_APPLICABLE for secp256k1', () => {
    const fail = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return e as CountersignError;
      }
      throw new Error('expected a CountersignError');
    };
    expect(
      fail(() =>
        payloadDigest('aa', 'PAYLOAD_ENCODING_HEXADECIMAL', 'HASH_FUNCTION_SHA256', 'payloads[0]', 'ED25519'),
      ),
    ).toMatchObject({ code: 'HASH_FUNCTION_INVALID', field: 'hash_function' });
    expect(
      fail(() =>
        payloadDigest(
          '{}',
          'PAYLOAD_ENCODING_EIP712',
          'HASH_FUNCTION_NOT_APPLICABLE',
          'payloads[0]',
          'ED25519',
        ),
      ),
    ).toMatchObject({ code: 'PAYLOAD_INVALID', field: 'encoding' });
    expect(
      fail(() =>
        payloadDigest('aa', 'PAYLOAD_ENCODING_HEXADECIMAL', 'HASH_FUNCTION_NOT_APPLICABLE', 'payloads[0]'),
      ),
    ).toMatchObject({ code: 'HASH_FUNCTION_INVALID', field: 'hash_function' });
    expect(
      toHex(
        payloadDigest('hi', 'PAYLOAD_ENCODING_TEXT_UTF8', 'HASH_FUNCTION_NOT_APPLICABLE', 'p', 'ED25519'),
      ),
    ).toBe('6869');
    const eth = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
    expect(signatureSchemeOf(eth!.address)).toBe('ECDSA_SECP256K1');
    expect(signatureSchemeOf(randomUUID())).toBe('ECDSA_SECP256K1');
    // base58 of 31 bytes, and a non-canonical spelling (leading '1's add zero bytes).
    expect(signatureSchemeOf(base58.encode(new Uint8Array(31).fill(9)))).toBe('ECDSA_SECP256K1');
    expect(signatureSchemeOf(`1${account}`)).toBe('ECDSA_SECP256K1');
  });
});
