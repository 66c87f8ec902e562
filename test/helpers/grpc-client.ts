/**
 * A typed grpc-js client of `countersign.v1.Signer` for tests, built from signer.proto with the
 * daemon's own loader options so both ends agree on names, enums-as-strings and defaults. Each
 * call resolves to the response or to the call's `{code, details, metadata}`; it never rejects.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  LOADER_OPTIONS,
  loadSignerProto,
  type ETHEREUM_TRANSACTION_TYPES,
  type HashFunction,
  type PayloadEncoding,
  type SignMessageResponse,
  type SignRawPayloadsResponse,
  type SigningMode,
  type SignTransactionResponse,
  type BitcoinTransactionMessage,
  type SolanaTransactionMessage,
  type TempoTransactionMessage,
  type TronTransactionMessage,
} from '../../src/daemon/proto.js';
import { ERROR_CODE_TRAILER } from '../../src/daemon/grpc-status.js';

export type { SignMessageResponse, SignRawPayloadsResponse, SignTransactionResponse };

export type EthereumTransactionType = (typeof ETHEREUM_TRANSACTION_TYPES)[number];

/*
 * Requests as a client writes them: every field optional (proto3), a `oneof` member set by its
 * own name, bytes as Uint8Array, 64-bit integers as decimal strings.
 */

export interface EthereumAccessListEntryInput {
  readonly address: string;
  readonly storageKeys?: readonly Uint8Array[];
}

export interface EthereumAuthorizationInput {
  readonly chainId: string;
  readonly address: string;
  readonly nonce: string;
  readonly yParity: number;
  readonly r: Uint8Array;
  readonly s: Uint8Array;
}

export interface EthereumTransactionInput {
  readonly unsigned?: Uint8Array;
  readonly type?: EthereumTransactionType;
  readonly chainId?: string;
  readonly nonce?: string;
  readonly to?: string;
  readonly value?: string;
  readonly data?: Uint8Array;
  readonly gasLimit?: string;
  readonly gasPrice?: string;
  readonly maxFeePerGas?: string;
  readonly maxPriorityFeePerGas?: string;
  readonly accessList?: readonly EthereumAccessListEntryInput[];
  readonly maxFeePerBlobGas?: string;
  readonly blobVersionedHashes?: readonly Uint8Array[];
  readonly authorizationList?: readonly EthereumAuthorizationInput[];
  readonly legacyWithoutChainId?: boolean;
}

/** The other chains' messages with proto3 defaults left out (the loader fills them in). */
type Input<T> = {
  readonly [K in keyof T]?: T[K] extends readonly (infer E)[]
    ? readonly Input<E>[]
    : T[K] extends object
      ? T[K] extends Uint8Array
        ? T[K]
        : Input<T[K]>
      : T[K];
};

/** Set exactly one chain member, as the `transaction` oneof requires. */
export interface SignTransactionInput {
  readonly organizationId?: string;
  readonly signWith: string;
  readonly idempotencyKey?: string;
  readonly mode?: SigningMode;
  readonly feePayerSignWith?: string;
  readonly ethereum?: EthereumTransactionInput;
  readonly solana?: Input<SolanaTransactionMessage>;
  readonly tron?: Input<TronTransactionMessage>;
  readonly bitcoin?: Input<BitcoinTransactionMessage>;
  readonly tempo?: Input<TempoTransactionMessage>;
}

export interface SignRawPayloadsInput {
  readonly organizationId?: string;
  readonly signWith: string;
  readonly idempotencyKey?: string;
  readonly payloads: readonly string[];
  readonly encoding: PayloadEncoding;
  readonly hashFunction: HashFunction;
}

/** Exactly one message member, as the `message` oneof requires. */
export type SignMessageInput = {
  readonly organizationId?: string;
  readonly signWith: string;
  readonly idempotencyKey?: string;
} & (
  | { readonly personalMessage: Uint8Array }
  | { readonly typedDataJson: string }
  | { readonly authorization: { readonly chainId: string; readonly address: string; readonly nonce: string } }
  | { readonly digest: Uint8Array }
);

/** What a failed call carries (the fields of grpc-js's ServiceError that tests read). */
export interface RpcError {
  readonly code: grpc.status;
  readonly details: string;
  readonly metadata: grpc.Metadata;
}

export type RpcResult<T> =
  { readonly ok: true; readonly response: T } | { readonly ok: false; readonly error: RpcError };

export interface SignerClient {
  signTransaction(req: SignTransactionInput): Promise<RpcResult<SignTransactionResponse>>;
  signRawPayloads(req: SignRawPayloadsInput): Promise<RpcResult<SignRawPayloadsResponse>>;
  signMessage(req: SignMessageInput): Promise<RpcResult<SignMessageResponse>>;
  close(): void;
}

export interface CreateSignerClientOptions {
  /** `host:port` of the daemon. */
  readonly address: string;
  /** Per-call deadline, so a hung daemon fails the test instead of stalling it. */
  readonly deadlineMs?: number;
  /** TLS credentials (default: an insecure channel). */
  readonly credentials?: grpc.ChannelCredentials;
  readonly channelOptions?: grpc.ChannelOptions;
  /** Metadata sent with every call (e.g. `authorization: Bearer …`). */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** A unary method of a grpc-js stub, as called with metadata, options and a callback. */
export type UnaryMethod<Res = unknown> = (
  req: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (err: grpc.ServiceError | null, res?: Res) => void,
) => grpc.ClientUnaryCall;

/** A server-streaming method of a grpc-js stub. */
export type ServerStreamMethod<T> = (
  req: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
) => grpc.ClientReadableStream<T>;

/**
 * A raw grpc-js stub of `countersign.v1.Signer` over an insecure channel to `address`, built with
 * the daemon's loader options; `M` names the methods the caller uses (by their proto names).
 */
export function openSignerStub<M>(
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  channelOptions: grpc.ChannelOptions = {},
): M & { close(): void } {
  const definition = protoLoader.loadSync(loadSignerProto().protoFile, LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    countersign: { v1: { Signer: grpc.ServiceClientConstructor } };
  };
  return new pkg.countersign.v1.Signer(address, credentials, channelOptions) as unknown as M & {
    close(): void;
  };
}

const DEFAULT_DEADLINE_MS = 30_000;

/** Opens an insecure grpc-js channel to the daemon's Signer service. */
export function createSignerClient(opts: CreateSignerClientOptions): SignerClient {
  const client = openSignerStub<Record<string, UnaryMethod | undefined>>(
    opts.address,
    opts.credentials,
    opts.channelOptions,
  );
  const metadata = () => {
    const m = new grpc.Metadata();
    for (const [k, v] of Object.entries(opts.metadata ?? {})) m.set(k, v);
    return m;
  };
  const deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;

  function unary<Res>(
    name: 'SignTransaction' | 'SignRawPayloads' | 'SignMessage',
    req: unknown,
  ): Promise<RpcResult<Res>> {
    const method = client[name];
    if (method === undefined) throw new Error(`countersign.v1.Signer has no method ${name}`);
    return new Promise((resolve) => {
      method.call(client, req, metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => {
        if (err !== null)
          resolve({ ok: false, error: { code: err.code, details: err.details, metadata: err.metadata } });
        else resolve({ ok: true, response: res as Res });
      });
    });
  }

  return {
    signTransaction: (req) => unary('SignTransaction', req),
    signRawPayloads: (req) => unary('SignRawPayloads', req),
    signMessage: (req) => unary('SignMessage', req),
    close: () => client.close(),
  };
}

/** The response of a successful call; a failed one throws with its status, details and error code. */
export function unwrap<T>(result: RpcResult<T>): T {
  if (result.ok) return result.response;
  const { code, details, metadata } = result.error;
  const errorCode = metadata.get(ERROR_CODE_TRAILER)[0];
  throw new Error(`gRPC call failed: ${grpc.status[code] ?? code} (${String(errorCode ?? '-')}): ${details}`);
}

/** A server stream as a test reads it: what has arrived so far, and how the call ended. */
export interface StreamWatch<T> {
  readonly messages: T[];
  /** Resolves with the stream's final status. */
  readonly ended: Promise<RpcError>;
  /** Resolves once `n` messages have arrived; rejects if the stream ends first. */
  received(n: number): Promise<void>;
  cancel(): void;
}

/** Collects the messages of a grpc-js server-streaming call and its final status. */
export function watchStream<T>(call: grpc.ClientReadableStream<T>): StreamWatch<T> {
  const messages: T[] = [];
  const waiters: (() => void)[] = [];
  call.on('data', (m: T) => {
    messages.push(m);
    for (const w of waiters.splice(0)) w();
  });
  // Errors also arrive as the final 'status'; the listener keeps them from being unhandled.
  call.on('error', () => {});
  const ended = new Promise<RpcError>((resolve) =>
    call.on('status', (s: grpc.StatusObject) => {
      for (const w of waiters.splice(0)) w();
      resolve({ code: s.code, details: s.details, metadata: s.metadata });
    }),
  );
  let finished = false;
  void ended.then(() => (finished = true));
  return {
    messages,
    ended,
    received: async (n) => {
      while (messages.length < n) {
        if (finished) throw new Error(`the stream ended after ${messages.length} of ${n} messages`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    cancel: () => call.cancel(),
  };
}
