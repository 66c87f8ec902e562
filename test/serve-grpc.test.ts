/**
 * `countersign serve` as a process (the service on its worker thread): a burst of concurrent gRPC
 * signatures all verify, calls cancelled mid-flight do not wedge it, and SIGTERM drains and exits 0.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keccak256, recoverTransactionAddress, toHex } from 'viem';
import { createSignerClient, unwrap } from './helpers/grpc-client.js';
import { startServe } from './helpers/serve.js';
import { servedRoutes } from '../src/service/api/routes.js';
import { TURNKEY_SUBMIT_PATHS } from '../src/service/api/turnkeyRoutes.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('serve over gRPC', () => {
  it('signs a concurrent burst, survives cancelled calls, and exits 0 on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-serve-'));
    dirs.push(dataDir);
    const server = await startServe(['--data-dir', dataDir]);
    const eth = server.ready.accounts?.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')
      ?.address as string;
    const health = await fetch(`${server.ready.api as string}/healthz`);
    expect(health.status).toBe(200);

    // The listener on this thread knows the served paths from the service thread: each served one
    // gets past the route check (to the Content-Type check), the others are refused before it.
    const post = (path: string) =>
      fetch(`${server.ready.api as string}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{}',
      });
    const served = servedRoutes();
    expect(served).toContain('/public/v1/submit/sign_transaction');
    expect(served).toContain('/public/v1/query/whoami');
    for (const path of served) expect([path, (await post(path)).status]).toEqual([path, 415]);
    const unserved = [...TURNKEY_SUBMIT_PATHS]
      .map((n) => `/public/v1/submit/${n}`)
      .find((p) => !served.includes(p));
    expect(unserved).toBeDefined();
    const refusedTurnkey = await post(unserved as string);
    expect(refusedTurnkey.status).toBe(501);
    expect(((await refusedTurnkey.json()) as { code: number }).code).toBe(12);
    const refusedUnknown = await post('/public/v1/submit/no_such_activity');
    expect(refusedUnknown.status).toBe(404);
    expect(((await refusedUnknown.json()) as { code: number }).code).toBe(5);

    const client = createSignerClient({ address: server.ready.grpc });
    const tx = (nonce: number) => ({
      signWith: eth,
      ethereum: {
        type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559' as const,
        chainId: '31337',
        nonce: String(nonce),
        to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        value: '1',
        gasLimit: '21000',
        maxFeePerGas: '2000000000',
        maxPriorityFeePerGas: '1000000000',
      },
    });
    const burst = await Promise.all(Array.from({ length: 64 }, (_, i) => client.signTransaction(tx(i))));
    const hashes = new Set<string>();
    for (const r of burst) {
      const res = unwrap(r);
      expect(res.state).toBe('ACTIVITY_STATE_COMPLETED');
      const signed = toHex(res.signedTransaction);
      expect(res.transactionHash).toBe(keccak256(signed));
      expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(eth);
      hashes.add(res.transactionHash);
    }
    expect(hashes.size).toBe(64);

    // Calls whose caller gives up at once: the daemon still finishes them, and they hold nothing.
    const impatient = createSignerClient({ address: server.ready.grpc, deadlineMs: 1 });
    const cancelled = await Promise.all(
      Array.from({ length: 32 }, (_, i) => impatient.signTransaction(tx(1000 + i))),
    );
    expect(cancelled.some((r) => !r.ok)).toBe(true);
    impatient.close();
    const after = unwrap(await client.signTransaction(tx(2000)));
    expect(after.state).toBe('ACTIVITY_STATE_COMPLETED');
    client.close();

    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  });
});
