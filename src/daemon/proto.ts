/**
 * The `countersign.v1.Signer` contract as loaded by @grpc/proto-loader, and the TypeScript shapes
 * of its messages under the loader options used here (camelCase names, enums as their names,
 * proto3 defaults filled in, `oneof` members named by a virtual field).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as shared from '../shared/enums.js';

const PROTO_FILE = join('proto', 'countersign', 'v1', 'signer.proto');

/** Finds the proto beside the sources or beside a build output (dist/src/daemon → repo root). */
function protoPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, PROTO_FILE);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error(`${PROTO_FILE} not found above ${dirname(fileURLToPath(import.meta.url))}`);
    dir = parent;
  }
}

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

export interface SignerProto {
  readonly packageDefinition: protoLoader.PackageDefinition;
  readonly signerService: grpc.ServiceDefinition;
  readonly protoFile: string;
}

/** Loads signer.proto once per call (the daemon calls it at start). */
export function loadSignerProto(protoFile: string = protoPath()): SignerProto {
  const packageDefinition = protoLoader.loadSync(protoFile, LOADER_OPTIONS);
  const signerService = packageDefinition['countersign.v1.Signer'] as grpc.ServiceDefinition | undefined;
  if (signerService === undefined) throw new Error('countersign.v1.Signer missing from signer.proto');
  return { packageDefinition, signerService, protoFile };
}

export const SIGNING_MODES = [
  'SIGNING_MODE_AUTO',
  'SIGNING_MODE_SIGN_TRANSACTION',
  'SIGNING_MODE_SIGN_RAW_PAYLOADS',
] as const;
export type SigningMode = (typeof SIGNING_MODES)[number];

export type ActivityState =
  | 'ACTIVITY_STATE_UNSPECIFIED'
  | 'ACTIVITY_STATE_COMPLETED'
  | 'ACTIVITY_STATE_CONSENSUS_NEEDED'
  | 'ACTIVITY_STATE_FAILED'
  | 'ACTIVITY_STATE_REJECTED'
  | 'ACTIVITY_STATE_PENDING'
  | 'ACTIVITY_STATE_AUTHENTICATORS_NEEDED';

export const ETHEREUM_TRANSACTION_TYPES = [
  'ETHEREUM_TRANSACTION_TYPE_UNSPECIFIED',
  'ETHEREUM_TRANSACTION_TYPE_LEGACY',
  'ETHEREUM_TRANSACTION_TYPE_EIP2930',
  'ETHEREUM_TRANSACTION_TYPE_EIP1559',
  'ETHEREUM_TRANSACTION_TYPE_EIP4844',
  'ETHEREUM_TRANSACTION_TYPE_EIP7702',
] as const;

export const PAYLOAD_ENCODINGS = ['PAYLOAD_ENCODING_UNSPECIFIED', ...shared.PAYLOAD_ENCODINGS] as const;
export type PayloadEncoding = (typeof PAYLOAD_ENCODINGS)[number];

export const HASH_FUNCTIONS = ['HASH_FUNCTION_UNSPECIFIED', ...shared.HASH_FUNCTIONS] as const;
export type HashFunction = (typeof HASH_FUNCTIONS)[number];

/*
 * Decoded requests. Enum fields are typed `string`: a newer client may send a number the loader
 * cannot name, so handlers check them against the closed lists above.
 */

export interface EthereumAccessListEntryMessage {
  readonly address: string;
  readonly storageKeys: readonly Uint8Array[];
}

export interface EthereumAuthorizationMessage {
  readonly chainId: string;
  readonly address: string;
  readonly nonce: string;
  readonly yParity: number;
  readonly r: Uint8Array;
  readonly s: Uint8Array;
}

export interface EthereumTransactionMessage {
  readonly unsigned: Uint8Array;
  readonly type: string;
  readonly chainId: string;
  readonly nonce: string;
  readonly to: string;
  readonly value: string;
  readonly data: Uint8Array;
  readonly gasLimit: string;
  readonly gasPrice: string;
  readonly maxFeePerGas: string;
  readonly maxPriorityFeePerGas: string;
  readonly accessList: readonly EthereumAccessListEntryMessage[];
  readonly maxFeePerBlobGas: string;
  readonly blobVersionedHashes: readonly Uint8Array[];
  readonly authorizationList: readonly EthereumAuthorizationMessage[];
  readonly legacyWithoutChainId: boolean;
}

export interface SolanaAccountMetaMessage {
  readonly pubkey: string;
  readonly isSigner: boolean;
  readonly isWritable: boolean;
}

export interface SolanaInstructionMessage {
  readonly programId: string;
  readonly accounts: readonly SolanaAccountMetaMessage[];
  readonly data: Uint8Array;
}

export interface SolanaAddressLookupTableMessage {
  readonly address: string;
  readonly addresses: readonly string[];
}

export interface SolanaTransactionMessage {
  readonly unsigned: Uint8Array;
  readonly feePayer: string;
  readonly recentBlockhash: string;
  readonly instructions: readonly SolanaInstructionMessage[];
  readonly addressLookupTables: readonly SolanaAddressLookupTableMessage[];
  /** SOLANA_MESSAGE_VERSION_{UNSPECIFIED,LEGACY,V0}. */
  readonly version: string;
}

export interface TronTransactionMessage {
  readonly unsigned: Uint8Array;
  readonly expectedTxId: string;
  /** TRON_TRANSACTION_KIND_{UNSPECIFIED,TRX_TRANSFER,TRC20_TRANSFER}. */
  readonly kind: string;
  readonly ownerAddress: string;
  readonly toAddress: string;
  readonly amount: string;
  readonly tokenContract: string;
  readonly feeLimit: string;
  readonly refBlockBytes: string;
  readonly refBlockHash: string;
  readonly expiration: string;
  readonly timestamp: string;
  readonly memo: Uint8Array;
  readonly permissionId: number;
}

export interface BitcoinTransactionMessage {
  readonly unsigned: Uint8Array;
  /** BITCOIN_NETWORK_{UNSPECIFIED,MAINNET,TESTNET,REGTEST}. */
  readonly network: string;
  readonly finalize: boolean;
}

export interface TempoCallMessage {
  readonly to: string;
  readonly value: string;
  readonly data: Uint8Array;
}

export interface TempoTransactionMessage {
  readonly unsigned: Uint8Array;
  readonly chainId: string;
  readonly nonce: string;
  readonly nonceKey: string;
  readonly gasLimit: string;
  readonly maxFeePerGas: string;
  readonly maxPriorityFeePerGas: string;
  readonly calls: readonly TempoCallMessage[];
  readonly accessList: readonly EthereumAccessListEntryMessage[];
  readonly validBefore: string;
  readonly validAfter: string;
  readonly feeToken: string;
  readonly sponsored: boolean;
}

export interface SignTransactionRequest {
  readonly organizationId: string;
  readonly signWith: string;
  readonly idempotencyKey: string;
  readonly mode: string;
  /** Tempo sponsored transactions: who signs as fee payer in the same request ('' = nobody). */
  readonly feePayerSignWith: string;
  /** The oneof member that is set. */
  readonly transaction?: 'ethereum' | 'solana' | 'tron' | 'bitcoin' | 'tempo';
  readonly ethereum?: EthereumTransactionMessage;
  readonly solana?: SolanaTransactionMessage;
  readonly tron?: TronTransactionMessage;
  readonly bitcoin?: BitcoinTransactionMessage;
  readonly tempo?: TempoTransactionMessage;
}

export interface SignatureMessage {
  readonly r: Uint8Array;
  readonly s: Uint8Array;
  readonly v: number;
}

export interface SignTransactionResponse {
  readonly signedTransaction: Uint8Array;
  readonly transactionHash: string;
  readonly signatures: readonly SignatureMessage[];
  readonly signer: string;
  readonly activityId: string;
  readonly state: ActivityState;
  readonly fingerprint: string;
  readonly mode: SigningMode;
}

export interface SignRawPayloadsRequest {
  readonly organizationId: string;
  readonly signWith: string;
  readonly idempotencyKey: string;
  readonly payloads: readonly string[];
  readonly encoding: string;
  readonly hashFunction: string;
}

export interface SignRawPayloadsResponse {
  readonly signatures: readonly SignatureMessage[];
  readonly digests: readonly Uint8Array[];
  readonly signer: string;
  readonly activityId: string;
  readonly state: ActivityState;
  readonly fingerprint: string;
}

export interface EthereumAuthorizationRequestMessage {
  readonly chainId: string;
  readonly address: string;
  readonly nonce: string;
}

export interface SignMessageRequest {
  readonly organizationId: string;
  readonly signWith: string;
  readonly idempotencyKey: string;
  readonly message?: string;
  readonly personalMessage?: Uint8Array;
  readonly typedDataJson?: string;
  readonly authorization?: EthereumAuthorizationRequestMessage;
  readonly digest?: Uint8Array;
}

export interface SignMessageResponse {
  /** Absent while the activity awaits consensus. */
  readonly signature?: SignatureMessage;
  readonly serialized: Uint8Array;
  readonly digest: Uint8Array;
  readonly signer: string;
  readonly activityId: string;
  readonly state: ActivityState;
  readonly fingerprint: string;
}

export interface GetActivityRequest {
  readonly organizationId: string;
  readonly activityId: string;
}

export interface WatchActivityRequest {
  readonly organizationId: string;
  readonly activityId: string;
  /** 0 = the default interval; clamped to a floor and a ceiling by the handler. */
  readonly pollIntervalMs: number;
}

export interface VerifiedTransactionMessage {
  readonly transactionType: string;
  readonly signedTransaction: Uint8Array;
  readonly transactionHash: string;
  readonly signatures: readonly SignatureMessage[];
  readonly signer: string;
}

export interface VerifiedPayloadsMessage {
  readonly signatures: readonly SignatureMessage[];
  readonly digests: readonly Uint8Array[];
  readonly signer: string;
}

export interface SendTransactionResultMessage {
  readonly sendTransactionStatusId: string;
}

export interface GetActivityResponse {
  readonly activityId: string;
  readonly organizationId: string;
  readonly state: ActivityState;
  readonly fingerprint: string;
  readonly type: string;
  /** The `result` oneof member that is set, if any (only for a verified, completed signing activity). */
  readonly result?: 'transaction' | 'payloads' | 'sendTransaction';
  readonly transaction?: VerifiedTransactionMessage;
  readonly payloads?: VerifiedPayloadsMessage;
  readonly sendTransaction?: SendTransactionResultMessage;
  /** FAILED/REJECTED: the daemon error code and the service's message ('' otherwise). */
  readonly failureCode: string;
  readonly failureMessage: string;
}

export interface EvaluatePoliciesRequest {
  /** The oneof member that is set. */
  readonly request?: 'signTransaction' | 'signRawPayloads' | 'signMessage' | 'sendEthTransaction';
  readonly signTransaction?: SignTransactionRequest;
  readonly signRawPayloads?: SignRawPayloadsRequest;
  readonly signMessage?: SignMessageRequest;
  readonly sendEthTransaction?: SendEthTransactionRequest;
}

/** The `PolicyOutcome` enum; a decision is one of the first four (after UNSPECIFIED). */
export const POLICY_OUTCOMES = ['OUTCOME_UNSPECIFIED', ...shared.POLICY_OUTCOMES] as const;
export type PolicyOutcome = (typeof POLICY_OUTCOMES)[number];
export const DECISION_OUTCOMES = shared.DECISION_OUTCOMES;
export type DecisionOutcome = shared.DecisionOutcome;

export interface PolicyEvaluationMessage {
  readonly policyId: string;
  readonly outcome: PolicyOutcome;
  /** '' unless the outcome is OUTCOME_ERROR. */
  readonly error: string;
}

export interface EvaluatePoliciesResponse {
  readonly outcome: DecisionOutcome;
  readonly rootQuorumReached: boolean;
  readonly policyEvaluations: readonly PolicyEvaluationMessage[];
  readonly activityType: string;
  readonly organizationId: string;
}

export interface EthCallMessage {
  readonly to: string;
  readonly value: string;
  readonly data: Uint8Array;
}

export interface SendEthTransactionRequest {
  readonly organizationId: string;
  readonly from: string;
  readonly idempotencyKey: string;
  readonly caip2: string;
  readonly calls: readonly EthCallMessage[];
  readonly sponsor: boolean;
  readonly nonce: string;
  readonly gasLimit: string;
  readonly maxFeePerGas: string;
  readonly maxPriorityFeePerGas: string;
  readonly deadline: string;
  readonly gasStationNonce: string;
}

export interface SendEthTransactionResponse {
  readonly activityId: string;
  readonly state: ActivityState;
  readonly fingerprint: string;
  /** '' until the activity has completed. */
  readonly sendTransactionStatusId: string;
}

export interface WatchSendTransactionRequest {
  readonly organizationId: string;
  readonly sendTransactionStatusId: string;
  /** 0 = the default interval; clamped to a floor and a ceiling by the handler. */
  readonly pollIntervalMs: number;
}

/** The `SendTransactionStatusCode` enum, in wire order. */
export const SEND_TRANSACTION_STATUS_CODES = [
  'SEND_TRANSACTION_STATUS_CODE_UNSPECIFIED',
  'SEND_TRANSACTION_STATUS_CODE_INITIALIZED',
  'SEND_TRANSACTION_STATUS_CODE_BROADCASTING',
  'SEND_TRANSACTION_STATUS_CODE_INCLUDED',
  'SEND_TRANSACTION_STATUS_CODE_FAILED',
] as const;
export type SendTransactionStatusCode = (typeof SEND_TRANSACTION_STATUS_CODES)[number];

export interface SendTransactionStatus {
  readonly sendTransactionStatusId: string;
  readonly status: SendTransactionStatusCode;
  /** 0x-prefixed once mined; '' before. */
  readonly txHash: string;
  /** '' unless FAILED. */
  readonly errorMessage: string;
}
