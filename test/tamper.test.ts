/**
 * The daemon's one gate: a response whose signature was tampered with on the way back from the
 * (real) service is refused — INTERNAL with SIGNATURE_VERIFICATION_FAILED — never returned. The
 * tampering happens in a test transport between the daemon and the real embedded service.
 */
import { join } from 'node:path';
import { status as grpcStatus } from '@grpc/grpc-js';
import { pino } from 'pino';
import { keccak256, toHex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import { inProcessTransport } from '../src/client/in-process-transport.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import type { Transport } from '../src/client/transport.js';
import { ERROR_CODE_TRAILER } from '../src/daemon/grpc-status.js';
import { startDaemon, type RunningDaemon } from '../src/daemon/start-daemon.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { createSignerClient, type RpcResult, type SignerClient } from './helpers/grpc-client.js';

type Tamper = (activity: Record<string, any>) => void;

let h: EmbeddedHarness;
let daemon: RunningDaemon;
let client: SignerClient;
let tamper: Tamper | undefined;

/** Flips the low bit of the hex digit at `i` of a hex string. */
const flip = (hex: string, i: number) =>
  hex.slice(0, i) + (Number.parseInt(hex[i] as string, 16) ^ 1).toString(16) + hex.slice(i + 1);

beforeAll(async () => {
  h = await startEmbedded();
  const real = inProcessTransport(h.service.handler);
  const tampering: Transport = {
    send: async (req) => {
      const res = await real.send(req);
      if (tamper === undefined || res.status !== 200 || !req.path.includes('/submit/')) return res;
      const json = JSON.parse(Buffer.from(res.body).toString('utf8')) as { activity: Record<string, any> };
      tamper(json.activity);
      return { status: res.status, body: Buffer.from(JSON.stringify(json)) };
    },
    close: () => real.close(),
  };
  const c = h.service.credentials;
  daemon = await startDaemon({
    listen: '127.0.0.1:0',
    client: new PublicApiClient({
      transport: tampering,
      stamper: new ApiKeyStamper(c),
      organizationId: c.organizationId,
    }),
    defaultOrganizationId: c.organizationId,
    idempotencyDbPath: join(h.dataDir, 'daemon.db'),
    logger: pino({ level: 'silent' }),
  });
  client = createSignerClient({ address: daemon.address });
});
afterAll(async () => {
  client.close();
  await daemon.close();
  await h.close();
});

let nonce = 0;
const tx = (mode: 'SIGNING_MODE_SIGN_TRANSACTION' | 'SIGNING_MODE_SIGN_RAW_PAYLOADS') => ({
  signWith: ethAddressOf(h),
  mode,
  ethereum: {
    type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559' as const,
    chainId: '1',
    nonce: String(nonce++),
    to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    value: '5',
    gasLimit: '21000',
    maxFeePerGas: '2000000000',
    maxPriorityFeePerGas: '1000000000',
  },
});

function expectRefused(r: RpcResult<unknown>) {
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.error.code).toBe(grpcStatus.INTERNAL);
  expect(r.error.metadata.get(ERROR_CODE_TRAILER)).toEqual(['SIGNATURE_VERIFICATION_FAILED']);
}

describe('tampered responses are refused', () => {
  it('passes an untampered response (control)', async () => {
    tamper = undefined;
    const r = await client.signTransaction(tx('SIGNING_MODE_SIGN_TRANSACTION'));
    expect(r.ok).toBe(true);
  });

  it('refuses a signed transaction whose s was altered (sign_transaction)', async () => {
    tamper = (a) => {
      const st = a.result.signTransactionResult.signedTransaction as string;
      a.result.signTransactionResult.signedTransaction = flip(st, st.length - 3);
    };
    expectRefused(await client.signTransaction(tx('SIGNING_MODE_SIGN_TRANSACTION')));
  });

  it('refuses a signed transaction whose body was altered (sign_transaction)', async () => {
    tamper = (a) => {
      const st = a.result.signTransactionResult.signedTransaction as string;
      a.result.signTransactionResult.signedTransaction = flip(st, 10);
    };
    expectRefused(await client.signTransaction(tx('SIGNING_MODE_SIGN_TRANSACTION')));
  });

  it('refuses a raw-payload signature whose r was altered (sign_raw_payloads)', async () => {
    tamper = (a) => {
      const sig = a.result.signRawPayloadsResult.signatures[0];
      sig.r = flip(sig.r as string, 20);
    };
    expectRefused(await client.signTransaction(tx('SIGNING_MODE_SIGN_RAW_PAYLOADS')));
  });

  it('refuses a raw-payload signature whose parity was flipped', async () => {
    tamper = (a) => {
      const sig = a.result.signRawPayloadsResult.signatures[0];
      sig.v = sig.v === '00' ? '01' : '00';
    };
    expectRefused(await client.signTransaction(tx('SIGNING_MODE_SIGN_RAW_PAYLOADS')));
  });

  it('refuses a tampered message signature (SignMessage) and raw payload (SignRawPayloads)', async () => {
    tamper = (a) => {
      const sig = a.result.signRawPayloadsResult.signatures[0];
      sig.s = flip(sig.s as string, 5);
    };
    expectRefused(
      await client.signMessage({ signWith: ethAddressOf(h), personalMessage: Buffer.from('hello') }),
    );
    expectRefused(
      await client.signRawPayloads({
        signWith: ethAddressOf(h),
        payloads: [keccak256(toHex('raw')).slice(2)],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    );
  });
});
