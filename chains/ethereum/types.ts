/** The Ethereum transaction model shared by the parser, the serializer and the gRPC field mapper. */

/** Closed set of supported envelopes (EIP-2718 types 0x01–0x04 plus legacy). */
export const ETH_TX_TYPES = ['legacy', 'eip2930', 'eip1559', 'eip4844', 'eip7702'] as const;
export type EthTxType = (typeof ETH_TX_TYPES)[number];

export interface EthAccessListItem {
  readonly address: Uint8Array;
  readonly storageKeys: readonly Uint8Array[];
}

/** A signed EIP-7702 authorization tuple as it sits in the transaction. */
export interface EthAuthorization {
  readonly chainId: bigint;
  readonly address: Uint8Array;
  readonly nonce: bigint;
  /** EIP-7702 allows any value below 2^8 here; only 0/1 recover. */
  readonly yParity: number;
  readonly r: bigint;
  readonly s: bigint;
}

export interface EthTransaction {
  readonly type: EthTxType;
  /** undefined only for a pre-EIP-155 legacy transaction. */
  readonly chainId: bigint | undefined;
  readonly nonce: bigint;
  readonly gasLimit: bigint;
  /** legacy, eip2930 */
  readonly gasPrice?: bigint;
  /** eip1559, eip4844, eip7702 */
  readonly maxFeePerGas?: bigint;
  readonly maxPriorityFeePerGas?: bigint;
  /** null = contract creation (not allowed for eip4844/eip7702). */
  readonly to: Uint8Array | null;
  readonly value: bigint;
  readonly data: Uint8Array;
  readonly accessList: readonly EthAccessListItem[];
  readonly maxFeePerBlobGas?: bigint;
  readonly blobVersionedHashes?: readonly Uint8Array[];
  readonly authorizationList?: readonly EthAuthorization[];
}

/** Structured fields as the gRPC EthereumTransaction message carries them (proto3 defaults: '' / empty). */
export interface EthTransactionFields {
  type: 'UNSPECIFIED' | 'LEGACY' | 'EIP2930' | 'EIP1559' | 'EIP4844' | 'EIP7702';
  chainId: string;
  nonce: string;
  to: string;
  value: string;
  data: Uint8Array;
  gasLimit: string;
  gasPrice: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  accessList: { address: string; storageKeys: Uint8Array[] }[];
  maxFeePerBlobGas: string;
  blobVersionedHashes: Uint8Array[];
  authorizationList: {
    chainId: string;
    address: string;
    nonce: string;
    yParity: number;
    r: Uint8Array;
    s: Uint8Array;
  }[];
  legacyWithoutChainId: boolean;
}

/** A signed transaction split into its unsigned body and signature. */
export interface ParsedSignedTransaction {
  tx: EthTransaction;
  /** The unsigned serialization the signature commits to. */
  unsigned: Uint8Array;
  /** 32 bytes, left-padded. */
  r: Uint8Array;
  /** 32 bytes, left-padded. */
  s: Uint8Array;
  yParity: number;
}

/** EIP-2681: a transaction whose nonce is ≥ 2^64 - 1 is invalid. */
export const MAX_TX_NONCE = (1n << 64n) - 2n;
/** EIP-4844 blob versioned hashes start with the KZG version byte. */
export const VERSIONED_HASH_VERSION_KZG = 0x01;
