/** The Solana transaction model shared by the parser, the serializer and the gRPC field mapper. */

/** Message versions we accept: legacy (no version byte) and v0 (prefix 0x80). */
export const SOLANA_MESSAGE_VERSIONS = ['legacy', 0] as const;
export type SolanaMessageVersion = (typeof SOLANA_MESSAGE_VERSIONS)[number];

export interface SolanaMessageHeader {
  /** Signers are the first `numRequiredSignatures` static keys; slot i belongs to key i. */
  readonly numRequiredSignatures: number;
  /** The last `numReadonlySignedAccounts` signers are read-only. */
  readonly numReadonlySignedAccounts: number;
  /** The last `numReadonlyUnsignedAccounts` static keys are read-only. */
  readonly numReadonlyUnsignedAccounts: number;
}

/** An instruction as it sits in a message: indexes into the message's account list. */
export interface SolanaCompiledInstruction {
  /** Always a static key (a program id may not come from a lookup table). */
  readonly programIdIndex: number;
  /** Indexes into static keys, then writable lookups, then read-only lookups. */
  readonly accountIndexes: readonly number[];
  readonly data: Uint8Array;
}

/** A v0 address-table lookup: which entries of the table at `accountKey` the message loads. */
export interface SolanaAddressTableLookup {
  readonly accountKey: Uint8Array;
  readonly writableIndexes: readonly number[];
  readonly readonlyIndexes: readonly number[];
}

export interface SolanaMessage {
  readonly version: SolanaMessageVersion;
  readonly header: SolanaMessageHeader;
  /** 32-byte public keys. */
  readonly staticAccountKeys: readonly Uint8Array[];
  /** 32 bytes. */
  readonly recentBlockhash: Uint8Array;
  readonly instructions: readonly SolanaCompiledInstruction[];
  /** Always empty for a legacy message. */
  readonly addressTableLookups: readonly SolanaAddressTableLookup[];
}

/** A parsed wire transaction. `messageBytes` are the exact bytes every signature commits to. */
export interface SolanaTransaction {
  readonly message: SolanaMessage;
  readonly messageBytes: Uint8Array;
  /** One 64-byte slot per required signer; all zero while unsigned. */
  readonly signatures: readonly Uint8Array[];
}

export interface SolanaAccountMetaFields {
  /** base58 public key. */
  pubkey: string;
  isSigner: boolean;
  isWritable: boolean;
}

export interface SolanaInstructionFields {
  /** base58 program id. */
  programId: string;
  accounts: SolanaAccountMetaFields[];
  data: Uint8Array;
}

export interface SolanaAddressLookupTableFields {
  /** base58 address of the lookup table account. */
  address: string;
  /** The table's entries in order (base58); a message refers to them by index. */
  addresses: string[];
}

/**
 * Structured fields as the gRPC `SolanaTransaction` message carries them (proto3 defaults: '' /
 * empty). Without lookup tables the message is legacy unless `version` asks for V0.
 */
export interface SolanaTransactionFields {
  /** base58; the first signer and the account that pays the fee. */
  feePayer: string;
  /** base58 of 32 bytes. */
  recentBlockhash: string;
  instructions: SolanaInstructionFields[];
  addressLookupTables?: SolanaAddressLookupTableFields[];
  version?: 'UNSPECIFIED' | 'LEGACY' | 'V0';
}

/** Largest wire transaction a Solana node accepts (IPv6 MTU minus headers: PACKET_DATA_SIZE). */
export const MAX_TRANSACTION_SIZE = 1232;
/** Indexes are u8, so a v0 message can address at most 256 accounts. */
export const MAX_ACCOUNTS = 256;
export const PUBLIC_KEY_LENGTH = 32;
export const SIGNATURE_LENGTH = 64;
/** Top bit of the first message byte marks a versioned message (the rest is the version). */
export const VERSION_PREFIX = 0x80;
