/**
 * What the daemon needs of a chain beyond its adapter (chains/types.ts): how its proto message
 * becomes the adapter's input, how `sign_with` becomes the adapter's signer, and how its
 * transaction id is spelled. Everything else — modes, activities, idempotency, verification, the
 * answer, GetActivity and the dry run — is the one flow in sign-transaction.ts.
 */
import type { ChainAdapter, VerifiedTransaction } from '../../../chains/types.js';
import { CountersignError, invalid, isCountersignError, missing } from '../../shared/errors.js';
import type { DaemonContext } from '../context.js';
import type { ResolvedMode } from './common.js';

/** The unsigned transaction: parsed once, with the exact bytes that are signed and verified. */
export interface ChainInput<Tx> {
  readonly tx: Tx;
  readonly unsigned: Uint8Array;
}

/** The request fields a chain's signer is resolved from. */
export interface SignerRequest {
  readonly signWith: string;
  readonly feePayerSignWith: string;
}

/** One activity of a request: which digests (indexes into `adapter.digests`) it signs, and with what. */
export interface SigningGroup {
  /** `transaction`: sign_transaction of the unsigned bytes; `raw`: sign_raw_payloads of the digests. */
  readonly kind: 'transaction' | 'raw';
  readonly signWith: string;
  readonly digests: readonly number[];
  /** The idempotency record's name; one per activity of a request. */
  readonly method: string;
}

export interface DaemonChain<Tx, Fields, Signer, Message, Input extends ChainInput<Tx> = ChainInput<Tx>> {
  /** The member of SignTransactionRequest's `transaction` oneof. */
  readonly member: string;
  /** The public API's TRANSACTION_TYPE_* of sign_transaction. */
  readonly transactionType: string;
  readonly adapter: ChainAdapter<Tx, Fields, Signer>;
  /** The proto message → the adapter's input (structured fields serialized, or `unsigned` parsed). */
  input(message: Message | undefined): Input;
  /** GetActivity: the input from the unsigned bytes an activity's intent names; default `adapter.parse`. */
  inputOf?(unsigned: Uint8Array): Input;
  /** `sign_with` (and the fee payer's, where the chain has one) → the adapter's signer. */
  signer(ctx: DaemonContext, organizationId: string, req: SignerRequest, input: Input): Promise<Signer>;
  /** Whether `fee_payer_sign_with` means anything for this chain. */
  readonly takesFeePayer?: boolean;
  /** Runs an adapter step so that its errors name this request's fields (Bitcoin: `bitcoin.unsigned`). */
  inRequest?<T>(step: () => T): T;
  /**
   * How many digests `adapter.digests` lists, where that number is fixed and computing them checks
   * nothing (Ethereum: one keccak of the unsigned bytes). A sign_transaction activity then does not
   * compute them: the service computes its own, and the verification recomputes the one it checks.
   */
  readonly digestCount?: number;
  /** The activities; default: one, of every digest, signed with `sign_with`. */
  groups?(
    ctx: DaemonContext,
    organizationId: string,
    req: SignerRequest,
    mode: ResolvedMode,
    signer: Signer,
    digests: readonly { readonly scheme: string }[],
  ): Promise<SigningGroup[]>;
  /** The signer whose signatures a sign_transaction activity answers with, when there are others. */
  transactionSigner?(signer: Signer): Signer;
  /** Each activity is submitted only after the one before completed (a fee payer signs last). */
  readonly sequential?: boolean;
  /** Which activity the answer names when there are several; default the first. */
  readonly answeredBy?: 'first' | 'last';
  /** More request fields that decide what is signed, for the idempotency hash. */
  requestFields?(input: Input, req: SignerRequest): Record<string, unknown>;
  /** Fields for the call's log lines (never secrets). */
  logFields?(input: Input, signer: Signer): Record<string, unknown>;
  /** The transaction id as the chain's tools print it. */
  hash(verified: VerifiedTransaction): string;
  /** The answer's bytes and id when they are not the signed transaction's (Bitcoin's finalize). */
  finish?(
    signed: Uint8Array,
    verified: VerifiedTransaction,
    input: Input,
  ): { signed: Uint8Array; hash: string };
}

/** Any registered chain, its types erased at the registry. */
export type AnyDaemonChain = DaemonChain<any, any, any, any, ChainInput<any>>;

/**
 * The usual shape of a chain message: either `unsigned` bytes, parsed strictly (errors then name
 * `<member>.unsigned`), or the structured fields, serialized; never both.
 */
export function unsignedOrFields<Tx, Fields, Message extends { readonly unsigned: Uint8Array }>(
  member: string,
  message: Message | undefined,
  adapter: Pick<ChainAdapter<Tx, Fields, unknown>, 'parse' | 'serialize'>,
  o: {
    readonly hasFields: (m: Message) => boolean;
    readonly fields: (m: Message) => Fields;
    /** Parse errors keep the parser's field (Ethereum's name the envelope's own fields). */
    readonly keepParseField?: boolean;
    /** Fields → transaction and bytes where the bytes do not carry all of it (a sponsored Tempo fee token). */
    readonly build?: (fields: Fields) => ChainInput<Tx>;
  },
): ChainInput<Tx> {
  if (message === undefined) throw missing(member);
  if (message.unsigned.length > 0) {
    if (o.hasFields(message)) throw invalid(member, 'set either unsigned or the structured fields, not both');
    const unsigned = new Uint8Array(message.unsigned);
    const tx = o.keepParseField
      ? adapter.parse(unsigned)
      : parsedAs(`${member}.unsigned`, () => adapter.parse(unsigned));
    return { tx, unsigned };
  }
  const fields = o.fields(message);
  if (o.build !== undefined) return o.build(fields);
  const unsigned = adapter.serialize(fields);
  return { tx: adapter.parse(unsigned), unsigned };
}

/** Runs a parse whose errors then name `field`, the parser's message saying which part is wrong. */
export function parsedAs<T>(field: string, step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (!isCountersignError(e)) throw e;
    throw new CountersignError(e.code, `${field}: ${e.message}`, { field, cause: e, meta: e.meta });
  }
}

/** A proto enum value through a name map, or FIELD_INVALID naming the field. */
export function enumValue<T>(
  map: Readonly<Record<string, T>>,
  value: string,
  field: string,
  what: string,
): T {
  if (!Object.hasOwn(map, value)) throw invalid(field, `unknown ${what} ${value}`);
  return map[value] as T;
}
