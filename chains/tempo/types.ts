/** The Tempo (type 0x76) transaction model shared by the parser, the serializer and the gRPC field mapper. */
import type { EthAccessListItem } from '../ethereum/index.js';

/** EIP-2718 type byte of a Tempo transaction. */
export const TEMPO_TX_TYPE = 0x76;
/** Domain byte of the fee payer's preimage (never a transaction on the wire). */
export const FEE_PAYER_MAGIC = 0x78;

/** One call of the atomic batch; `to` null is a contract creation. */
export interface TempoCall {
  readonly to: Uint8Array | null;
  readonly value: bigint;
  readonly data: Uint8Array;
}

export type TempoAccessListItem = EthAccessListItem;

/**
 * An unsigned Tempo transaction. Widths follow the node's types: chain id, gas, nonce and the
 * validity bounds are u64, fees u128, nonce key and call values u256.
 */
export interface TempoTransaction {
  readonly chainId: bigint;
  readonly maxPriorityFeePerGas: bigint;
  readonly maxFeePerGas: bigint;
  readonly gasLimit: bigint;
  /** Executed atomically in order; never empty. */
  readonly calls: readonly TempoCall[];
  readonly accessList: readonly TempoAccessListItem[];
  /** 2D nonce lane: 0 is the protocol nonce, any other key an independent lane (2^256-1: expiring, TIP-1106). */
  readonly nonceKey: bigint;
  readonly nonce: bigint;
  /** Unix seconds; null = unbounded. 0 is not representable (ox writes it as a non-canonical 0x00). */
  readonly validBefore: bigint | null;
  readonly validAfter: bigint | null;
  /** TIP-20 token that pays the fee; null = the protocol's choice. */
  readonly feeToken: Uint8Array | null;
  /**
   * A fee payer pays the fee. The sender then signs the `0x00` marker and does not commit to
   * `feeToken`: the unsigned serialization omits it, and only the fee payer's digest and the final
   * envelope carry it.
   */
  readonly sponsored: boolean;
}

/** A secp256k1 signature: r and s big-endian (at most 32 bytes), yParity 0/1. */
export interface TempoSignature {
  readonly r: Uint8Array;
  readonly s: Uint8Array;
  readonly yParity: number;
}

/** A signed transaction split into its parts. */
export interface ParsedSignedTempoTransaction {
  readonly tx: TempoTransaction;
  /** The sender's preimage (what `senderDigest` hashes): fee payer slot normalized to the marker, no fee token when sponsored. */
  readonly unsigned: Uint8Array;
  /** r and s as 32-byte values. */
  readonly senderSignature: TempoSignature;
  /** Present once the fee payer has signed (sponsored only); r and s as 32-byte values. */
  readonly feePayerSignature: TempoSignature | undefined;
}

/** A call as the gRPC TempoCall message carries it. */
export interface TempoCallFields {
  /** 0x-prefixed 20-byte address; empty for a contract creation. */
  to: string;
  /** Decimal; empty means 0. */
  value: string;
  data: Uint8Array;
}

/** Structured fields as the gRPC TempoTransaction message carries them (proto3 defaults: '' / empty / false). */
export interface TempoTransactionFields {
  chainId: string;
  nonce: string;
  /** Decimal u256; empty means 0 (the protocol nonce). */
  nonceKey: string;
  gasLimit: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  calls: TempoCallFields[];
  accessList: { address: string; storageKeys: Uint8Array[] }[];
  /** Decimal unix seconds; empty = unbounded. */
  validBefore: string;
  validAfter: string;
  /** 0x-prefixed TIP-20 address; empty = the protocol's choice. */
  feeToken: string;
  sponsored: boolean;
}

export const U64_MAX = (1n << 64n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;
