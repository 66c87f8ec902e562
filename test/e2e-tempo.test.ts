/**
 * End to end for Tempo (type 0x76) over real parts only: the real embedded service, the real gRPC
 * daemon wired to it with the in-process transport exactly as `countersign serve` does, a real
 * grpc-js client and a real anvil `--network tempo`. Each transaction is signed in both signing
 * modes from both input forms, checked by a second implementation (ox `TxEnvelopeTempo` and
 * viem/tempo), broadcast and mined. @turnkey/viem signs a Tempo transaction against the HTTP API.
 *
 * Funding: Tempo has no native balance (`anvil_setBalance` gives no fee tokens); anvil's dev
 * accounts hold the pre-deployed TIP-20s, so dev account 0 sends pathUSD and AlphaUSD to the default
 * wallet's Ethereum account in a Tempo transaction it signs locally with viem/tempo.
 */
import { randomBytes } from 'node:crypto';
import { status as grpcStatus } from '@grpc/grpc-js';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper as TurnkeyApiKeyStamper } from '@turnkey/api-key-stamper';
import { createAccount } from '@turnkey/viem';
import { Rlp, Secp256k1 } from 'ox';
import { TxEnvelopeTempo } from 'ox/tempo';
import { getAddress, hexToBytes, isAddressEqual, keccak256, toHex, type Address, type Hex } from 'viem';
import { Account as TempoAccount, Transaction as TempoTx } from 'viem/tempo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import type { Transport } from '../src/client/transport.js';
import { ERROR_CODE_TRAILER } from '../src/daemon/grpc-status.js';
import type { RunningDaemon } from '../src/daemon/start-daemon.js';
import {
  ALPHA_USD,
  PATH_USD,
  sendAndMine,
  startTempoAnvil,
  tokenBalance,
  transferData,
  type RunningTempoAnvil,
  type TempoReceipt,
} from './helpers/anvil-tempo.js';
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
import { DEV_ADDRESS_0, DEV_KEY_0, oxVectors } from './vectors/tempo/vectors.js';

const CHAIN_ID = 31337;
const GAS_LIMIT = 500_000n;
/** anvil's tempo base fee is 10 gwei. */
const MAX_FEE_PER_GAS = 20_000_000_000n;
const MAX_PRIORITY_FEE_PER_GAS = 1n;
/** 1,000,000 units of a 6-decimal TIP-20. */
const FUNDING = 1_000_000_000_000n;

let node: RunningTempoAnvil;
let h: EmbeddedHarness;
let transport: Transport;
let client: PublicApiClient;
let daemon: RunningDaemon;
let signer: SignerClient;
let org: string;
let account: Address;

type Mode = 'SIGNING_MODE_SIGN_TRANSACTION' | 'SIGNING_MODE_SIGN_RAW_PAYLOADS';

interface TempoCallInput {
  readonly to?: string;
  readonly value?: string;
  readonly data?: Uint8Array;
}

/** The proto's TempoTransaction as a client writes it (grpc-client.ts types `ethereum` only). */
interface TempoInput {
  readonly unsigned?: Uint8Array;
  readonly chainId?: string;
  readonly nonce?: string;
  readonly nonceKey?: string;
  readonly gasLimit?: string;
  readonly maxFeePerGas?: string;
  readonly maxPriorityFeePerGas?: string;
  readonly calls?: readonly TempoCallInput[];
  readonly validBefore?: string;
  readonly validAfter?: string;
  readonly feeToken?: string;
  readonly sponsored?: boolean;
}

interface TempoSignInput {
  readonly signWith: string;
  readonly mode?: Mode | 'SIGNING_MODE_AUTO';
  readonly idempotencyKey?: string;
  readonly feePayerSignWith?: string;
  readonly tempo: TempoInput;
}

function signTempo(req: TempoSignInput): Promise<RpcResult<SignTransactionResponse>> {
  // The helper passes the request through to grpc-js unchanged; only its type names `ethereum` alone.
  return signer.signTransaction(req as unknown as SignTransactionInput);
}

async function activityCount(): Promise<number> {
  return (await h.service.store.listActivities(org, { limit: 1000 })).length;
}

beforeAll(async () => {
  [node, h] = await Promise.all([startTempoAnvil(), startEmbedded()]);
  org = h.service.credentials.organizationId;
  const eth = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
  if (eth === undefined) throw new Error('the default wallet has no Ethereum account');
  account = getAddress(eth.address);

  // As src/cli.ts wires `serve` in embedded mode.
  ({ transport, client, daemon } = await startDaemonOnEmbedded(h));
  signer = createSignerClient({ address: daemon.address });

  // Fund our account with both fee-capable tokens from dev account 0 (a plain Tempo tx, viem-signed).
  const dev = TempoAccount.fromSecp256k1(DEV_KEY_0);
  const funding = await dev.signTransaction({
    chainId: CHAIN_ID,
    nonce: await protocolNonce(DEV_ADDRESS_0),
    gas: GAS_LIMIT,
    maxFeePerGas: MAX_FEE_PER_GAS,
    maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
    calls: [
      { to: PATH_USD, data: transferData(account, FUNDING) },
      { to: ALPHA_USD, data: transferData(account, FUNDING) },
    ],
    feeToken: PATH_USD,
  } as never);
  expect((await sendAndMine(node, funding as Hex)).status).toBe('0x1');
  expect(await tokenBalance(node, PATH_USD, account)).toBe(FUNDING);
  expect(await tokenBalance(node, ALPHA_USD, account)).toBe(FUNDING);
});

afterAll(async () => {
  signer?.close();
  await daemon?.close();
  await transport?.close();
  await h?.close();
  await node?.stop();
});

const dec = (n: bigint | number) => n.toString();
const randomAddress = (): Address => getAddress(toHex(randomBytes(20)));

async function protocolNonce(address: string): Promise<number> {
  return Number(BigInt(await node.rpc<string>('eth_getTransactionCount', [address, 'latest'])));
}

async function latestTimestamp(): Promise<number> {
  const block = await node.rpc<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
  return Number(BigInt(block.timestamp));
}

/** What the node charged in one 6-decimal TIP-20: gas × price in attodollars, rounded up to units. */
function feeOf(receipt: TempoReceipt & { gasUsed?: string; effectiveGasPrice?: string }): bigint {
  const wei = BigInt(receipt.gasUsed ?? '0x0') * BigInt(receipt.effectiveGasPrice ?? '0x0');
  return (wei + 10n ** 12n - 1n) / 10n ** 12n;
}

type Kind = 'batch' | 'lane' | 'bounds' | 'feeToken';
type InputForm = 'fields' | 'unsigned';

interface Case {
  readonly kind: Kind;
  readonly mode: Mode;
  readonly input: InputForm;
}

/** Each kind in each mode; each input form in each mode, and each kind from both forms. */
const CASES: readonly Case[] = [
  { kind: 'batch', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'fields' },
  { kind: 'batch', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'unsigned' },
  { kind: 'lane', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'unsigned' },
  { kind: 'lane', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'fields' },
  { kind: 'bounds', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'fields' },
  { kind: 'bounds', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'unsigned' },
  { kind: 'feeToken', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'unsigned' },
  { kind: 'feeToken', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'fields' },
];

/** One transaction as viem/tempo takes it and as the equivalent structured gRPC fields. */
interface Built {
  /** viem/tempo's TransactionSerializableTempo. */
  readonly viem: Record<string, unknown>;
  readonly fields: TempoInput;
  /** TIP-20 transfers the calls make. */
  readonly transfers: readonly { token: string; to: Address; amount: bigint }[];
  readonly nonceKey: bigint;
  readonly feeToken: string | undefined;
}

async function build(kind: Kind): Promise<Built> {
  const nonce = kind === 'lane' ? 0 : await protocolNonce(account);
  // A fresh lane per run: nonce 0 of a random 2D nonce key.
  const nonceKey = kind === 'lane' ? BigInt(toHex(randomBytes(8))) + 1n : 0n;
  const transfers =
    kind === 'batch'
      ? [
          { token: PATH_USD, to: randomAddress(), amount: 1_000n },
          { token: ALPHA_USD, to: randomAddress(), amount: 2_000n },
        ]
      : [{ token: PATH_USD, to: randomAddress(), amount: 3_000n }];
  const feeToken = kind === 'feeToken' ? ALPHA_USD : kind === 'lane' ? PATH_USD : undefined;
  const now = kind === 'bounds' ? await latestTimestamp() : 0;
  const bounds = kind === 'bounds' ? { validAfter: now - 60, validBefore: now + 3_600 } : undefined;
  const calls = transfers.map((t) => ({ to: t.token as Address, data: transferData(t.to, t.amount) }));
  return {
    viem: {
      chainId: CHAIN_ID,
      nonce,
      ...(nonceKey === 0n ? {} : { nonceKey }),
      gas: GAS_LIMIT,
      maxFeePerGas: MAX_FEE_PER_GAS,
      maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
      calls,
      ...(bounds ?? {}),
      ...(feeToken === undefined ? {} : { feeToken }),
    },
    fields: {
      chainId: dec(CHAIN_ID),
      nonce: dec(nonce),
      ...(nonceKey === 0n ? {} : { nonceKey: dec(nonceKey) }),
      gasLimit: dec(GAS_LIMIT),
      maxFeePerGas: dec(MAX_FEE_PER_GAS),
      maxPriorityFeePerGas: dec(MAX_PRIORITY_FEE_PER_GAS),
      calls: calls.map((c) => ({ to: c.to, data: hexToBytes(c.data) })),
      ...(bounds === undefined
        ? {}
        : { validAfter: dec(bounds.validAfter), validBefore: dec(bounds.validBefore) }),
      ...(feeToken === undefined ? {} : { feeToken }),
    },
    transfers,
    nonceKey,
    feeToken,
  };
}

/** The sender viem/tempo recovers from a signed envelope, lower-case. */
function fromOf(signed: Hex): string | undefined {
  const tx = TempoTx.deserialize(signed as `0x76${string}`) as { from?: string };
  return tx.from?.toLowerCase();
}

const viemSignature = (sig: { r: Uint8Array; s: Uint8Array; v: number }) => ({
  r: toHex(sig.r, { size: 32 }),
  s: toHex(sig.s, { size: 32 }),
  yParity: sig.v,
});

describe('SignTransaction (tempo) over gRPC, mined on anvil --network tempo', () => {
  for (const { kind, mode, input } of CASES) {
    it(`${kind}: ${mode.replace('SIGNING_MODE_', '')} from ${input}`, async () => {
      const built = await build(kind);
      // The unsigned input comes from a second implementation: viem/tempo's serializer.
      const unsignedHex = (await TempoTx.serialize(built.viem as never)) as Hex;
      const res = unwrap(
        await signTempo({
          signWith: account,
          mode,
          tempo: input === 'unsigned' ? { unsigned: hexToBytes(unsignedHex) } : built.fields,
        }),
      );
      expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
      expect(res.mode).toBe(mode);
      expect(res.signer).toBe(account);
      expect((await h.service.store.getActivity(org, res.activityId))?.type).toBe(
        mode === 'SIGNING_MODE_SIGN_TRANSACTION'
          ? 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'
          : 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
      );
      const signedHex = toHex(res.signedTransaction);
      expect(signedHex.slice(0, 4)).toBe('0x76');
      expect(res.transactionHash).toBe(keccak256(signedHex));
      expect(res.signatures).toHaveLength(1);

      // viem/tempo assembles the same bytes from the unsigned transaction and the returned signature.
      const sig = res.signatures[0]!;
      expect(await TempoTx.serialize(built.viem as never, viemSignature(sig))).toBe(signedHex);
      expect(fromOf(signedHex)).toBe(account.toLowerCase());

      // ox: the fields as built, and the sender signature over ox's own sign payload recovers us.
      const env = TxEnvelopeTempo.deserialize(signedHex as TxEnvelopeTempo.Serialized);
      expect(env.chainId).toBe(CHAIN_ID);
      expect(env.nonceKey ?? 0n).toBe(built.nonceKey);
      expect(String(env.feeToken ?? '').toLowerCase()).toBe(built.feeToken?.toLowerCase() ?? '');
      expect(env.validBefore).toBe(built.viem['validBefore']);
      expect(env.validAfter).toBe(built.viem['validAfter']);
      expect(env.calls.map((c) => [c.to?.toLowerCase(), c.data])).toEqual(
        built.transfers.map((t) => [t.token.toLowerCase(), transferData(t.to, t.amount)]),
      );
      expect(TxEnvelopeTempo.getSignPayload(env)).toBe(keccak256(unsignedHex));
      expect(
        Secp256k1.recoverAddress({
          payload: TxEnvelopeTempo.getSignPayload(env),
          signature: { r: BigInt(toHex(sig.r)), s: BigInt(toHex(sig.s)), yParity: sig.v },
        }).toLowerCase(),
      ).toBe(account.toLowerCase());
      expect(env.from?.toLowerCase()).toBe(account.toLowerCase());

      // Mined by the node: status, type, hash, sender, balances, nonces.
      const fundsBefore = await Promise.all(built.transfers.map((t) => tokenBalance(node, t.token, t.to)));
      const [pathBefore, alphaBefore, nonceBefore] = await Promise.all([
        tokenBalance(node, PATH_USD, account),
        tokenBalance(node, ALPHA_USD, account),
        protocolNonce(account),
      ]);
      const receipt = (await sendAndMine(node, signedHex)) as TempoReceipt & {
        gasUsed?: string;
        effectiveGasPrice?: string;
      };
      expect(receipt).toMatchObject({ status: '0x1', type: '0x76', transactionHash: res.transactionHash });
      expect(isAddressEqual(receipt.from as Address, account)).toBe(true);
      const fundsAfter = await Promise.all(built.transfers.map((t) => tokenBalance(node, t.token, t.to)));
      expect(fundsAfter.map((b, i) => b - fundsBefore[i]!)).toEqual(built.transfers.map((t) => t.amount));
      // A 2D-nonce lane leaves the protocol nonce alone.
      expect(await protocolNonce(account)).toBe(nonceBefore + (kind === 'lane' ? 0 : 1));
      if (kind === 'feeToken') {
        // The fee came out of AlphaUSD as asked; pathUSD moved by the transfer only.
        const [pathAfter, alphaAfter] = await Promise.all([
          tokenBalance(node, PATH_USD, account),
          tokenBalance(node, ALPHA_USD, account),
        ]);
        expect(pathBefore - pathAfter).toBe(3_000n);
        expect(alphaBefore - alphaAfter).toBe(feeOf(receipt));
        expect(feeOf(receipt)).toBeGreaterThan(0n);
      }
    });
  }

  it('AUTO signs through sign_transaction and reports that mode', async () => {
    const built = await build('batch');
    const res = unwrap(
      await signTempo({ signWith: account, mode: 'SIGNING_MODE_AUTO', tempo: built.fields }),
    );
    expect(res.mode).toBe('SIGNING_MODE_SIGN_TRANSACTION');
    expect((await h.service.store.getActivity(org, res.activityId))?.type).toBe(
      'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    );
    expect((await sendAndMine(node, toHex(res.signedTransaction))).status).toBe('0x1');
  });
});

/** A fresh secp256k1 key in the organization, with no fee tokens on the chain. */
async function freshKey(): Promise<{ privateKeyId: string; address: Address }> {
  const activity = await client.submit(
    'create_private_keys',
    client.buildActivityBody({
      type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2',
      parameters: {
        privateKeys: [
          {
            privateKeyName: `tempo sender ${toHex(randomBytes(6))}`,
            curve: 'CURVE_SECP256K1',
            privateKeyTags: [],
            addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
          },
        ],
      },
    }),
  );
  const result = activity.result['createPrivateKeysResultV2'] as {
    privateKeys: { privateKeyId: string; addresses: { format: string; address: string }[] }[];
  };
  const key = result.privateKeys[0]!;
  const address = getAddress(key.addresses.find((a) => a.format === 'ADDRESS_FORMAT_ETHEREUM')!.address);
  expect(await tokenBalance(node, PATH_USD, address)).toBe(0n);
  expect(await tokenBalance(node, ALPHA_USD, address)).toBe(0n);
  return { privateKeyId: key.privateKeyId, address };
}

/** Our account's combined stable balance: whichever token the fee was charged in, it shows here. */
async function stables(owner: string): Promise<bigint> {
  return (await tokenBalance(node, PATH_USD, owner)) + (await tokenBalance(node, ALPHA_USD, owner));
}

/** A call the empty sender can make: read its own pathUSD balance. */
const readCall = (owner: string) => ({
  to: PATH_USD as Address,
  data: `0x70a08231${owner.slice(2).toLowerCase().padStart(64, '0')}` as Hex,
});

/** ox checks of a final sponsored envelope: the sender and the fee payer each recover. */
function checkSponsoredWithOx(signedHex: Hex, sender: Address, feePayer: Address): void {
  const env = TxEnvelopeTempo.deserialize(signedHex as TxEnvelopeTempo.Serialized);
  expect(env.from?.toLowerCase()).toBe(sender.toLowerCase());
  expect(env.feePayerSignature).toBeTruthy();
  const payload = TxEnvelopeTempo.getFeePayerSignPayload(env, { sender });
  expect(Secp256k1.recoverAddress({ payload, signature: env.feePayerSignature! }).toLowerCase()).toBe(
    feePayer.toLowerCase(),
  );
}

describe('sponsored Tempo transactions: an empty sender, our account pays', () => {
  it('SIGN_TRANSACTION from fields, sign_with a private key id, fee_payer_sign_with in the same request', async () => {
    const sender = await freshKey();
    const fields: TempoInput = {
      chainId: dec(CHAIN_ID),
      nonce: '0',
      gasLimit: dec(GAS_LIMIT),
      maxFeePerGas: dec(MAX_FEE_PER_GAS),
      maxPriorityFeePerGas: dec(MAX_PRIORITY_FEE_PER_GAS),
      calls: [{ to: readCall(sender.address).to, data: hexToBytes(readCall(sender.address).data) }],
      feeToken: PATH_USD,
      sponsored: true,
    };
    const before = await activityCount();
    const res = unwrap(
      await signTempo({
        signWith: sender.privateKeyId,
        feePayerSignWith: account,
        mode: 'SIGNING_MODE_SIGN_TRANSACTION',
        tempo: fields,
      }),
    );
    // Two activities: the sender's sign_transaction and the fee payer's sign_raw_payloads.
    expect(await activityCount()).toBe(before + 2);
    expect((await h.service.store.getActivity(org, res.activityId))?.type).toBe(
      'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
    );
    expect(res.signer).toBe(sender.address);
    expect(res.signatures).toHaveLength(2);
    const signedHex = toHex(res.signedTransaction);
    expect(res.transactionHash).toBe(keccak256(signedHex));
    checkSponsoredWithOx(signedHex, sender.address, account);
    // The final envelope carries the fee token the fee payer committed to.
    expect(String(TxEnvelopeTempo.deserialize(signedHex as TxEnvelopeTempo.Serialized).feeToken)).toBe(
      PATH_USD,
    );
    // viem/tempo builds the same final envelope from the two signatures.
    const viemTx = {
      chainId: CHAIN_ID,
      nonce: 0,
      gas: GAS_LIMIT,
      maxFeePerGas: MAX_FEE_PER_GAS,
      maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
      calls: [readCall(sender.address)],
      feeToken: PATH_USD,
      feePayerSignature: viemSignature(res.signatures[1]!),
    };
    expect(await TempoTx.serialize(viemTx as never, viemSignature(res.signatures[0]!))).toBe(signedHex);

    const [payerPath, payerAlpha] = [
      await tokenBalance(node, PATH_USD, account),
      await tokenBalance(node, ALPHA_USD, account),
    ];
    const receipt = (await sendAndMine(node, signedHex)) as TempoReceipt & {
      gasUsed?: string;
      effectiveGasPrice?: string;
    };
    expect(receipt).toMatchObject({ status: '0x1', type: '0x76', transactionHash: res.transactionHash });
    // anvil reports feePayer = sender in receipts (chains.md 2); the balances say who paid.
    expect(await stables(sender.address)).toBe(0n);
    expect(payerPath - (await tokenBalance(node, PATH_USD, account))).toBe(feeOf(receipt));
    expect(await tokenBalance(node, ALPHA_USD, account)).toBe(payerAlpha);
  });

  it('SIGN_RAW_PAYLOADS from viem/tempo unsigned bytes (feePayer: true), fee payer in the same request', async () => {
    const sender = await freshKey();
    const viemTx = {
      chainId: CHAIN_ID,
      nonce: 0,
      gas: GAS_LIMIT,
      maxFeePerGas: MAX_FEE_PER_GAS,
      maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
      calls: [readCall(sender.address)],
      feePayer: true,
    };
    const unsignedHex = (await TempoTx.serialize(viemTx as never)) as Hex;
    const res = unwrap(
      await signTempo({
        signWith: sender.address,
        feePayerSignWith: account,
        mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
        tempo: { unsigned: hexToBytes(unsignedHex) },
      }),
    );
    const signedHex = toHex(res.signedTransaction);
    checkSponsoredWithOx(signedHex, sender.address, account);
    const before = await stables(account);
    expect((await sendAndMine(node, signedHex)).status).toBe('0x1');
    expect(await stables(sender.address)).toBe(0n);
    expect(await stables(account)).toBeLessThan(before);
  });

  it('a retry with the same idempotency key signs nothing twice; another request under it conflicts', async () => {
    const sender = await freshKey();
    const req: TempoSignInput = {
      signWith: sender.address,
      feePayerSignWith: account,
      idempotencyKey: `tempo-${toHex(randomBytes(8))}`,
      mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
      tempo: {
        chainId: dec(CHAIN_ID),
        nonce: '0',
        gasLimit: dec(GAS_LIMIT),
        maxFeePerGas: dec(MAX_FEE_PER_GAS),
        maxPriorityFeePerGas: dec(MAX_PRIORITY_FEE_PER_GAS),
        calls: [{ to: PATH_USD, data: hexToBytes(readCall(sender.address).data) }],
        feeToken: PATH_USD,
        sponsored: true,
      },
    };
    const first = unwrap(await signTempo(req));
    const count = await activityCount();
    const again = unwrap(await signTempo(req));
    expect(await activityCount()).toBe(count);
    expect(again.activityId).toBe(first.activityId);
    expect(toHex(again.signedTransaction)).toBe(toHex(first.signedTransaction));
    // Same key, another fee token: the fee payer would commit to something else.
    const other = await signTempo({ ...req, tempo: { ...req.tempo, feeToken: ALPHA_USD } });
    if (other.ok) throw new Error('expected FAILED_PRECONDITION, the call succeeded');
    expect(other.error.code).toBe(grpcStatus.FAILED_PRECONDITION);
    expect(other.error.metadata.get(ERROR_CODE_TRAILER)).toEqual(['IDEMPOTENCY_KEY_CONFLICT']);
    expect(await activityCount()).toBe(count);
    expect((await sendAndMine(node, toHex(first.signedTransaction))).status).toBe('0x1');
  });

  it('returns the sender-signed hand-off without fee_payer_sign_with; the fee payer completes it through sign_transaction', async () => {
    const sender = await freshKey();
    const res = unwrap(
      await signTempo({
        signWith: sender.address,
        mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
        tempo: {
          chainId: dec(CHAIN_ID),
          nonce: '0',
          gasLimit: dec(GAS_LIMIT),
          maxFeePerGas: dec(MAX_FEE_PER_GAS),
          maxPriorityFeePerGas: dec(MAX_PRIORITY_FEE_PER_GAS),
          calls: [{ to: PATH_USD, data: hexToBytes(readCall(sender.address).data) }],
          sponsored: true,
        },
      }),
    );
    expect(res.signatures).toHaveLength(1);
    const handOff = toHex(res.signedTransaction);
    // ox reads the hand-off as sender-signed and awaiting its fee payer.
    const env = TxEnvelopeTempo.deserialize(handOff as TxEnvelopeTempo.Serialized);
    expect(env.feePayerSignature).toBeNull();
    expect(env.from?.toLowerCase()).toBe(sender.address.toLowerCase());
    // The node refuses it: nobody pays yet.
    await expect(node.rpc('eth_sendRawTransaction', [handOff])).rejects.toThrow();

    // The fee payer signs the hand-off later, through the public API's sign_transaction.
    const activity = await client.submit(
      'sign_transaction',
      client.buildActivityBody({
        type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
        parameters: {
          signWith: account,
          unsignedTransaction: handOff.slice(2),
          type: 'TRANSACTION_TYPE_TEMPO',
        },
      }),
    );
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const finalHex =
      `0x${(activity.result['signTransactionResult'] as { signedTransaction: string }).signedTransaction}` as Hex;
    checkSponsoredWithOx(finalHex, sender.address, account);
    const before = await stables(account);
    expect((await sendAndMine(node, finalHex)).status).toBe('0x1');
    expect(await stables(sender.address)).toBe(0n);
    expect(await stables(account)).toBeLessThan(before);

    // The sender's own key cannot pose as its fee payer.
    const again = await client
      .submit(
        'sign_transaction',
        client.buildActivityBody({
          type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
          parameters: {
            signWith: sender.address,
            unsignedTransaction: handOff.slice(2),
            type: 'TRANSACTION_TYPE_TEMPO',
          },
        }),
      )
      .catch((e: unknown) => e);
    expect(String(again)).toMatch(/is the sender of this sponsored transaction/);
  });
});

describe('bad Tempo input: the right status and error code, nothing signed', () => {
  const base = (): TempoInput => ({
    chainId: dec(CHAIN_ID),
    nonce: '0',
    gasLimit: dec(GAS_LIMIT),
    maxFeePerGas: dec(MAX_FEE_PER_GAS),
    maxPriorityFeePerGas: dec(MAX_PRIORITY_FEE_PER_GAS),
    calls: [{ to: PATH_USD, data: hexToBytes(transferData(DEV_ADDRESS_0, 1n)) }],
  });
  const unsignedOf = (patch: Record<number, unknown>, trailing = ''): Uint8Array => {
    const ok = TxEnvelopeTempo.serialize({
      chainId: CHAIN_ID,
      gas: GAS_LIMIT,
      maxFeePerGas: MAX_FEE_PER_GAS,
      calls: [{ to: PATH_USD, data: transferData(DEV_ADDRESS_0, 1n) }],
    });
    const items = Rlp.toHex(`0x${ok.slice(4)}`) as unknown[];
    for (const [i, v] of Object.entries(patch)) items[Number(i)] = v;
    return hexToBytes(`0x76${Rlp.fromHex(items as never).slice(2)}${trailing}` as Hex);
  };
  const keyAuthorized = oxVectors.find((v) => v.field === 'key_authorization')!;

  const BAD: readonly {
    name: string;
    req: () => TempoSignInput;
    code: string;
    details: RegExp;
  }[] = [
    {
      name: 'an empty calls list (fields)',
      req: () => ({ signWith: account, tempo: { ...base(), calls: [] } }),
      code: 'FIELD_MISSING',
      details: /^tempo\.calls: is required/,
    },
    {
      name: 'an empty calls list (unsigned)',
      req: () => ({ signWith: account, tempo: { unsigned: unsignedOf({ 4: [] }) } }),
      code: 'TEMPO_MALFORMED_TRANSACTION',
      details: /^tempo\.unsigned: .*calls: must hold at least one call/,
    },
    {
      name: 'valid_before equal to valid_after (fields)',
      req: () => ({
        signWith: account,
        tempo: { ...base(), validAfter: '1700000000', validBefore: '1700000000' },
      }),
      code: 'FIELD_INVALID',
      details: /^tempo\.valid_before: .*must be greater than valid_after/,
    },
    {
      name: 'valid_before before valid_after (unsigned)',
      req: () => ({ signWith: account, tempo: { unsigned: unsignedOf({ 8: '0x64', 9: '0xc8' }) } }),
      code: 'TEMPO_MALFORMED_TRANSACTION',
      details: /^tempo\.unsigned: .*valid_before: \(100\) must be greater than valid_after \(200\)/,
    },
    {
      name: 'a trailing byte after the envelope',
      req: () => ({ signWith: account, tempo: { unsigned: unsignedOf({}, '00') } }),
      code: 'TEMPO_MALFORMED_TRANSACTION',
      details: /^tempo\.unsigned: .*trailing byte/,
    },
    {
      name: 'a key authorization (access key provisioning)',
      req: () => ({ signWith: account, tempo: { unsigned: hexToBytes(keyAuthorized.hex as Hex) } }),
      code: 'TEMPO_UNSUPPORTED_FEATURE',
      details: /^tempo\.unsigned: .*key_authorization/,
    },
    {
      name: 'unsigned bytes together with structured fields',
      req: () => ({ signWith: account, tempo: { ...base(), unsigned: unsignedOf({}) } }),
      code: 'FIELD_INVALID',
      details: /^tempo: set either unsigned or the structured fields/,
    },
    {
      name: 'fee_payer_sign_with on a transaction that is not sponsored',
      req: () => ({ signWith: account, feePayerSignWith: DEV_ADDRESS_0, tempo: base() }),
      code: 'FIELD_INVALID',
      details: /^fee_payer_sign_with: the transaction is not sponsored/,
    },
  ];

  for (const bad of BAD) {
    it(`refuses ${bad.name} with ${bad.code}`, async () => {
      const before = await activityCount();
      const result = await signTempo(bad.req());
      if (result.ok) throw new Error('expected INVALID_ARGUMENT, the call succeeded');
      expect(result.error.code).toBe(grpcStatus.INVALID_ARGUMENT);
      expect(result.error.metadata.get(ERROR_CODE_TRAILER)).toEqual([bad.code]);
      expect(result.error.details).toMatch(bad.details);
      expect(await activityCount()).toBe(before);
    });
  }

  it('the service refuses a malformed TRANSACTION_TYPE_TEMPO payload naming parameters.unsignedTransaction', async () => {
    const activity = await client
      .submit(
        'sign_transaction',
        client.buildActivityBody({
          type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
          parameters: {
            signWith: account,
            unsignedTransaction: toHex(unsignedOf({}, '00')).slice(2),
            type: 'TRANSACTION_TYPE_TEMPO',
          },
        }),
      )
      .catch((e: unknown) => e);
    expect(String(activity)).toMatch(
      /parameters\.unsignedTransaction: failed to pre-parse Tempo transaction: .*trailing byte/,
    );
  });
});

describe('@turnkey/viem against the embedded HTTP API', () => {
  it('createAccount signs a viem/tempo transaction as TRANSACTION_TYPE_TEMPO; it is mined', async () => {
    const c = h.service.credentials;
    const tk = new TurnkeyClient(
      { baseUrl: h.baseUrl },
      new TurnkeyApiKeyStamper({ apiPublicKey: c.apiPublicKey, apiPrivateKey: c.apiPrivateKey }),
    );
    // @turnkey/viem pins its own @turnkey/http; the class is the same at run time.
    const tkAccount = await createAccount({ client: tk as never, organizationId: org, signWith: account });
    const to = randomAddress();
    const tx = {
      chainId: CHAIN_ID,
      nonce: await protocolNonce(account),
      gas: GAS_LIMIT,
      maxFeePerGas: MAX_FEE_PER_GAS,
      maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
      calls: [{ to: PATH_USD as Address, data: transferData(to, 4_000n) }],
      feeToken: PATH_USD,
    };
    const signed = (await tkAccount.signTransaction(tx as never, {
      serializer: TempoTx.serialize as never,
    })) as Hex;
    expect(signed.slice(0, 4)).toBe('0x76');
    const [latest] = await h.service.store.listActivities(org, { limit: 1 });
    expect(latest?.type).toBe('ACTIVITY_TYPE_SIGN_TRANSACTION_V2');
    expect(JSON.parse(latest!.intentJson) as unknown).toMatchObject({ type: 'TRANSACTION_TYPE_TEMPO' });
    expect(fromOf(signed)).toBe(account.toLowerCase());
    const receipt = await sendAndMine(node, signed);
    expect(receipt).toMatchObject({ status: '0x1', type: '0x76', transactionHash: keccak256(signed) });
    expect(await tokenBalance(node, PATH_USD, to)).toBe(4_000n);
  });
});
