/**
 * `countersign/client`: a typed client of the `countersign.v1.Signer` gRPC service, built from the
 * TypeScript that protoc-gen-es generated from the proto (src/shared/gen) over @grpc/grpc-js. Every
 * method of the service descriptor is a method here, with the generated request and response types;
 * a failed call rejects with a {@link SignerError} that carries the google.rpc.ErrorInfo of the
 * call's `grpc-status-details-bin` trailer (countersign's error code, the request field).
 */
import {
  create,
  fromBinary,
  toBinary,
  type DescMessage,
  type MessageInitShape,
  type MessageShape,
} from '@bufbuild/protobuf';
import type { GenService, GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import { anyIs, anyUnpack } from '@bufbuild/protobuf/wkt';
import * as grpc from '@grpc/grpc-js';
import { Signer } from '../shared/gen/countersign/v1/signer_pb.js';
import { ErrorInfoSchema, type ErrorInfo } from '../shared/gen/google/rpc/error_details_pb.js';
import { StatusSchema } from '../shared/gen/google/rpc/status_pb.js';

export * from '../shared/gen/countersign/v1/signer_pb.js';
export * from '../shared/gen/countersign/v1/errors_pb.js';
export type { ErrorInfo } from '../shared/gen/google/rpc/error_details_pb.js';

/** The trailer of the gRPC richer error model: a serialized google.rpc.Status. */
export const STATUS_DETAILS_TRAILER = 'grpc-status-details-bin';
/** ErrorInfo.domain of countersign's errors. */
export const ERROR_DOMAIN = 'countersign';

/** A call the daemon refused or that failed: the gRPC status and what ErrorInfo says about it. */
export class SignerError extends Error {
  override readonly name = 'SignerError';
  constructor(
    /** The gRPC status code. */
    readonly code: grpc.status,
    /** The status message. */
    readonly details: string,
    /** countersign's error code (ErrorInfo.reason), e.g. `SIGN_WITH_NOT_FOUND`; '' without ErrorInfo. */
    readonly reason: string,
    /** The request field the error is about (ErrorInfo.metadata.field), if any. */
    readonly field: string | undefined,
    /** The ErrorInfo of domain `countersign`, when the status carried one. */
    readonly errorInfo: ErrorInfo | undefined,
    /** The call's trailers. */
    readonly metadata: grpc.Metadata,
  ) {
    super(`${grpc.status[code] ?? code}: ${details}`);
  }
}

/** The google.rpc.ErrorInfo of domain `countersign` inside a `grpc-status-details-bin` value. */
export function errorInfoOf(metadata: grpc.Metadata): ErrorInfo | undefined {
  for (const value of metadata.get(STATUS_DETAILS_TRAILER)) {
    if (typeof value === 'string') continue;
    let status;
    try {
      status = fromBinary(StatusSchema, value);
    } catch {
      continue;
    }
    for (const detail of status.details) {
      if (!anyIs(detail, ErrorInfoSchema)) continue;
      const info = anyUnpack(detail, ErrorInfoSchema);
      if (info?.domain === ERROR_DOMAIN) return info;
    }
  }
  return undefined;
}

function toSignerError(err: grpc.ServiceError): SignerError {
  const metadata = err.metadata ?? new grpc.Metadata();
  const info = errorInfoOf(metadata);
  return new SignerError(err.code, err.details, info?.reason ?? '', info?.metadata.field, info, metadata);
}

type Methods = typeof Signer extends GenService<infer M extends GenServiceMethods> ? M : never;

export interface CallOptions {
  /** Absolute deadline (ms since the epoch) or a Date. */
  readonly deadline?: number | Date;
  /** Metadata for this call, beside the client's own. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** Cancels the call. */
  readonly signal?: AbortSignal;
}

/** One method per RPC: unary ones resolve to the response, server-streaming ones are async iterables. */
export type SignerClient = {
  readonly [K in keyof Methods]: Methods[K]['methodKind'] extends 'server_streaming'
    ? (
        request: MessageInitShape<Methods[K]['input']>,
        options?: CallOptions,
      ) => AsyncIterable<MessageShape<Methods[K]['output']>>
    : (
        request: MessageInitShape<Methods[K]['input']>,
        options?: CallOptions,
      ) => Promise<MessageShape<Methods[K]['output']>>;
} & {
  /** Closes the channel. */
  close(): void;
};

export interface SignerClientOptions {
  /** TLS credentials (default: an insecure channel, for loopback). */
  readonly credentials?: grpc.ChannelCredentials;
  readonly channelOptions?: grpc.ChannelOptions;
  /** Metadata sent with every call (e.g. `authorization: Bearer …`). */
  readonly metadata?: Readonly<Record<string, string>>;
}

/** A client of the Signer service at `address` (`host:port`). */
export function createSignerClient(address: string, options: SignerClientOptions = {}): SignerClient {
  const client = new grpc.Client(
    address,
    options.credentials ?? grpc.credentials.createInsecure(),
    options.channelOptions,
  );
  const metadataOf = (call?: CallOptions): grpc.Metadata => {
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries({ ...options.metadata, ...call?.metadata })) md.set(k, v);
    return md;
  };
  const grpcOptions = (call?: CallOptions): grpc.CallOptions =>
    call?.deadline === undefined ? {} : { deadline: call.deadline };
  const methods: Record<string, unknown> = {};
  for (const method of Signer.methods) {
    const path = `/${Signer.typeName}/${method.name}`;
    const input: DescMessage = method.input;
    const output: DescMessage = method.output;
    const serialize = (req: MessageInitShape<DescMessage>): Buffer =>
      Buffer.from(toBinary(input, create(input, req)));
    const deserialize = (bytes: Buffer): MessageShape<DescMessage> => fromBinary(output, bytes);
    /** What both call kinds of grpc-js take first: path, codec, request, metadata, options. */
    const head = (req: MessageInitShape<DescMessage>, call: CallOptions | undefined) =>
      [path, serialize, deserialize, req, metadataOf(call), grpcOptions(call)] as const;
    if (method.methodKind === 'unary') {
      methods[method.localName] = (req: MessageInitShape<DescMessage>, call?: CallOptions) =>
        new Promise((resolve, reject) => {
          const pending = client.makeUnaryRequest(...head(req, call), (err, res) =>
            err ? reject(toSignerError(err)) : resolve(res),
          );
          call?.signal?.addEventListener('abort', () => pending.cancel(), { once: true });
        });
    } else if (method.methodKind === 'server_streaming') {
      methods[method.localName] = (req: MessageInitShape<DescMessage>, call?: CallOptions) => ({
        async *[Symbol.asyncIterator]() {
          const stream = client.makeServerStreamRequest(...head(req, call));
          call?.signal?.addEventListener('abort', () => stream.cancel(), { once: true });
          try {
            for await (const message of stream) yield message as MessageShape<DescMessage>;
          } catch (e) {
            if (e instanceof Error && 'code' in e && 'metadata' in e)
              throw toSignerError(e as grpc.ServiceError);
            throw e;
          } finally {
            stream.cancel();
          }
        },
      });
    }
  }
  return { ...methods, close: () => client.close() } as SignerClient;
}
