/**
 * The `countersign.v1.Signer` contract as loaded by @grpc/proto-loader, and the TypeScript shapes
 * of its messages under the loader options used here (camelCase names, enums as their names,
 * proto3 defaults filled in, `oneof` members named by a virtual field). The shapes are derived from
 * the types protoc-gen-es generated from the same proto (src/shared/gen), and the enum value lists
 * from its enums: nothing here is written twice.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { GenEnum } from '@bufbuild/protobuf/codegenv2';
import * as pb from '../shared/gen/countersign/v1/signer_pb.js';

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

/** A generated enum object (numeric, with TypeScript's reverse mapping). */
type EnumObject = Record<string, string | number>;
/** protoc-gen-es drops the enum's own prefix from its TypeScript names; the proto's names keep it. */
type Named<E extends EnumObject, Prefix extends string> = `${Prefix}${Extract<
  { [K in keyof E]: E[K] extends number ? K : never }[keyof E],
  string
>}`;

/**
 * Every enum of the proto, with the prefix protoc-gen-es dropped (type level: how a loaded enum field
 * is spelled). The runtime lists come from the descriptors, which keep the proto's names.
 */
interface Enums {
  SigningMode: Named<typeof pb.SigningMode, 'SIGNING_MODE_'>;
  ActivityState: Named<typeof pb.ActivityState, 'ACTIVITY_STATE_'>;
  EthereumTransactionType: Named<typeof pb.EthereumTransactionType, 'ETHEREUM_TRANSACTION_TYPE_'>;
  SolanaMessageVersion: Named<typeof pb.SolanaMessageVersion, 'SOLANA_MESSAGE_VERSION_'>;
  TronTransactionKind: Named<typeof pb.TronTransactionKind, 'TRON_TRANSACTION_KIND_'>;
  BitcoinNetwork: Named<typeof pb.BitcoinNetwork, 'BITCOIN_NETWORK_'>;
  PayloadEncoding: Named<typeof pb.PayloadEncoding, 'PAYLOAD_ENCODING_'>;
  HashFunction: Named<typeof pb.HashFunction, 'HASH_FUNCTION_'>;
  PolicyOutcome: Named<typeof pb.PolicyOutcome, ''>;
  SendTransactionStatusCode: Named<typeof pb.SendTransactionStatusCode, 'SEND_TRANSACTION_STATUS_CODE_'>;
}
interface EnumTypes {
  SigningMode: pb.SigningMode;
  ActivityState: pb.ActivityState;
  EthereumTransactionType: pb.EthereumTransactionType;
  SolanaMessageVersion: pb.SolanaMessageVersion;
  TronTransactionKind: pb.TronTransactionKind;
  BitcoinNetwork: pb.BitcoinNetwork;
  PayloadEncoding: pb.PayloadEncoding;
  HashFunction: pb.HashFunction;
  PolicyOutcome: pb.PolicyOutcome;
  SendTransactionStatusCode: pb.SendTransactionStatusCode;
}

/** The enum's value names as the proto spells them, in wire order (the zero value first). */
function namesOf<K extends keyof Enums>(schema: GenEnum<EnumTypes[K]>): readonly Enums[K][] {
  return [...schema.values].sort((a, b) => a.number - b.number).map((v) => v.name as Enums[K]);
}

/**
 * A numeric type is a plain integer when two distinct enums are both assignable to it (TypeScript
 * enums are nominal to each other, while `number` and an enum are mutually assignable).
 */
type IsPlainNumber<F> = [pb.SigningMode | pb.ActivityState] extends [F] ? true : false;
type EnumNameOf<F> = {
  [K in keyof EnumTypes]: [F] extends [EnumTypes[K]]
    ? [EnumTypes[K]] extends [F]
      ? Enums[K]
      : never
    : never;
}[keyof EnumTypes];

/**
 * Requests ('in') type enum fields `string`: a newer client may send a number the loader cannot
 * name, so handlers check them against the closed lists below. Responses ('out') use the names.
 */
type Direction = 'in' | 'out';
// Each test is wrapped in [ ] so that a union (an enum is one) is looked at whole, not member by member.
type Value<F, D extends Direction> = [F] extends [Uint8Array]
  ? Uint8Array
  : [F] extends [bigint]
    ? string
    : [F] extends [number]
      ? IsPlainNumber<F> extends true
        ? number
        : D extends 'in'
          ? string
          : EnumNameOf<F>
      : [F] extends [{ readonly $typeName: string }]
        ? Loaded<F, D>
        : F;
type FieldOf<F, D extends Direction> = [NonNullable<F>] extends [readonly (infer E)[]]
  ? readonly Value<E, D>[]
  : Value<NonNullable<F>, D>;
type Oneof = { readonly case: string | undefined };
/** The generated message's `oneof` property, if any (countersign's messages have at most one). */
type OneofKey<T> = {
  [K in keyof T]-?: K extends '$typeName' | '$unknown' ? never : T[K] extends Oneof ? K : never;
}[keyof T];
/** A `oneof` as the loader gives it: the virtual field naming the member set, and each member. */
type OneofOf<K extends PropertyKey, U, D extends Direction> = [U] extends [Oneof]
  ? { readonly [P in K]?: Exclude<U['case'], undefined> } & {
      readonly [C in Exclude<U['case'], undefined> & string]?: FieldOf<
        Extract<U, { case: C }> extends { value: infer V } ? V : never,
        D
      >;
    }
  : never;

/** A generated message type as @grpc/proto-loader decodes it with {@link LOADER_OPTIONS}. */
export type Loaded<T, D extends Direction> = {
  readonly [
    K in keyof T as K extends '$typeName' | '$unknown' ? never : K extends OneofKey<T> ? never : K
  ]: FieldOf<T[K], D>;
} & ([OneofKey<T>] extends [never] ? unknown : OneofOf<OneofKey<T>, T[OneofKey<T>], D>);

export const SIGNING_MODES = namesOf<'SigningMode'>(pb.SigningModeSchema);
export type SigningMode = (typeof SIGNING_MODES)[number];
export type ActivityState = Enums['ActivityState'];
export const ETHEREUM_TRANSACTION_TYPES = namesOf<'EthereumTransactionType'>(
  pb.EthereumTransactionTypeSchema,
);
export const PAYLOAD_ENCODINGS = namesOf<'PayloadEncoding'>(pb.PayloadEncodingSchema);
export type PayloadEncoding = (typeof PAYLOAD_ENCODINGS)[number];
export const HASH_FUNCTIONS = namesOf<'HashFunction'>(pb.HashFunctionSchema);
export type HashFunction = (typeof HASH_FUNCTIONS)[number];
/** The `PolicyOutcome` enum; a decision is one of the first four (after UNSPECIFIED). */
export const POLICY_OUTCOMES = namesOf<'PolicyOutcome'>(pb.PolicyOutcomeSchema);
export type PolicyOutcome = (typeof POLICY_OUTCOMES)[number];
export const DECISION_OUTCOMES = POLICY_OUTCOMES.slice(1, 5) as readonly Exclude<
  PolicyOutcome,
  'OUTCOME_UNSPECIFIED' | 'OUTCOME_ERROR' | 'OUTCOME_TIME_INACTIVE'
>[];
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];
/** The `SendTransactionStatusCode` enum, in wire order. */
export const SEND_TRANSACTION_STATUS_CODES = namesOf<'SendTransactionStatusCode'>(
  pb.SendTransactionStatusCodeSchema,
);
export type SendTransactionStatusCode = (typeof SEND_TRANSACTION_STATUS_CODES)[number];

export type EthereumAccessListEntryMessage = Loaded<pb.EthereumAccessListEntry, 'in'>;
export type EthereumAuthorizationMessage = Loaded<pb.EthereumAuthorization, 'in'>;
export type EthereumTransactionMessage = Loaded<pb.EthereumTransaction, 'in'>;
export type SolanaAccountMetaMessage = Loaded<pb.SolanaAccountMeta, 'in'>;
export type SolanaInstructionMessage = Loaded<pb.SolanaInstruction, 'in'>;
export type SolanaAddressLookupTableMessage = Loaded<pb.SolanaAddressLookupTable, 'in'>;
export type SolanaTransactionMessage = Loaded<pb.SolanaTransaction, 'in'>;
export type TronTransactionMessage = Loaded<pb.TronTransaction, 'in'>;
export type BitcoinTransactionMessage = Loaded<pb.BitcoinTransaction, 'in'>;
export type TempoCallMessage = Loaded<pb.TempoCall, 'in'>;
export type TempoTransactionMessage = Loaded<pb.TempoTransaction, 'in'>;
export type SignTransactionRequest = Loaded<pb.SignTransactionRequest, 'in'>;
export type SignatureMessage = Loaded<pb.Signature, 'out'>;
export type SignTransactionResponse = Loaded<pb.SignTransactionResponse, 'out'>;
export type SignRawPayloadsRequest = Loaded<pb.SignRawPayloadsRequest, 'in'>;
export type SignRawPayloadsResponse = Loaded<pb.SignRawPayloadsResponse, 'out'>;
export type EthereumAuthorizationRequestMessage = Loaded<pb.EthereumAuthorizationRequest, 'in'>;
export type SignMessageRequest = Loaded<pb.SignMessageRequest, 'in'>;
export type SignMessageResponse = Loaded<pb.SignMessageResponse, 'out'>;
export type GetActivityRequest = Loaded<pb.GetActivityRequest, 'in'>;
export type WatchActivityRequest = Loaded<pb.WatchActivityRequest, 'in'>;
export type VerifiedTransactionMessage = Loaded<pb.VerifiedTransaction, 'out'>;
export type VerifiedPayloadsMessage = Loaded<pb.VerifiedPayloads, 'out'>;
export type SendTransactionResultMessage = Loaded<pb.SendTransactionResult, 'out'>;
export type GetActivityResponse = Loaded<pb.GetActivityResponse, 'out'>;
export type EvaluatePoliciesRequest = Loaded<pb.EvaluatePoliciesRequest, 'in'>;
export type PolicyEvaluationMessage = Loaded<pb.PolicyEvaluation, 'out'>;
export type EvaluatePoliciesResponse = Loaded<pb.EvaluatePoliciesResponse, 'out'>;
export type EthCallMessage = Loaded<pb.EthCall, 'in'>;
export type SendEthTransactionRequest = Loaded<pb.SendEthTransactionRequest, 'in'>;
export type SendEthTransactionResponse = Loaded<pb.SendEthTransactionResponse, 'out'>;
export type WatchSendTransactionRequest = Loaded<pb.WatchSendTransactionRequest, 'in'>;
export type SendTransactionStatus = Loaded<pb.SendTransactionStatus, 'out'>;
