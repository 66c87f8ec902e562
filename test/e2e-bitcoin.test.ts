/**
 * Bitcoin end to end over real parts: the real embedded service, the real gRPC daemon wired to it with
 * the in-process transport exactly as `countersign serve` does, a real grpc-js client, and Turnkey's
 * real @turnkey/http client over HTTP. There is no bitcoind here (reference chains.md 6.3), so every
 * result is checked with second implementations instead: bitcoinjs-lib (validateSignaturesOfInput with
 * tiny-secp256k1, finalize + extract) and @scure/btc-signer (parse, sighash) with noble's verifiers.
 * The prevouts are fake but well-formed. Official BIP-143/340/341 vectors run in chains/bitcoin's tests
 * (test/vectors/bitcoin); they are not repeated here.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { status as grpcStatus } from '@grpc/grpc-js';
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';
import * as btc from '@scure/btc-signer';
import { ApiKeyStamper as TurnkeyApiKeyStamper } from '@turnkey/api-key-stamper';
import { TurnkeyClient } from '@turnkey/http';
import * as bitcoin from 'bitcoinjs-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import type { Transport } from '../src/client/transport.js';
import { ERROR_CODE_TRAILER, ERROR_FIELD_TRAILER } from '../src/daemon/grpc-status.js';
import type { RunningDaemon } from '../src/daemon/start-daemon.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { startDaemonOnEmbedded } from './helpers/embedded-daemon.js';
import type { GetActivityResponse } from '../src/daemon/proto.js';
import {
  createSignerClient,
  openSignerStub,
  unwrap,
  type UnaryMethod,
  type RpcResult,
  type SignerClient,
  type SignTransactionInput,
  type SignTransactionResponse,
} from './helpers/grpc-client.js';
import { PUB_B, toHex, validator } from './vectors/bitcoin/vectors.js';

const mainnet = bitcoin.networks.bitcoin;
const FEE = 10_000n;

let h: EmbeddedHarness;
let transport: Transport;
let client: PublicApiClient;
let daemon: RunningDaemon;
let signer: SignerClient;
let org: string;

/** A secp256k1 key as the tests see it: its public key and the addresses the service knows for it. */
interface TestKey {
  readonly publicKey: Uint8Array;
  readonly p2pkh?: string;
  readonly p2wpkh?: string;
  readonly p2tr?: string;
  readonly privateKeyId?: string;
}

let walletP2wpkh: TestKey; // default wallet m/84'/0'/0'/0/0
let walletP2tr: TestKey; // default wallet m/86'/0'/0'/0/0
let pk: TestKey; // a private key with P2PKH, P2WPKH and P2TR mainnet addresses

async function accountKey(format: string): Promise<{ address: string; publicKey: Uint8Array }> {
  const account = h.service.credentials.accounts.find((a) => a.addressFormat === format);
  if (account === undefined) throw new Error(`the default wallet has no ${format} account`);
  const res = await client.query<{ account: { publicKey: string } }>('get_wallet_account', {
    walletId: h.service.credentials.walletId,
    address: account.address,
  });
  return { address: account.address, publicKey: Uint8Array.from(Buffer.from(res.account.publicKey, 'hex')) };
}

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  // As src/cli.ts wires `serve` in embedded mode.
  ({ transport, client, daemon } = await startDaemonOnEmbedded(h));
  signer = createSignerClient({ address: daemon.address });

  const a = await accountKey('ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH');
  walletP2wpkh = { publicKey: a.publicKey, p2wpkh: a.address };
  const t = await accountKey('ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR');
  walletP2tr = { publicKey: t.publicKey, p2tr: t.address };

  const created = await client.submit(
    'create_private_keys',
    client.buildActivityBody({
      type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2',
      parameters: {
        privateKeys: [
          {
            privateKeyName: `bitcoin e2e ${randomUUID()}`,
            curve: 'CURVE_SECP256K1',
            privateKeyTags: [],
            addressFormats: [
              'ADDRESS_FORMAT_BITCOIN_MAINNET_P2PKH',
              'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH',
              'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR',
            ],
          },
        ],
      },
    }),
  );
  const result = created.result['createPrivateKeysResultV2'] as {
    privateKeys: { privateKeyId: string; addresses: { format: string; address: string }[] }[];
  };
  const key = result.privateKeys[0]!;
  const addr = (f: string) =>
    key.addresses.find((x) => x.format === `ADDRESS_FORMAT_BITCOIN_MAINNET_${f}`)!.address;
  const got = await client.query<{ privateKey: { publicKey: string } }>('get_private_key', {
    privateKeyId: key.privateKeyId,
  });
  pk = {
    publicKey: Uint8Array.from(Buffer.from(got.privateKey.publicKey, 'hex')),
    p2pkh: addr('P2PKH'),
    p2wpkh: addr('P2WPKH'),
    p2tr: addr('P2TR'),
    privateKeyId: key.privateKeyId,
  };
  // The addresses the service reports are the ones bitcoinjs derives from the public key.
  expect(bitcoin.payments.p2pkh({ pubkey: pk.publicKey, network: mainnet }).address).toBe(pk.p2pkh);
  expect(bitcoin.payments.p2wpkh({ pubkey: pk.publicKey, network: mainnet }).address).toBe(pk.p2wpkh);
  expect(bitcoin.payments.p2tr({ internalPubkey: pk.publicKey.subarray(1), network: mainnet }).address).toBe(
    pk.p2tr,
  );
});

afterAll(async () => {
  signer?.close();
  await daemon?.close();
  await transport?.close();
  await h?.close();
});

// ---------------------------------------------------------------------------------------------
// PSBTs built with bitcoinjs-lib.

type Kind = 'p2pkh' | 'p2wpkh' | 'p2tr';

interface Spend {
  readonly kind: Kind;
  readonly publicKey: Uint8Array;
  readonly value: bigint;
}

interface Built {
  readonly psbt: Uint8Array;
  readonly prevScripts: Uint8Array[];
  readonly prevValues: bigint[];
}

function scriptOf(kind: Kind, publicKey: Uint8Array): Uint8Array {
  switch (kind) {
    case 'p2pkh':
      return bitcoin.payments.p2pkh({ pubkey: publicKey, network: mainnet }).output!;
    case 'p2wpkh':
      return bitcoin.payments.p2wpkh({ pubkey: publicKey, network: mainnet }).output!;
    case 'p2tr':
      return bitcoin.payments.p2tr({ internalPubkey: publicKey.subarray(1), network: mainnet }).output!;
  }
}

/** One fresh (random) funding transaction paying each spend, and a PSBT spending all of them. */
function buildPsbt(spends: readonly Spend[], edit?: (p: bitcoin.Psbt) => void): Built {
  const funding = new bitcoin.Transaction();
  funding.version = 2;
  funding.addInput(randomBytes(32), 0);
  const prevScripts = spends.map((s) => scriptOf(s.kind, s.publicKey));
  const prevValues = spends.map((s) => s.value);
  prevScripts.forEach((script, i) => funding.addOutput(script, prevValues[i]!));
  const hash = funding.getHash();
  const psbt = new bitcoin.Psbt({ network: mainnet });
  psbt.setVersion(2);
  spends.forEach((s, i) => {
    const base = { hash, index: i, sequence: 0xfffffffd };
    if (s.kind === 'p2pkh') psbt.addInput({ ...base, nonWitnessUtxo: funding.toBuffer() });
    else if (s.kind === 'p2wpkh')
      psbt.addInput({ ...base, witnessUtxo: { script: prevScripts[i]!, value: s.value } });
    else
      psbt.addInput({
        ...base,
        witnessUtxo: { script: prevScripts[i]!, value: s.value },
        tapInternalKey: s.publicKey.subarray(1),
      });
  });
  const total = prevValues.reduce((x, y) => x + y, 0n);
  psbt.addOutput({ script: scriptOf('p2wpkh', PUB_B), value: total - FEE - 5_000n });
  psbt.addOutput({ script: scriptOf('p2tr', PUB_B), value: 5_000n });
  edit?.(psbt);
  return { psbt: psbt.toBuffer(), prevScripts, prevValues };
}

const spend = (kind: Kind, key: TestKey, value = 100_000n): Spend => ({
  kind,
  publicKey: key.publicKey,
  value,
});
const foreign = (kind: Kind = 'p2wpkh'): Spend => ({ kind, publicKey: PUB_B, value: 70_000n });

type Mode = 'SIGNING_MODE_SIGN_TRANSACTION' | 'SIGNING_MODE_SIGN_RAW_PAYLOADS' | 'SIGNING_MODE_AUTO';

function signBitcoin(req: {
  signWith: string;
  mode: Mode;
  unsigned: Uint8Array;
  finalize?: boolean;
  idempotencyKey?: string;
}): Promise<RpcResult<SignTransactionResponse>> {
  // test/helpers/grpc-client.ts types only the `ethereum` member of the oneof; the wire takes `bitcoin`.
  return signer.signTransaction({
    signWith: req.signWith,
    mode: req.mode,
    idempotencyKey: req.idempotencyKey ?? randomUUID(),
    bitcoin: { unsigned: req.unsigned, network: 'BITCOIN_NETWORK_MAINNET', finalize: req.finalize ?? false },
  } as unknown as SignTransactionInput);
}

const activityCount = async () => (await h.service.store.listActivities(org, { limit: 1000 })).length;

/** The unsigned transaction's id as bitcoinjs-lib computes it. */
const unsignedTxid = (psbt: Uint8Array) =>
  bitcoin.Transaction.fromBuffer(bitcoin.Psbt.fromBuffer(psbt).data.globalMap.unsignedTx.toBuffer()).getId();

/** Checks a signed, not finalized PSBT: exactly `ours` carry signatures, and bitcoinjs validates each. */
function checkSignedPsbt(signed: Uint8Array, built: Built, ours: readonly number[], key: TestKey): void {
  const p = bitcoin.Psbt.fromBuffer(signed, { network: mainnet });
  expect(p.txInputs).toHaveLength(built.prevScripts.length);
  expect(p.data.globalMap.unsignedTx.toBuffer()).toEqual(
    bitcoin.Psbt.fromBuffer(built.psbt).data.globalMap.unsignedTx.toBuffer(),
  );
  p.data.inputs.forEach((input, i) => {
    expect(input.finalScriptSig ?? input.finalScriptWitness).toBeUndefined();
    if (ours.includes(i)) {
      expect(p.validateSignaturesOfInput(i, validator)).toBe(true);
      if (built.prevScripts[i]![0] === 0x51) {
        expect(input.tapKeySig).toHaveLength(64);
        expect(input.partialSig ?? []).toHaveLength(0);
      } else {
        expect(input.partialSig?.map((s) => toHex(s.pubkey))).toEqual([toHex(key.publicKey)]);
        expect(input.partialSig![0]!.signature.at(-1)).toBe(bitcoin.Transaction.SIGHASH_ALL);
      }
    } else {
      expect(input.partialSig ?? []).toHaveLength(0);
      expect(input.tapKeySig).toBeUndefined();
      expect(() => p.validateSignaturesOfInput(i, validator)).toThrow(/^No signatures/);
    }
  });
}

/** The response's signatures equal the ones in the PSBT, in input order. */
function checkResponseSignatures(
  res: SignTransactionResponse,
  signed: Uint8Array,
  ours: readonly number[],
): void {
  const p = bitcoin.Psbt.fromBuffer(signed, { network: mainnet });
  expect(res.signatures).toHaveLength(ours.length);
  ours.forEach((i, k) => {
    const got = Buffer.concat([res.signatures[k]!.r, res.signatures[k]!.s]);
    const input = p.data.inputs[i]!;
    if (input.tapKeySig !== undefined) {
      expect(toHex(got)).toBe(toHex(input.tapKeySig.subarray(0, 64)));
      expect(res.signatures[k]!.v).toBe(0);
    } else {
      const der = input.partialSig![0]!.signature;
      expect(toHex(got)).toBe(toHex(bitcoin.script.signature.decode(der).signature));
      expect([0, 1]).toContain(res.signatures[k]!.v);
    }
  });
}

// ---------------------------------------------------------------------------------------------

const MODES = ['SIGNING_MODE_SIGN_TRANSACTION', 'SIGNING_MODE_SIGN_RAW_PAYLOADS'] as const;

describe("SignTransaction(bitcoin) over gRPC: only sign_with's inputs are signed, bitcoinjs validates them", () => {
  for (const mode of MODES) {
    const short = mode.replace('SIGNING_MODE_', '');

    it(`${short}: the default wallet's P2WPKH account, next to a foreign input`, async () => {
      const built = buildPsbt([foreign(), spend('p2wpkh', walletP2wpkh)]);
      const before = await activityCount();
      const res = unwrap(await signBitcoin({ signWith: walletP2wpkh.p2wpkh!, mode, unsigned: built.psbt }));
      expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
      expect(res.mode).toBe(mode);
      expect(res.signer).toBe(walletP2wpkh.p2wpkh);
      expect(res.transactionHash).toBe(unsignedTxid(built.psbt));
      checkSignedPsbt(res.signedTransaction, built, [1], walletP2wpkh);
      checkResponseSignatures(res, res.signedTransaction, [1]);
      expect(await activityCount()).toBe(before + 1);
      const activity = await h.service.store.getActivity(org, res.activityId);
      expect(activity?.type).toBe(
        mode === 'SIGNING_MODE_SIGN_TRANSACTION'
          ? 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'
          : 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
      );
      expect(activity?.fingerprint).toBe(res.fingerprint);
    });

    it(`${short}: the default wallet's P2TR account (BIP-86 key path), next to a foreign input`, async () => {
      const built = buildPsbt([spend('p2tr', walletP2tr, 250_000n), foreign('p2tr')]);
      const res = unwrap(await signBitcoin({ signWith: walletP2tr.p2tr!, mode, unsigned: built.psbt }));
      expect(res.signer).toBe(walletP2tr.p2tr);
      checkSignedPsbt(res.signedTransaction, built, [0], walletP2tr);
      checkResponseSignatures(res, res.signedTransaction, [0]);
      // The Schnorr signature verifies against the tweaked output key, over bitcoinjs's BIP-341 sighash.
      const tx = bitcoin.Transaction.fromBuffer(
        bitcoin.Psbt.fromBuffer(built.psbt).data.globalMap.unsignedTx.toBuffer(),
      );
      const sighash = tx.hashForWitnessV1(0, built.prevScripts, built.prevValues, 0);
      const sig = Buffer.concat([res.signatures[0]!.r, res.signatures[0]!.s]);
      expect(schnorr.verify(sig, sighash, built.prevScripts[0]!.subarray(2))).toBe(true);
    });

    it(`${short}: P2PKH, P2WPKH and P2TR inputs of one private key, a foreign input untouched`, async () => {
      const built = buildPsbt([
        spend('p2pkh', pk, 120_000n),
        foreign(),
        spend('p2wpkh', pk, 130_000n),
        spend('p2tr', pk, 140_000n),
      ]);
      const before = await activityCount();
      const res = unwrap(await signBitcoin({ signWith: pk.privateKeyId!, mode, unsigned: built.psbt }));
      checkSignedPsbt(res.signedTransaction, built, [0, 2, 3], pk);
      checkResponseSignatures(res, res.signedTransaction, [0, 2, 3]);
      // sign_with is an id: the signer is the address of the first signed input.
      expect(res.signer).toBe(pk.p2pkh);
      // Raw mode: one ECDSA activity (by id) and one Schnorr activity (by the P2TR address).
      const added = (await h.service.store.listActivities(org, { limit: 1000 })).slice(
        0,
        (await activityCount()) - before,
      );
      if (mode === 'SIGNING_MODE_SIGN_RAW_PAYLOADS') {
        expect(added).toHaveLength(2);
        const intents = added.map(
          (a) => JSON.parse(a.intentJson) as { signWith: string; payloads: string[] },
        );
        expect(intents.map((i) => [i.signWith, i.payloads.length]).sort()).toEqual(
          [
            [pk.privateKeyId!, 2],
            [pk.p2tr!, 1],
          ].sort(),
        );
      } else {
        expect(added).toHaveLength(1);
      }
    });
  }

  it('RAW_PAYLOADS with sign_with = the P2TR address signs the ECDSA inputs through the key id', async () => {
    const built = buildPsbt([spend('p2wpkh', pk), spend('p2tr', pk)]);
    const res = unwrap(
      await signBitcoin({ signWith: pk.p2tr!, mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', unsigned: built.psbt }),
    );
    expect(res.signer).toBe(pk.p2tr);
    checkSignedPsbt(res.signedTransaction, built, [0, 1], pk);
  });

  it('AUTO signs through sign_transaction and reports that mode', async () => {
    const built = buildPsbt([spend('p2wpkh', pk), foreign()]);
    const res = unwrap(
      await signBitcoin({ signWith: pk.p2wpkh!, mode: 'SIGNING_MODE_AUTO', unsigned: built.psbt }),
    );
    expect(res.mode).toBe('SIGNING_MODE_SIGN_TRANSACTION');
    expect((await h.service.store.getActivity(org, res.activityId))?.type).toBe(
      'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    );
    checkSignedPsbt(res.signedTransaction, built, [0], pk);
  });

  it('replays both raw activities for the same idempotency key; nothing is signed twice', async () => {
    const built = buildPsbt([spend('p2wpkh', pk), spend('p2tr', pk)]);
    const idempotencyKey = randomUUID();
    const req = {
      signWith: pk.privateKeyId!,
      mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS' as const,
      unsigned: built.psbt,
    };
    const first = unwrap(await signBitcoin({ ...req, idempotencyKey }));
    const count = await activityCount();
    const again = unwrap(await signBitcoin({ ...req, idempotencyKey }));
    expect(again.activityId).toBe(first.activityId);
    expect(toHex(again.signatures[0]!.r)).toBe(toHex(first.signatures[0]!.r));
    expect(toHex(again.signatures[1]!.r)).toBe(toHex(first.signatures[1]!.r));
    expect(await activityCount()).toBe(count);
  });
});

describe('finalize = true: the extracted network transaction checks out in @scure/btc-signer', () => {
  for (const mode of MODES) {
    it(`${mode.replace('SIGNING_MODE_', '')}: P2PKH + P2WPKH + P2TR, all of sign_with's key`, async () => {
      const built = buildPsbt([
        spend('p2pkh', pk, 111_000n),
        spend('p2wpkh', pk, 222_000n),
        spend('p2tr', pk, 333_000n),
      ]);
      const res = unwrap(
        await signBitcoin({ signWith: pk.p2wpkh!, mode, unsigned: built.psbt, finalize: true }),
      );
      expect(res.signer).toBe(pk.p2wpkh);
      const raw = res.signedTransaction;

      // @scure/btc-signer parses it and recomputes each sighash from the prevout scripts and amounts.
      const tx = btc.Transaction.fromRaw(raw);
      expect(tx.inputsLength).toBe(3);
      expect(tx.id).toBe(res.transactionHash);
      const legacy = (tx as unknown as { preimageLegacy(i: number, s: Uint8Array, t: number): Uint8Array })
        .preimageLegacy;
      // P2PKH: scriptSig [DER‖type, pubkey].
      const [sig0, pub0] = btc.Script.decode(tx.getInput(0).finalScriptSig!) as Uint8Array[];
      expect(toHex(pub0!)).toBe(toHex(pk.publicKey));
      expect(sig0!.at(-1)).toBe(btc.SigHash.ALL);
      const h0 = legacy.call(tx, 0, built.prevScripts[0]!, btc.SigHash.ALL);
      expect(secp256k1.verify(sig0!.subarray(0, -1), h0, pub0!, { prehash: false, format: 'der' })).toBe(
        true,
      );
      // P2WPKH: witness [DER‖type, pubkey]; BIP-143 scriptCode is the P2PKH script.
      const [sig1, pub1] = tx.getInput(1).finalScriptWitness!;
      expect(toHex(pub1!)).toBe(toHex(pk.publicKey));
      const h1 = tx.preimageWitnessV0(1, btc.p2pkh(pub1!).script, btc.SigHash.ALL, built.prevValues[1]!);
      expect(secp256k1.verify(sig1!.subarray(0, -1), h1, pub1!, { prehash: false, format: 'der' })).toBe(
        true,
      );
      // P2TR key path: witness [64-byte BIP-340 signature] against the output key.
      const [sig2] = tx.getInput(2).finalScriptWitness!;
      expect(sig2).toHaveLength(64);
      const h2 = tx.preimageWitnessV1(2, built.prevScripts, btc.SigHash.DEFAULT, built.prevValues);
      expect(schnorr.verify(sig2!, h2, built.prevScripts[2]!.subarray(2))).toBe(true);
      // A different amount for the taproot input changes BIP-341's sighash: the signature no longer holds.
      const wrong = tx.preimageWitnessV1(2, built.prevScripts, btc.SigHash.DEFAULT, [
        111_000n,
        222_000n,
        333_001n,
      ]);
      expect(schnorr.verify(sig2!, wrong, built.prevScripts[2]!.subarray(2))).toBe(false);

      // bitcoinjs-lib: the same txid from the extracted bytes, and from its own finalize of a non-finalized
      // signature of the same PSBT (ECDSA is deterministic; the taproot witness does not enter the txid).
      expect(bitcoin.Transaction.fromBuffer(raw).getId()).toBe(res.transactionHash);
      const psbtRes = unwrap(await signBitcoin({ signWith: pk.p2wpkh!, mode, unsigned: built.psbt }));
      const p = bitcoin.Psbt.fromBuffer(psbtRes.signedTransaction, { network: mainnet });
      p.finalizeAllInputs();
      const theirs = p.extractTransaction();
      expect(theirs.getId()).toBe(res.transactionHash);
      expect(toHex(theirs.ins[0]!.script)).toBe(toHex(bitcoin.Transaction.fromBuffer(raw).ins[0]!.script));
      expect(p.getFee()).toBe(FEE);
    });
  }
});

describe('refusals: right status and error code, nothing signed', () => {
  async function expectRefused(
    req: Parameters<typeof signBitcoin>[0],
    code: grpcStatus,
    errorCode: string,
    field: string,
  ): Promise<string> {
    const before = await activityCount();
    const result = await signBitcoin(req);
    if (result.ok) throw new Error(`expected ${errorCode}, the call succeeded`);
    expect(result.error.code).toBe(code);
    expect(result.error.metadata.get(ERROR_CODE_TRAILER)).toEqual([errorCode]);
    expect(result.error.metadata.get(ERROR_FIELD_TRAILER)).toEqual([field]);
    expect(await activityCount()).toBe(before);
    return result.error.details;
  }

  for (const mode of MODES) {
    const short = mode.replace('SIGNING_MODE_', '');

    it(`${short}: a PSBT with no input of sign_with's key`, async () => {
      const built = buildPsbt([foreign(), foreign('p2tr')]);
      await expectRefused(
        { signWith: pk.p2wpkh!, mode, unsigned: built.psbt },
        grpcStatus.INVALID_ARGUMENT,
        'BITCOIN_NO_INPUT_FOR_SIGNER',
        'sign_with',
      );
    });

    it(`${short}: an input of sign_with asking for SIGHASH_NONE`, async () => {
      const built = buildPsbt([foreign(), spend('p2wpkh', pk)], (p) =>
        p.updateInput(1, { sighashType: bitcoin.Transaction.SIGHASH_NONE }),
      );
      const details = await expectRefused(
        { signWith: pk.p2wpkh!, mode, unsigned: built.psbt },
        grpcStatus.INVALID_ARGUMENT,
        'BITCOIN_SIGHASH_UNSUPPORTED',
        'bitcoin.unsigned.inputs[1].sighash_type',
      );
      expect(details).toContain('0x2');
    });

    it(`${short}: truncated and trailing bytes`, async () => {
      const built = buildPsbt([spend('p2wpkh', pk)]);
      const truncated = await expectRefused(
        { signWith: pk.p2wpkh!, mode, unsigned: built.psbt.subarray(0, built.psbt.length - 3) },
        grpcStatus.INVALID_ARGUMENT,
        'BITCOIN_MALFORMED_PSBT',
        'bitcoin.unsigned',
      );
      expect(truncated).toMatch(/^bitcoin\.unsigned: failed to pre-parse Bitcoin transaction: .*truncated/);
      const trailing = await expectRefused(
        { signWith: pk.p2wpkh!, mode, unsigned: Uint8Array.of(...built.psbt, 0) },
        grpcStatus.INVALID_ARGUMENT,
        'BITCOIN_MALFORMED_PSBT',
        'bitcoin.unsigned',
      );
      expect(trailing).toContain('trailing byte');
    });

    it(`${short}: finalize with an unsigned input of another key`, async () => {
      const built = buildPsbt([spend('p2wpkh', pk), foreign()]);
      await expectRefused(
        { signWith: pk.p2wpkh!, mode, unsigned: built.psbt, finalize: true },
        grpcStatus.FAILED_PRECONDITION,
        'BITCOIN_CANNOT_FINALIZE',
        'bitcoin.unsigned.inputs[1].partial_sig',
      );
    });
  }

  it('a sign_with the public API does not know', async () => {
    const built = buildPsbt([spend('p2wpkh', pk)]);
    const unknown = bitcoin.payments.p2wpkh({ pubkey: PUB_B, network: mainnet }).address!;
    await expectRefused(
      { signWith: unknown, mode: 'SIGNING_MODE_SIGN_TRANSACTION', unsigned: built.psbt },
      grpcStatus.NOT_FOUND,
      'SIGN_WITH_NOT_FOUND',
      'sign_with',
    );
    await expectRefused(
      { signWith: randomUUID(), mode: 'SIGNING_MODE_SIGN_TRANSACTION', unsigned: built.psbt },
      grpcStatus.NOT_FOUND,
      'SIGN_WITH_NOT_FOUND',
      'sign_with',
    );
  });

  it('RAW_PAYLOADS names the P2TR address it needs when the service knows none for the key; then finds it once added', async () => {
    // The P2WPKH account's key also controls a P2TR output; the service knows no P2TR address for it.
    const built = buildPsbt([spend('p2wpkh', walletP2wpkh), spend('p2tr', walletP2wpkh)]);
    const p2tr = bitcoin.payments.p2tr({
      internalPubkey: walletP2wpkh.publicKey.subarray(1),
      network: mainnet,
    }).address!;
    const details = await expectRefused(
      { signWith: walletP2wpkh.p2wpkh!, mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', unsigned: built.psbt },
      grpcStatus.NOT_FOUND,
      'SIGN_WITH_NOT_FOUND',
      'sign_with',
    );
    expect(details).toContain(p2tr);
    // sign_transaction needs no such address: the service signs each input with the scheme it needs.
    const viaTx = unwrap(
      await signBitcoin({
        signWith: walletP2wpkh.p2wpkh!,
        mode: 'SIGNING_MODE_SIGN_TRANSACTION',
        unsigned: built.psbt,
      }),
    );
    checkSignedPsbt(viaTx.signedTransaction, built, [0, 1], walletP2wpkh);

    // A P2TR account at the same path (same key) makes raw mode possible: the daemon finds it in the wallet.
    const path = h.service.credentials.accounts.find(
      (a) => a.addressFormat === 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH',
    )!.path;
    const added = await client.submit(
      'create_wallet_accounts',
      client.buildActivityBody({
        type: 'ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS',
        parameters: {
          walletId: h.service.credentials.walletId,
          accounts: [
            {
              curve: 'CURVE_SECP256K1',
              pathFormat: 'PATH_FORMAT_BIP32',
              path,
              addressFormat: 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR',
            },
          ],
        },
      }),
    );
    expect(added.result['createWalletAccountsResult']).toEqual({ addresses: [p2tr] });
    const raw = unwrap(
      await signBitcoin({
        signWith: walletP2wpkh.p2wpkh!,
        mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
        unsigned: built.psbt,
      }),
    );
    checkSignedPsbt(raw.signedTransaction, built, [0, 1], walletP2wpkh);
  });
});

describe('the public API over HTTP with @turnkey/http', () => {
  it('TurnkeyClient.signTransaction(TRANSACTION_TYPE_BITCOIN) returns a signed, not finalized PSBT', async () => {
    const c = h.service.credentials;
    const tk = new TurnkeyClient(
      { baseUrl: h.baseUrl },
      new TurnkeyApiKeyStamper({ apiPublicKey: c.apiPublicKey, apiPrivateKey: c.apiPrivateKey }),
    );
    const built = buildPsbt([spend('p2tr', walletP2tr), foreign(), spend('p2tr', walletP2tr, 90_000n)]);
    const res = await tk.signTransaction({
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      timestampMs: String(Date.now()),
      organizationId: c.organizationId,
      parameters: {
        signWith: walletP2tr.p2tr!,
        unsignedTransaction: toHex(built.psbt),
        type: 'TRANSACTION_TYPE_BITCOIN',
      },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const signedHex = res.activity.result.signTransactionResult?.signedTransaction;
    expect(signedHex).toMatch(/^70736274ff[0-9a-f]+$/);
    checkSignedPsbt(Uint8Array.from(Buffer.from(signedHex!, 'hex')), built, [0, 2], walletP2tr);
  });

  it('the service names the input whose sighash type it refuses, and records nothing', async () => {
    const c = h.service.credentials;
    const tk = new TurnkeyClient(
      { baseUrl: h.baseUrl },
      new TurnkeyApiKeyStamper({ apiPublicKey: c.apiPublicKey, apiPrivateKey: c.apiPrivateKey }),
    );
    const built = buildPsbt([spend('p2tr', walletP2tr)], (p) =>
      p.updateInput(0, { sighashType: bitcoin.Transaction.SIGHASH_SINGLE }),
    );
    const before = await activityCount();
    const err = await tk
      .signTransaction({
        type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
        timestampMs: String(Date.now()),
        organizationId: c.organizationId,
        parameters: {
          signWith: walletP2tr.p2tr!,
          unsignedTransaction: toHex(built.psbt),
          type: 'TRANSACTION_TYPE_BITCOIN',
        },
      })
      .then(
        () => undefined,
        (e: unknown) =>
          e as {
            message?: string;
            details?: { countersignErrorCode?: string; fieldViolations?: { field: string }[] }[];
          },
      );
    expect(err).toBeDefined();
    const details = err!.details ?? [];
    expect(details.find((d) => d.countersignErrorCode !== undefined)?.countersignErrorCode).toBe(
      'BITCOIN_SIGHASH_UNSUPPORTED',
    );
    expect(details.find((d) => d.fieldViolations !== undefined)?.fieldViolations?.[0]?.field).toBe(
      'parameters.unsignedTransaction.inputs[0].sighash_type',
    );
    expect(await activityCount()).toBe(before);
  });
});

describe('GetActivity(bitcoin): the completed sign_transaction comes back as the verified PSBT', () => {
  it('returns the PSBT, txid, signatures and signer that SignTransaction returned, checked again', async () => {
    const built = buildPsbt([spend('p2wpkh', pk), foreign(), spend('p2tr', pk, 150_000n)]);
    const res = unwrap(
      await signBitcoin({
        signWith: pk.privateKeyId!,
        mode: 'SIGNING_MODE_SIGN_TRANSACTION',
        unsigned: built.psbt,
      }),
    );
    const stub = openSignerStub<{ GetActivity: UnaryMethod<GetActivityResponse> }>(daemon.address);
    try {
      const got = await new Promise<GetActivityResponse>((resolve, reject) =>
        stub.GetActivity({ activityId: res.activityId }, new grpc.Metadata(), {}, (err, out) =>
          err === null && out !== undefined ? resolve(out) : reject(err ?? new Error('no answer')),
        ),
      );
      expect(got.state).toBe('ACTIVITY_STATE_COMPLETED');
      expect(got.result).toBe('transaction');
      const tx = got.transaction!;
      expect(tx.transactionType).toBe('TRANSACTION_TYPE_BITCOIN');
      expect(Buffer.from(tx.signedTransaction)).toEqual(Buffer.from(res.signedTransaction));
      expect(tx.transactionHash).toBe(unsignedTxid(built.psbt));
      expect(tx.signatures).toEqual(res.signatures);
      checkSignedPsbt(tx.signedTransaction, built, [0, 2], pk);
      // Named by key id, the key's network is the one of its addresses: mainnet, P2WPKH first signed.
      expect(tx.signer).toBe(pk.p2wpkh);
    } finally {
      stub.close();
    }
  });
});
