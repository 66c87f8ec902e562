/**
 * An acknowledged signature survives `kill -9`: the restarted server has the activity, and the same
 * body resubmitted returns the same activity and the same signature (nothing is signed twice).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import type { Credentials } from '../src/service/embedded.js';
import { envelope, post } from './helpers/http.js';
import { startServe } from './helpers/serve.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('durability', () => {
  it('keeps an acknowledged signature across kill -9 and answers a resubmission with it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-durable-'));
    dirs.push(dataDir);
    const first = await startServe(['--data-dir', dataDir]);
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const eth = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as string;
    const bodies = Array.from({ length: 20 }, (_, i) =>
      envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', creds.organizationId, {
        signWith: eth,
        payload: keccak256(toHex(`durable ${i}`)),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      }),
    );
    const acked = await Promise.all(
      bodies.map((b) => post(first.ready.api as string, creds, '/public/v1/submit/sign_raw_payload', b)),
    );
    first.proc.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    const second = await startServe(['--data-dir', dataDir]);
    try {
      expect(second.ready.organizationId).toBe(creds.organizationId);
      for (const [i, res] of acked.entries()) {
        expect(res.status).toBe(200);
        const a = res.json.activity as { id: string; result: Record<string, unknown> };
        const got = await post(
          second.ready.api as string,
          creds,
          '/public/v1/query/get_activity',
          JSON.stringify({ organizationId: creds.organizationId, activityId: a.id }),
        );
        expect(got.status).toBe(200);
        expect((got.json.activity as any).result.signRawPayloadResult).toEqual(a.result.signRawPayloadResult);
        const again = await post(
          second.ready.api as string,
          creds,
          '/public/v1/submit/sign_raw_payload',
          bodies[i] as string,
        );
        expect((again.json.activity as any).id).toBe(a.id);
        expect((again.json.activity as any).result.signRawPayloadResult).toEqual(
          a.result.signRawPayloadResult,
        );
      }
    } finally {
      second.proc.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  });
});
