/** The Bitcoin transaction and PSBT (BIP-174 version 0) model shared by the parser, sighash and signer code. */

/** Networks whose address encodings `describeTransaction` knows (signet uses testnet's). */
export const BITCOIN_NETWORKS = ['mainnet', 'testnet', 'regtest'] as const;
export type BitcoinNetwork = (typeof BITCOIN_NETWORKS)[number];

export interface TxInput {
  /** The previous transaction's id in internal byte order (as serialized, the reverse of what explorers show). */
  readonly prevTxid: Uint8Array;
  readonly vout: number;
  readonly scriptSig: Uint8Array;
  readonly sequence: number;
  /** BIP-141 witness stack; empty when the input has none. */
  readonly witness: readonly Uint8Array[];
}

export interface TxOutput {
  /** Satoshis, 0 ≤ value ≤ 21 000 000 · 10^8. */
  readonly value: bigint;
  readonly script: Uint8Array;
}

export interface BitcoinTransaction {
  /** Signed 32-bit, as consensus reads it. */
  readonly version: number;
  readonly inputs: readonly TxInput[];
  readonly outputs: readonly TxOutput[];
  /** Unsigned 32-bit. */
  readonly locktime: number;
}

/** One key-value pair of a PSBT map exactly as it was read; `key` starts with the key type. */
export interface PsbtEntry {
  readonly key: Uint8Array;
  readonly value: Uint8Array;
}

/** A BIP-32 derivation path: master key fingerprint and child indexes (hardened ones ≥ 2^31). */
export interface KeyOrigin {
  readonly fingerprint: Uint8Array;
  readonly path: readonly number[];
}

export interface Bip32Derivation extends KeyOrigin {
  /** 33- or 65-byte SEC1 public key. */
  readonly pubkey: Uint8Array;
}

export interface TapBip32Derivation extends KeyOrigin {
  /** 32-byte x-only public key. */
  readonly xOnlyPubkey: Uint8Array;
  readonly leafHashes: readonly Uint8Array[];
}

export interface PartialSig {
  readonly pubkey: Uint8Array;
  /** Strict DER (BIP-66) followed by the sighash type byte. */
  readonly signature: Uint8Array;
}

export interface PsbtGlobal {
  /** Every global pair in its original order (the unsigned tx included). */
  readonly entries: readonly PsbtEntry[];
  readonly unsignedTx: BitcoinTransaction;
}

/** A PSBT input map: the raw pairs (the source of truth when serializing) and their decoded known fields. */
export interface PsbtInput {
  readonly entries: readonly PsbtEntry[];
  /** PSBT_IN_NON_WITNESS_UTXO (0x00): the whole previous transaction; its txid matched the prevout at parse time. */
  readonly nonWitnessUtxo?: BitcoinTransaction;
  /** PSBT_IN_WITNESS_UTXO (0x01). */
  readonly witnessUtxo?: TxOutput;
  /** PSBT_IN_PARTIAL_SIG (0x02). */
  readonly partialSigs: readonly PartialSig[];
  /** PSBT_IN_SIGHASH_TYPE (0x03), unsigned 32-bit. */
  readonly sighashType?: number;
  /** PSBT_IN_REDEEM_SCRIPT (0x04). */
  readonly redeemScript?: Uint8Array;
  /** PSBT_IN_WITNESS_SCRIPT (0x05). */
  readonly witnessScript?: Uint8Array;
  /** PSBT_IN_BIP32_DERIVATION (0x06). */
  readonly bip32Derivations: readonly Bip32Derivation[];
  /** PSBT_IN_FINAL_SCRIPTSIG (0x07). */
  readonly finalScriptSig?: Uint8Array;
  /** PSBT_IN_FINAL_SCRIPTWITNESS (0x08). */
  readonly finalScriptWitness?: readonly Uint8Array[];
  /** PSBT_IN_TAP_KEY_SIG (0x13): 64 bytes (SIGHASH_DEFAULT) or 65 with the type byte. */
  readonly tapKeySig?: Uint8Array;
  /** PSBT_IN_TAP_BIP32_DERIVATION (0x16). */
  readonly tapBip32Derivations: readonly TapBip32Derivation[];
  /** PSBT_IN_TAP_INTERNAL_KEY (0x17). */
  readonly tapInternalKey?: Uint8Array;
}

export interface PsbtOutput {
  readonly entries: readonly PsbtEntry[];
  /** PSBT_OUT_REDEEM_SCRIPT (0x00). */
  readonly redeemScript?: Uint8Array;
  /** PSBT_OUT_WITNESS_SCRIPT (0x01). */
  readonly witnessScript?: Uint8Array;
  /** PSBT_OUT_BIP32_DERIVATION (0x02). */
  readonly bip32Derivations: readonly Bip32Derivation[];
  /** PSBT_OUT_TAP_INTERNAL_KEY (0x05). */
  readonly tapInternalKey?: Uint8Array;
  /** PSBT_OUT_TAP_BIP32_DERIVATION (0x07). */
  readonly tapBip32Derivations: readonly TapBip32Derivation[];
}

/** A parsed BIP-174 version 0 PSBT. */
export interface Psbt {
  readonly global: PsbtGlobal;
  readonly inputs: readonly PsbtInput[];
  readonly outputs: readonly PsbtOutput[];
}

/** Script templates the adapter signs for. */
export type SignableScriptType = 'P2PKH' | 'P2WPKH' | 'P2TR';

/** One input the signer must sign, with the digest this library computed from the PSBT. */
export interface PlannedInput {
  readonly inputIndex: number;
  readonly scriptType: SignableScriptType;
  readonly scheme: 'ECDSA_SECP256K1' | 'SCHNORR_BIP340';
  /** The sighash type committed to (1 = ALL; 0 = DEFAULT, taproot only). */
  readonly sighashType: number;
  /** 32 bytes: legacy, BIP-143 or BIP-341 sighash. */
  readonly digest: Uint8Array;
}

/** The signer's keys and the inputs that belong to them. */
export interface SigningPlan {
  /** 33-byte compressed secp256k1 public key (the partial_sig key). */
  readonly publicKey: Uint8Array;
  /** BIP-86 tweaked x-only output key (what a P2TR key-path signature verifies against). */
  readonly taprootOutputKey: Uint8Array;
  readonly inputs: readonly PlannedInput[];
}

/** A finalized, extracted network transaction. */
export interface ExtractedTransaction {
  /** Network serialization (BIP-144 segwit form when any input has a witness). */
  readonly transaction: Uint8Array;
  /** 32 bytes, display order (reversed double-SHA256, as block explorers and bitcoind print it). */
  readonly txid: Uint8Array;
  /** 32 bytes, display order; equals txid when no input has a witness. */
  readonly wtxid: Uint8Array;
}

/**
 * Structured fields for a transaction to be wrapped in a fresh PSBT, as a gRPC message would carry them
 * (proto3 defaults: '' / 0 / empty). A PSBT (`unsigned`) is the primary input form; see transactionFromFields.
 */
export interface BitcoinTransactionFields {
  /** 1 or 2; 0 means 2. */
  version: number;
  inputs: {
    /** Display-order hex txid of the output being spent. */
    txid: string;
    vout: number;
    /** 0 means 0xfffffffd (BIP-125 opt-in RBF, locktime enabled). */
    sequence: number;
    /** Satoshis as a decimal string; with `scriptPubKey`, becomes witness_utxo. */
    value: string;
    /** Hex scriptPubKey of the output being spent. */
    scriptPubKey: string;
    /** The previous transaction (network bytes), required for P2PKH inputs; becomes non_witness_utxo. */
    previousTransaction: Uint8Array;
  }[];
  outputs: {
    /** Satoshis as a decimal string. */
    value: string;
    /** A Bitcoin address on `network`, or empty when `scriptPubKey` is set. */
    address: string;
    /** Hex scriptPubKey, or empty when `address` is set. */
    scriptPubKey: string;
  }[];
  locktime: number;
  network: 'MAINNET' | 'TESTNET' | 'REGTEST';
}

/** MAX_MONEY of Bitcoin Core (amount.h): no output may exceed it. */
export const MAX_MONEY = 2_100_000_000_000_000n;
/** BIP-113/nLockTime: values below this are block heights, others Unix timestamps. */
export const LOCKTIME_THRESHOLD = 500_000_000;
export const SIGHASH_DEFAULT = 0x00;
export const SIGHASH_ALL = 0x01;
