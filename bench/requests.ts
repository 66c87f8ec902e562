/**
 * What the gRPC benches send and how they summarize it: request messages encoded with protobufjs
 * from the same proto the daemon serves, framed as gRPC frames, and latency percentiles.
 */
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { ServeProcess } from '../test/helpers/serve.js';

export const signerProto = protobuf.loadSync(
  fileURLToPath(new URL('../proto/countersign/v1/signer.proto', import.meta.url)),
);
const SignTransactionRequest = signerProto.lookupType('countersign.v1.SignTransactionRequest');

/** A gRPC length-prefixed frame: uncompressed flag + 4-byte big-endian length + message. */
export function frame(
  message: Record<string, unknown>,
  type: protobuf.Type = SignTransactionRequest,
): Buffer {
  const bytes = type.encode(type.fromObject(message)).finish();
  const head = Buffer.alloc(5);
  head.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([head, bytes]);
}

export const MODE = { SIGN_TRANSACTION: 1, SIGN_RAW_PAYLOADS: 2 } as const;

/**
 * The load generator's target for EIP-1559 SignTransaction calls by `server`'s default Ethereum
 * account over `connections` connections, each call a new nonce (so none is answered from the
 * service's idempotency cache).
 */
export function ethereumSignCalls(server: ServeProcess, connections: number) {
  const eth = server.ready.accounts?.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address;
  if (eth === undefined) throw new Error('the default wallet has no Ethereum account');
  let nonce = 0;
  return {
    authority: server.ready.grpc,
    path: '/countersign.v1.Signer/SignTransaction',
    connections,
    body: () => ethereumRequest(eth, MODE.SIGN_TRANSACTION, nonce++),
  };
}

/** An Ethereum EIP-1559 SignTransactionRequest; `nonce` makes each body distinct. */
export function ethereumRequest(signWith: string, mode: number, nonce: number): Buffer {
  return frame({
    signWith,
    mode,
    ethereum: {
      type: 3, // EIP-1559
      chainId: '31337',
      nonce: String(nonce),
      to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      value: '1000000000000000',
      gasLimit: '21000',
      maxFeePerGas: '2000000000',
      maxPriorityFeePerGas: '1000000000',
    },
  });
}

/** The `p`th percentile (0–100) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}
