/** The command-line contract: --help, init (data dir, 0600 secrets, what it prints), bad flags. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../bin/countersign.js', import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('countersign CLI', () => {
  it('prints the usage with every flag and variable on --help', async () => {
    const { stdout } = await run(process.execPath, [BIN, '--help']);
    for (const s of [
      '--data-dir',
      '--grpc-listen',
      '--api-listen',
      '--proxy-listen',
      '--chain-rpc',
      '--log-level',
      '--config',
      'COUNTERSIGN_MASTER_KEY',
      'COUNTERSIGN_DATA_DIR',
    ])
      expect(stdout).toContain(s);
  });

  it('init creates the organization, a 0600 credentials.json and master key, and prints them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-init-'));
    dirs.push(dataDir);
    const { stdout } = await run(process.execPath, [
      BIN,
      'init',
      '--data-dir',
      dataDir,
      '--log-level',
      'silent',
    ]);
    const printed = JSON.parse(stdout) as {
      organizationId: string;
      walletId: string;
      accounts: { addressFormat: string }[];
    };
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    for (const k of ['organizationId', 'userId', 'apiPublicKey', 'apiPrivateKey', 'walletId', 'accounts'])
      expect(creds).toHaveProperty(k);
    expect(creds.organizationId).toBe(printed.organizationId);
    expect(printed.accounts.map((a) => a.addressFormat)).toContain('ADDRESS_FORMAT_ETHEREUM');
    expect(stdout).not.toContain(creds.apiPrivateKey as string);
    expect(statSync(join(dataDir, 'credentials.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
    // A second init keeps what is there.
    const again = JSON.parse(
      (await run(process.execPath, [BIN, 'init', '--data-dir', dataDir, '--log-level', 'silent'])).stdout,
    );
    expect(again.organizationId).toBe(printed.organizationId);
  });

  it('exits 2 with the reason on an unknown flag', async () => {
    const err = (await run(process.execPath, [BIN, 'serve', '--no-such-flag']).catch((e: unknown) => e)) as {
      code: number;
      stderr: string;
    };
    expect(err.code).toBe(2);
    expect(err.stderr).toContain('no-such-flag');
  });
});
