/** The Tron transaction model shared by the parser, the serializer, the describer and the field mapper. */
import type { ProtoField } from './protobuf.js';

/**
 * `Transaction.Contract.ContractType` of java-tron's Tron.proto (as shipped in tronweb 6.5.1), with
 * the field number of each contract's `owner_address` (2 for the three contracts that put another
 * field first). CustomContract, GetContract and ShieldedTransferContract are left out: they have no
 * owner to bind a signer to, so countersign does not sign them.
 */
export const TRON_CONTRACT_TYPES = [
  { name: 'AccountCreateContract', number: 0, ownerField: 1 },
  { name: 'TransferContract', number: 1, ownerField: 1 },
  { name: 'TransferAssetContract', number: 2, ownerField: 2 },
  { name: 'VoteAssetContract', number: 3, ownerField: 1 },
  { name: 'VoteWitnessContract', number: 4, ownerField: 1 },
  { name: 'WitnessCreateContract', number: 5, ownerField: 1 },
  { name: 'AssetIssueContract', number: 6, ownerField: 1 },
  { name: 'WitnessUpdateContract', number: 8, ownerField: 1 },
  { name: 'ParticipateAssetIssueContract', number: 9, ownerField: 1 },
  { name: 'AccountUpdateContract', number: 10, ownerField: 2 },
  { name: 'FreezeBalanceContract', number: 11, ownerField: 1 },
  { name: 'UnfreezeBalanceContract', number: 12, ownerField: 1 },
  { name: 'WithdrawBalanceContract', number: 13, ownerField: 1 },
  { name: 'UnfreezeAssetContract', number: 14, ownerField: 1 },
  { name: 'UpdateAssetContract', number: 15, ownerField: 1 },
  { name: 'ProposalCreateContract', number: 16, ownerField: 1 },
  { name: 'ProposalApproveContract', number: 17, ownerField: 1 },
  { name: 'ProposalDeleteContract', number: 18, ownerField: 1 },
  { name: 'SetAccountIdContract', number: 19, ownerField: 2 },
  { name: 'CreateSmartContract', number: 30, ownerField: 1 },
  { name: 'TriggerSmartContract', number: 31, ownerField: 1 },
  { name: 'UpdateSettingContract', number: 33, ownerField: 1 },
  { name: 'ExchangeCreateContract', number: 41, ownerField: 1 },
  { name: 'ExchangeInjectContract', number: 42, ownerField: 1 },
  { name: 'ExchangeWithdrawContract', number: 43, ownerField: 1 },
  { name: 'ExchangeTransactionContract', number: 44, ownerField: 1 },
  { name: 'UpdateEnergyLimitContract', number: 45, ownerField: 1 },
  { name: 'AccountPermissionUpdateContract', number: 46, ownerField: 1 },
  { name: 'ClearABIContract', number: 48, ownerField: 1 },
  { name: 'UpdateBrokerageContract', number: 49, ownerField: 1 },
  { name: 'MarketSellAssetContract', number: 52, ownerField: 1 },
  { name: 'MarketCancelOrderContract', number: 53, ownerField: 1 },
  { name: 'FreezeBalanceV2Contract', number: 54, ownerField: 1 },
  { name: 'UnfreezeBalanceV2Contract', number: 55, ownerField: 1 },
  { name: 'WithdrawExpireUnfreezeContract', number: 56, ownerField: 1 },
  { name: 'DelegateResourceContract', number: 57, ownerField: 1 },
  { name: 'UnDelegateResourceContract', number: 58, ownerField: 1 },
  { name: 'CancelAllUnfreezeV2Contract', number: 59, ownerField: 1 },
] as const;

export type TronContractTypeName = (typeof TRON_CONTRACT_TYPES)[number]['name'];
export type TronContractTypeInfo = (typeof TRON_CONTRACT_TYPES)[number];

/** `type.googleapis.com/protocol.<Name>`: the Any type URL java-tron and tronweb use. */
export const TYPE_URL_PREFIX = 'type.googleapis.com/protocol.';

/** Tron addresses: 0x41 ‖ 20-byte account id. */
export const TRON_ADDRESS_PREFIX = 0x41;
export const TRON_ADDRESS_LENGTH = 21;

/** `protocol.ResourceCode` (common.proto). */
export const TRON_RESOURCES = ['BANDWIDTH', 'ENERGY', 'TRON_POWER'] as const;
export type TronResource = (typeof TRON_RESOURCES)[number];

/** `Permission.PermissionType` (Tron.proto), named as Tron's JSON names them. */
export const TRON_PERMISSION_TYPES = ['Owner', 'Witness', 'Active'] as const;
export type TronPermissionType = (typeof TRON_PERMISSION_TYPES)[number];

/** `protocol.Permission`: who may sign for an account, with which weights, for which contracts. */
export interface TronPermission {
  readonly type: TronPermissionType;
  readonly id: number;
  readonly permissionName: string;
  readonly threshold: bigint;
  readonly parentId: number;
  /** The 32-byte bitmap of contract types an active permission may sign; empty otherwise. */
  readonly operations: Uint8Array;
  readonly keys: readonly { readonly address: Uint8Array; readonly weight: bigint }[];
}

/**
 * The decoded parameter of the contracts policies read in detail: the two countersign builds, and
 * the staking, delegation and permission contracts turnkey-api.md 8.3 lists. Proto3 defaults (0,
 * false, BANDWIDTH, empty) stand for absent fields.
 */
export type TronContractParameter =
  | {
      readonly type: 'TransferContract';
      readonly ownerAddress: Uint8Array;
      readonly toAddress: Uint8Array;
      /** sun */
      readonly amount: bigint;
    }
  | {
      readonly type: 'TriggerSmartContract';
      readonly ownerAddress: Uint8Array;
      readonly contractAddress: Uint8Array;
      /** sun */
      readonly callValue: bigint;
      readonly data: Uint8Array;
      readonly callTokenValue: bigint;
      readonly tokenId: bigint;
    }
  | {
      readonly type: 'FreezeBalanceV2Contract';
      readonly ownerAddress: Uint8Array;
      /** sun */
      readonly frozenBalance: bigint;
      readonly resource: TronResource;
    }
  | {
      readonly type: 'UnfreezeBalanceV2Contract';
      readonly ownerAddress: Uint8Array;
      /** sun */
      readonly unfreezeBalance: bigint;
      readonly resource: TronResource;
    }
  | {
      readonly type: 'DelegateResourceContract' | 'UnDelegateResourceContract';
      readonly ownerAddress: Uint8Array;
      readonly resource: TronResource;
      /** sun */
      readonly balance: bigint;
      readonly receiverAddress: Uint8Array;
      /** DelegateResourceContract only (false for the other). */
      readonly lock: boolean;
      /** Blocks; DelegateResourceContract only (0 for the other). */
      readonly lockPeriod: bigint;
    }
  | {
      readonly type: 'AccountPermissionUpdateContract';
      readonly ownerAddress: Uint8Array;
      readonly owner: TronPermission | undefined;
      readonly witness: TronPermission | undefined;
      readonly actives: readonly TronPermission[];
    }
  | {
      /** Any other contract: kept as its exact `Any.value` bytes; only the owner is decoded. */
      readonly type: 'opaque';
      readonly ownerAddress: Uint8Array;
    };

/** One `Transaction.Contract`. Proto3 defaults (0, empty) stand for absent fields. */
export interface TronContract {
  readonly type: TronContractTypeInfo;
  /** `parameter.type_url` (google.protobuf.Any); always `TYPE_URL_PREFIX + type.name`. */
  readonly typeUrl: string;
  /** `parameter.value`: the exact serialized contract. */
  readonly value: Uint8Array;
  readonly parameter: TronContractParameter;
  readonly provider: Uint8Array;
  readonly contractName: Uint8Array;
  /** 0 = the owner permission; 2+ = an active permission (multi-sig). */
  readonly permissionId: number;
  /** Fields of the Any this codec does not know, kept for byte-identical re-serialization. */
  readonly parameterUnknownFields: readonly ProtoField[];
  readonly unknownFields: readonly ProtoField[];
}

/** A parsed `protocol.Transaction.raw`. */
export interface TronTransaction {
  /** The exact bytes parsed; the txID is sha256 of these, never of a re-encoding. */
  readonly rawData: Uint8Array;
  /** 2 bytes: bytes 6..8 of the reference block number. */
  readonly refBlockBytes: Uint8Array;
  readonly refBlockNum: bigint;
  /** 8 bytes: bytes 8..16 of the reference block id. */
  readonly refBlockHash: Uint8Array;
  /** ms since the epoch. */
  readonly expiration: bigint;
  /** `auths` (field 9), kept opaque: each element's exact bytes. */
  readonly auths: readonly Uint8Array[];
  /** `data`: the memo. */
  readonly data: Uint8Array;
  /** java-tron accepts exactly one contract per transaction. */
  readonly contract: readonly TronContract[];
  readonly scripts: Uint8Array;
  /** ms since the epoch; 0 when absent. */
  readonly timestamp: bigint;
  /** sun; 0 when absent. */
  readonly feeLimit: bigint;
  readonly unknownFields: readonly ProtoField[];
}

/**
 * Structured fields as the proposed gRPC `TronTransaction` message carries them (proto3 defaults:
 * '' / empty / 0 mean "not set"). Numbers are decimal strings; addresses base58check `T…` or 41-hex.
 */
export interface TronTransactionFields {
  kind: 'UNSPECIFIED' | 'TRX_TRANSFER' | 'TRC20_TRANSFER';
  ownerAddress: string;
  toAddress: string;
  /** TRX: sun (1..2^63-1). TRC-20: token base units (uint256). */
  amount: string;
  /** TRC-20 only: the token contract. */
  tokenContract: string;
  /** sun; required for TRC-20, must be empty for a TRX transfer. */
  feeLimit: string;
  /** 2 bytes hex, e.g. from tronweb `getCurrentRefBlockParams()`. */
  refBlockBytes: string;
  /** 8 bytes hex. */
  refBlockHash: string;
  /** ms since the epoch, decimal. */
  expiration: string;
  /** ms since the epoch, decimal. */
  timestamp: string;
  /** raw_data.data (memo); empty for none. */
  memo: Uint8Array;
  /** Contract.Permission_id; 0 = owner permission. */
  permissionId: number;
  /** Optional: a txID the caller expects (hex); checked, never used. */
  expectedTxId: string;
}

/** A signed `protocol.Transaction` split into its parts. */
export interface ParsedSignedTronTransaction {
  readonly tx: TronTransaction;
  /** The exact `raw_data` bytes inside the signed transaction. */
  readonly rawData: Uint8Array;
  /** Each 65 bytes r ‖ s ‖ v. */
  readonly signatures: readonly Uint8Array[];
}

export const INT64_MAX = (1n << 63n) - 1n;
