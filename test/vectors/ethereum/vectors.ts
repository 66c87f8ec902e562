/** Typed access to the Ethereum JSON fixtures, plus converters the cross-check tests share. */
import { readFileSync } from 'node:fs';
import { createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common';
import type { Hex, TransactionSerializable } from 'viem';
import type { EthTransaction, EthTransactionFields } from '../../../chains/ethereum/index.js';

function load<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8')) as T;
}

export function hex(h: string): Uint8Array {
  return new Uint8Array(Buffer.from(h.startsWith('0x') ? h.slice(2) : h, 'hex'));
}

export function to0x(b: Uint8Array): Hex {
  return `0x${Buffer.from(b).toString('hex')}`;
}

export interface FieldsJson extends Omit<
  EthTransactionFields,
  'data' | 'accessList' | 'blobVersionedHashes' | 'authorizationList'
> {
  data: string;
  accessList: { address: string; storageKeys: string[] }[];
  blobVersionedHashes: string[];
  authorizationList: { chainId: string; address: string; nonce: string; yParity: number; r: string; s: string }[];
}

export interface TransactionVector {
  name: string;
  fields: FieldsJson;
  unsigned: Hex;
  digest: Hex;
  signed: Hex;
  hash: Hex;
  sender: Hex;
}

export const transactionVectors = load<{ privateKey: Hex; sender: Hex; transactions: TransactionVector[] }>(
  'transactions.json',
);
export const eip191Vectors = load<{ valid: { text?: string; hex?: string; digest: Hex }[] }>('eip191.json');
export const eip712Vectors = load<{ valid: { name: string; json: string; digest: Hex; domainSeparator?: Hex }[] }>(
  'eip712.json',
);
export const eip7702Vectors = load<{ valid: { json: string; digest: Hex }[] }>('eip7702.json');
export const eip155Vectors = load<{
  valid: {
    name: string;
    privateKey: Hex;
    unsigned: Hex;
    digest: Hex;
    signed: Hex;
    sender: Hex;
  }[];
}>('eip155.json');
export const invalidVectors = load<{ unsigned: { name: string; hex: Hex; code: string; message?: string }[] }>(
  'invalid.json',
);

/** Fixture fields (bytes as hex) → the gRPC field shape. */
export function fieldsFromJson(f: FieldsJson): EthTransactionFields {
  return {
    ...f,
    data: hex(f.data),
    accessList: f.accessList.map((e) => ({ address: e.address, storageKeys: e.storageKeys.map(hex) })),
    blobVersionedHashes: f.blobVersionedHashes.map(hex),
    authorizationList: f.authorizationList.map((a) => ({ ...a, r: hex(a.r), s: hex(a.s) })),
  };
}

/** Our model → viem's serializable transaction (viem takes bigints where it types numbers). */
export function toViem(tx: EthTransaction): TransactionSerializable {
  const n = (v: bigint): number => v as unknown as number;
  const common = {
    nonce: n(tx.nonce),
    gas: tx.gasLimit,
    to: tx.to === null ? null : to0x(tx.to),
    value: tx.value,
    data: to0x(tx.data),
  };
  // viem does number arithmetic on a legacy chainId; beyond 2^53 only bigints keep the value.
  const c = tx.chainId ?? 0n;
  const chainId = c <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(c) : n(c);
  const accessList = tx.accessList.map((e) => ({ address: to0x(e.address), storageKeys: e.storageKeys.map(to0x) }));
  const fees = { maxFeePerGas: tx.maxFeePerGas ?? 0n, maxPriorityFeePerGas: tx.maxPriorityFeePerGas ?? 0n };
  switch (tx.type) {
    case 'legacy':
      return {
        type: 'legacy',
        ...common,
        gasPrice: tx.gasPrice ?? 0n,
        ...(tx.chainId === undefined ? {} : { chainId }),
      };
    case 'eip2930':
      return { type: 'eip2930', ...common, chainId, gasPrice: tx.gasPrice ?? 0n, accessList };
    case 'eip1559':
      return { type: 'eip1559', ...common, chainId, ...fees, accessList };
    case 'eip4844':
      return {
        type: 'eip4844',
        ...common,
        to: to0x(tx.to ?? new Uint8Array(20)),
        chainId,
        ...fees,
        accessList,
        maxFeePerBlobGas: tx.maxFeePerBlobGas ?? 0n,
        blobVersionedHashes: (tx.blobVersionedHashes ?? []).map(to0x),
      };
    case 'eip7702':
      return {
        type: 'eip7702',
        ...common,
        to: to0x(tx.to ?? new Uint8Array(20)),
        chainId,
        ...fees,
        accessList,
        authorizationList: (tx.authorizationList ?? []).map((a) => ({
          chainId: n(a.chainId),
          address: to0x(a.address),
          nonce: n(a.nonce),
          yParity: a.yParity,
          r: `0x${a.r.toString(16).padStart(64, '0')}` as Hex,
          s: `0x${a.s.toString(16).padStart(64, '0')}` as Hex,
        })),
      };
  }
}

/**
 * A stand-in for @ethereumjs' KZG backend: it insists on one being configured before it builds any
 * 4844 transaction, but never calls it for a body without blobs. Every method throws, so a call
 * would show up as a test failure rather than a fake result.
 */
type KZG = NonNullable<NonNullable<NonNullable<Parameters<typeof createCustomCommon>[2]>['customCrypto']>['kzg']>;
const noKzg: KZG = {
  blobToKzgCommitment: unused,
  computeBlobProof: unused,
  verifyProof: unused,
  verifyBlobProofBatch: unused,
  computeCells: unused,
  computeCellsAndProofs: unused,
  recoverCellsAndProofs: unused,
  verifyCellKzgProofBatch: unused,
};
function unused(): never {
  throw new Error('KZG is not used for blob-free 4844 bodies');
}

/** An @ethereumjs Common at Prague for `chainId` (mainnet rules otherwise). */
export function ethereumjsCommon(chainId: bigint | undefined) {
  return createCustomCommon({ chainId: Number(chainId ?? 1n) }, Mainnet, {
    hardfork: Hardfork.Prague,
    customCrypto: { kzg: noKzg },
  });
}
