/**
 * The chain seam is real: a toy sixth chain (test/toy-chain: its adapter and its proto-message
 * mapping) is added with one registry call and signs through gRPC — the daemon's flow, the
 * embedded service's sign_raw_payloads, and the adapter's verification — with no other change.
 * Its proto message is added to a copy of signer.proto, as a real chain would add it to the real one.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { sha256 } from '@noble/hashes/sha2.js';
import { pino } from 'pino';
import { recoverAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import { inProcessTransport } from '../src/client/in-process-transport.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import type { Transport } from '../src/client/transport.js';
import { registerChain } from '../src/daemon/chains/registry.js';
import { ERROR_CODE_TRAILER } from '../src/daemon/grpc-status.js';
import { LOADER_OPTIONS, loadSignerProto, type SignTransactionResponse } from '../src/daemon/proto.js';
import { startDaemon, type RunningDaemon } from '../src/daemon/start-daemon.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { toyChain } from './toy-chain/daemon.js';

let h: EmbeddedHarness;
let transport: Transport;
let daemon: RunningDaemon;
let dir: string;
let unregister: () => void;
let stub: grpc.Client & {
  SignTransaction: (
    req: unknown,
    cb: (err: grpc.ServiceError | null, res?: SignTransactionResponse) => void,
  ) => void;
};

/** signer.proto with one more member in SignTransactionRequest's `transaction` oneof. */
function protoWithToy(): string {
  const real = readFileSync(loadSignerProto().protoFile, 'utf8');
  const member = '    TempoTransaction tempo = 14;\n';
  if (!real.includes(member)) throw new Error('signer.proto changed: update the toy chain test');
  return (
    real.replace(member, `${member}    ToyTransaction toy = 99;\n`) +
    '\nmessage ToyTransaction {\n  bytes unsigned = 1;\n}\n'
  );
}

beforeAll(async () => {
  h = await startEmbedded();
  dir = mkdtempSync(join(tmpdir(), 'countersign-toy-'));
  const protoFile = join(dir, 'signer.proto');
  writeFileSync(protoFile, protoWithToy());
  unregister = registerChain(toyChain);
  transport = inProcessTransport(h.service.handler);
  daemon = await startDaemon({
    listen: '127.0.0.1:0',
    client: new PublicApiClient({
      transport,
      stamper: new ApiKeyStamper(h.service.credentials),
      organizationId: h.service.credentials.organizationId,
    }),
    defaultOrganizationId: h.service.credentials.organizationId,
    idempotencyDbPath: join(dir, 'daemon.db'),
    logger: pino({ level: 'silent' }),
    protoFile,
  });
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(protoFile, LOADER_OPTIONS)) as unknown as {
    countersign: { v1: { Signer: grpc.ServiceClientConstructor } };
  };
  stub = new pkg.countersign.v1.Signer(
    daemon.address,
    grpc.credentials.createInsecure(),
  ) as unknown as typeof stub;
});

afterAll(async () => {
  stub?.close();
  await daemon?.close();
  await transport?.close();
  unregister?.();
  await h?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const sign = (req: unknown) =>
  new Promise<{ err: grpc.ServiceError | null; res?: SignTransactionResponse }>((resolve) =>
    stub.SignTransaction(req, (err, res) => resolve(res === undefined ? { err } : { err, res })),
  );

describe('a toy sixth chain, added through the registry alone', () => {
  it('signs through gRPC: the daemon builds, has the digest signed, assembles and verifies with its adapter', async () => {
    const account = ethAddressOf(h);
    const unsigned = new TextEncoder().encode('TOYpay 5 toy coins to bob');
    const { err, res } = await sign({
      signWith: account,
      mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
      toy: { unsigned },
    });
    expect(err).toBeNull();
    expect(res?.state).toBe('ACTIVITY_STATE_COMPLETED');
    expect(res?.signer).toBe(account);
    const signed = new Uint8Array(res!.signedTransaction);
    expect(Buffer.from(signed.subarray(0, unsigned.length))).toEqual(Buffer.from(unsigned));
    // Checked again by a second implementation: viem recovers the signer from the appended r ‖ s ‖ v.
    const [sig] = res!.signatures;
    const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
    const recovered = await recoverAddress({
      hash: `0x${hex(sha256(unsigned))}`,
      signature: `0x${hex(sig!.r)}${hex(sig!.s)}${sig!.v === 0 ? '1b' : '1c'}`,
    });
    expect(recovered).toBe(account);
    expect(res?.transactionHash).toBe(hex(sha256(signed)));
  });

  it('refuses bytes that are not a toy transaction with INVALID_ARGUMENT, signing nothing', async () => {
    const { err } = await sign({
      signWith: ethAddressOf(h),
      mode: 'SIGNING_MODE_SIGN_RAW_PAYLOADS',
      toy: { unsigned: new TextEncoder().encode('NOT a toy') },
    });
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err?.metadata.get(ERROR_CODE_TRAILER)[0]).toBe('FIELD_INVALID');
  });
});
