/**
 * Closing the service thread: once its service has closed, the thread exits by itself (exit code
 * 0) and is not terminated. Terminating a thread while it is inside a node-addon-api call
 * (secp256k1, keccak) aborts the whole process, so the host terminates only a thread that outstays
 * the grace (the `linger-after-close` failpoint keeps one alive), and says so at warn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PublicApiClient } from '../src/client/client.js';
import { ApiKeyStamper } from '../src/client/stamper.js';
import { startServiceWorker } from '../src/service/worker-host.js';

const dirs: string[] = [];
afterEach(() => {
  delete process.env.COUNTERSIGN_FAILPOINT;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(exitGraceMs?: number) {
  const dir = mkdtempSync(join(tmpdir(), 'countersign-worker-close-'));
  dirs.push(dir);
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'warn' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  let worker: Worker | undefined;
  const service = await startServiceWorker(
    {
      dataDir: dir,
      logLevel: 'silent',
      masterKeyEnv: undefined,
      maxRequestAgeMs: 60_000,
      maxClockSkewMs: 60_000,
      chainRpc: [],
    },
    { logger, onSpawn: (w) => (worker = w), ...(exitGraceMs === undefined ? {} : { exitGraceMs }) },
  );
  if (worker === undefined) throw new Error('no worker was spawned');
  const w = worker;
  const exitCode = new Promise<number>((resolve) => w.once('exit', resolve));
  const terminate = vi.spyOn(w, 'terminate');
  return { service, exitCode, lines, terminate };
}

describe('closing the service thread', () => {
  it('lets the thread exit by itself after it signed, without terminating it', async () => {
    const { service, exitCode, lines, terminate } = await start();
    const { credentials } = service;
    const signWith = credentials.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')!.address;
    const client = new PublicApiClient({
      organizationId: credentials.organizationId,
      stamper: new ApiKeyStamper(credentials),
      transport: { send: (req) => service.handler(req), close: async () => {} },
    });
    const activity = await client.submit(
      'sign_raw_payload',
      client.buildActivityBody({
        type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
        parameters: {
          signWith,
          payload: 'ab'.repeat(32),
          encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
          hashFunction: 'HASH_FUNCTION_NO_OP',
        },
      }),
    );
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await service.close();
    expect(await exitCode).toBe(0);
    expect(terminate).not.toHaveBeenCalled();
    expect(lines.filter((l) => l.msg.includes('terminating'))).toEqual([]);
  });

  it('terminates a thread that outstays the grace after closing, and says so', async () => {
    process.env.COUNTERSIGN_FAILPOINT = 'linger-after-close';
    const { service, exitCode, lines, terminate } = await start(300);
    await service.close();
    expect(terminate).toHaveBeenCalledTimes(1);
    // worker.terminate() ends a thread that still had work with exit code 1.
    expect(await exitCode).toBe(1);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'service worker did not exit after closing; terminating it',
        graceMs: 300,
      }),
    );
  });
});
