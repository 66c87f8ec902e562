import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bytesToHex } from '../../shared/encoding.js';
import { loadOrCreateMasterKey } from './index.js';

const configInvalid = expect.objectContaining({ code: 'CONFIG_INVALID' });
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'countersign-keys-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('loadOrCreateMasterKey from the data directory', () => {
  it('creates a 0600 key file on first start and reloads the same key', () => {
    const dataDir = join(dir, 'data');
    const a = loadOrCreateMasterKey({ dataDir });
    expect(a).toHaveLength(32);
    const file = join(dataDir, 'master.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'latin1')).toBe(`${bytesToHex(a)}\n`);
    expect(bytesToHex(loadOrCreateMasterKey({ dataDir }))).toBe(bytesToHex(a));
    expect(bytesToHex(loadOrCreateMasterKey({ dataDir, envValue: undefined }))).toBe(bytesToHex(a));
  });

  it('leaves no temporary files behind', () => {
    loadOrCreateMasterKey({ dataDir: dir });
    expect(readdir(dir)).toEqual(['master.key']);
  });

  it('refuses a key file readable by group or others', () => {
    loadOrCreateMasterKey({ dataDir: dir });
    for (const mode of [0o644, 0o640, 0o604, 0o700]) {
      chmodSync(join(dir, 'master.key'), mode);
      expect(() => loadOrCreateMasterKey({ dataDir: dir })).toThrow(/chmod 600/);
    }
    chmodSync(join(dir, 'master.key'), 0o400);
    expect(loadOrCreateMasterKey({ dataDir: dir })).toHaveLength(32);
  });

  it.each([
    ['too short', 'ab'.repeat(31)],
    ['too long', 'ab'.repeat(33)],
    ['not hex', 'zz'.repeat(32)],
    ['empty', ''],
    ['two trailing newlines', `${'ab'.repeat(32)}\n\n`],
  ])('refuses a key file that is %s', (_, content) => {
    writeFileSync(join(dir, 'master.key'), content, { mode: 0o600 });
    expect(() => loadOrCreateMasterKey({ dataDir: dir })).toThrow(configInvalid);
  });

  it('refuses a symlinked key file', () => {
    const real = join(dir, 'elsewhere.key');
    writeFileSync(real, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    symlinkSync(real, join(dir, 'master.key'));
    expect(() => loadOrCreateMasterKey({ dataDir: dir })).toThrow(configInvalid);
  });
});

describe('loadOrCreateMasterKey from COUNTERSIGN_MASTER_KEY', () => {
  const key = Uint8Array.from(randomBytes(32));

  it('accepts 64 hex digits or base64 of 32 bytes and touches no file', () => {
    expect(bytesToHex(loadOrCreateMasterKey({ dataDir: dir, envValue: bytesToHex(key) }))).toBe(
      bytesToHex(key),
    );
    expect(bytesToHex(loadOrCreateMasterKey({ dataDir: dir, envValue: bytesToHex(key).toUpperCase() }))).toBe(
      bytesToHex(key),
    );
    const b64 = Buffer.from(key).toString('base64');
    expect(bytesToHex(loadOrCreateMasterKey({ dataDir: dir, envValue: `${b64}\n` }))).toBe(bytesToHex(key));
    expect(readdir(dir)).toEqual([]);
  });

  it.each([
    ['empty', ''],
    ['short hex', 'ab'.repeat(31)],
    ['long hex', 'ab'.repeat(33)],
    ['0x-prefixed hex', `0x${'ab'.repeat(32)}`],
    ['base64 of 31 bytes', Buffer.alloc(31, 7).toString('base64')],
    ['base64 of 33 bytes', Buffer.alloc(33, 7).toString('base64')],
    ['unpadded base64', Buffer.alloc(32, 7).toString('base64').replace(/=$/, '')],
    ['base64url', Buffer.alloc(32, 0xff).toString('base64url')],
    ['a passphrase', 'correct horse battery staple'],
  ])('rejects %s with CONFIG_INVALID naming the variable', (_, envValue) => {
    expect(() => loadOrCreateMasterKey({ dataDir: dir, envValue })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', field: 'COUNTERSIGN_MASTER_KEY' }),
    );
  });
});

function readdir(d: string): string[] {
  return readdirSync(d).sort();
}
