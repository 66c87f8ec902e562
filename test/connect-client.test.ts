/**
 * A second tool generates a client from the proto and talks to the daemon: @connectrpc/connect with
 * its gRPC transport (@connectrpc/connect-node) and the service descriptor protoc-gen-es generated
 * (no @grpc/grpc-js, no proto loader on this side). It signs an Ethereum transaction through
 * SignTransaction, and reads the google.rpc.ErrorInfo of a refusal from grpc-status-details-bin.
 */
import { join } from 'node:path';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { pino } from 'pino';
import { hexToBytes, recoverTransactionAddress, serializeTransaction, toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import { inProcessTransport } from '../src/client/in-process-transport.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import type { Transport } from '../src/client/transport.js';
import { startDaemon, type RunningDaemon } from '../src/daemon/start-daemon.js';
import { ActivityState, Signer, SigningMode } from '../src/shared/gen/countersign/v1/signer_pb.js';
import { ErrorInfoSchema } from '../src/shared/gen/google/rpc/error_details_pb.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';

let h: EmbeddedHarness;
let transport: Transport;
let daemon: RunningDaemon;
let signer: Client<typeof Signer>;
let eth: `0x${string}`;
let tron: string;

beforeAll(async () => {
  h = await startEmbedded();
  const org = h.service.credentials.organizationId;
  const account = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
  if (account === undefined) throw new Error('the default wallet has no Ethereum account');
  eth = account.address as `0x${string}`;
  const tronAccount = h.service.credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_TRON');
  if (tronAccount === undefined) throw new Error('the default wallet has no Tron account');
  tron = tronAccount.address;
  transport = inProcessTransport(h.service.handler);
  daemon = await startDaemon({
    listen: '127.0.0.1:0',
    client: new PublicApiClient({
      transport,
      stamper: new ApiKeyStamper(h.service.credentials),
      organizationId: org,
    }),
    defaultOrganizationId: org,
    idempotencyDbPath: join(h.dataDir, 'daemon.db'),
    logger: pino({ level: 'silent' }),
  });
  signer = createClient(Signer, createGrpcTransport({ baseUrl: `http://${daemon.address}` }));
});

afterAll(async () => {
  await daemon?.close();
  await transport?.close();
  await h?.close();
});

const unsigned = (nonce: number) =>
  hexToBytes(
    serializeTransaction({
      type: 'eip1559',
      chainId: 31337,
      nonce,
      to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      value: 1_000_000_000_000_000n,
      gas: 21_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    }),
  );

describe('a @connectrpc/connect client generated from the proto', () => {
  it('signs through SignTransaction; the signature recovers to the account', async () => {
    const res = await signer.signTransaction({
      signWith: eth,
      mode: SigningMode.SIGN_TRANSACTION,
      transaction: { case: 'ethereum', value: { unsigned: unsigned(7) } },
    });
    expect(res.state).toBe(ActivityState.COMPLETED);
    expect(res.signer.toLowerCase()).toBe(eth.toLowerCase());
    const recovered = await recoverTransactionAddress({
      serializedTransaction: toHex(res.signedTransaction) as `0x02${string}`,
    });
    expect(recovered.toLowerCase()).toBe(eth.toLowerCase());
    expect(res.signatures).toHaveLength(1);
  });

  it('reads the ErrorInfo of a refusal: reason, domain and field', async () => {
    let caught: unknown;
    try {
      await signer.signTransaction({
        signWith: tron,
        mode: SigningMode.SIGN_TRANSACTION,
        // A Tron raw_data cut short inside its first field.
        transaction: { case: 'tron', value: { unsigned: Uint8Array.of(0x0a, 0x02, 0x3b) } },
      });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConnectError);
    const err = caught as ConnectError;
    expect(err.code).toBe(Code.InvalidArgument);
    const [info, ...more] = err.findDetails(ErrorInfoSchema);
    expect(more).toEqual([]);
    expect(info?.domain).toBe('countersign');
    expect(info?.reason).toBe('TRON_MALFORMED_TRANSACTION');
    expect(info?.metadata).toEqual({ field: 'tron.unsigned' });
    // The trailers of before are still there beside it.
    expect(err.metadata.get('countersign-error-code')).toBe('TRON_MALFORMED_TRANSACTION');
  });
});
