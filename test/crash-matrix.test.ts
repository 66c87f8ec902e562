/**
 * The crash matrix of a sign: `serve` killed with SIGKILL at each failpoint of the public API's
 * submit path (after the policy decision, after signing before the commit, after the commit before
 * the answer), restarted on the same data dir, and the same body retried: exactly one activity and
 * one signature per request, whatever the moment of the crash, and the retry answers with it.
 * The send and tracker failpoints have their matrix, against anvil, in crash-matrix-send.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import type { Credentials } from '../src/service/embedded.js';
import { envelope, post } from './helpers/http.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

const dirs: string[] = [];
const procs: ServeProcess[] = [];
afterAll(async () => {
  for (const p of procs) {
    p.proc.kill('SIGKILL');
    await p.exited;
  }
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const FAILPOINTS = [
  'after-policy-decision',
  'after-sign-before-commit',
  'after-commit-before-answer',
] as const;
const TYPE = 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2';

describe('crash matrix of a sign', () => {
  it('leaves one activity and one signature per request after SIGKILL at each failpoint', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-crash-'));
    dirs.push(dataDir);
    const serve = async (env: NodeJS.ProcessEnv = {}) => {
      const p = await startServe(['--data-dir', dataDir], env);
      procs.push(p);
      return p;
    };
    let server = await serve();
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const eth = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as string;
    const signs = async (api: string) => {
      const r = await post(
        api,
        creds,
        '/public/v1/query/list_activities',
        JSON.stringify({ organizationId: creds.organizationId, paginationOptions: { limit: '100' } }),
      );
      expect(r.status).toBe(200);
      return (r.json.activities as { id: string; type: string }[]).filter((a) => a.type === TYPE);
    };
    server.proc.kill('SIGKILL');
    await server.exited;

    for (const [i, failpoint] of FAILPOINTS.entries()) {
      const body = envelope(TYPE, creds.organizationId, {
        signWith: eth,
        payload: keccak256(toHex(`crash ${failpoint}`)),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      });
      server = await serve({ COUNTERSIGN_FAILPOINT: failpoint });
      await expect(
        post(server.ready.api as string, creds, '/public/v1/submit/sign_raw_payload', body),
        failpoint,
      ).rejects.toThrow();
      expect(await server.exited, failpoint).toBe('SIGKILL');

      server = await serve();
      const api = server.ready.api as string;
      const before = await signs(api);
      // Only a crash after the commit leaves the activity behind; earlier ones leave nothing.
      expect(before.length, failpoint).toBe(failpoint === 'after-commit-before-answer' ? i + 1 : i);
      const retry = await post(api, creds, '/public/v1/submit/sign_raw_payload', body);
      expect(retry.status, failpoint).toBe(200);
      const activity = retry.json.activity as { id: string; status: string };
      expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      const after = await signs(api);
      expect(after.length, failpoint).toBe(i + 1);
      if (failpoint === 'after-commit-before-answer') expect(before.map((a) => a.id)).toContain(activity.id);
      // The same body once more: the same activity, no second signature.
      const again = await post(api, creds, '/public/v1/submit/sign_raw_payload', body);
      expect((again.json.activity as { id: string }).id).toBe(activity.id);
      expect((await signs(api)).length).toBe(i + 1);
      server.proc.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }
  }, 180_000);
});
