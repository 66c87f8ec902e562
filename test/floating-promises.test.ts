import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The store's transactions are async: a write inside one that nobody awaits would let the
// transaction commit (or the activity answer) without it. The type checker does not catch a
// promise dropped on the floor, so this does (in a child process: building the program takes
// long enough to starve the test worker's event loop).
describe('production sources', () => {
  it('await, return or handle every promise they make', async () => {
    const run = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/floating-promises.ts', 'tsconfig.json'],
      { maxBuffer: 1 << 20 },
    ).catch((e: { stdout?: string; code?: number }) => ({ stdout: e.stdout ?? '', code: e.code }));
    expect(run.stdout.trim().split('\n').filter(Boolean)).toEqual([]);
  }, 240_000);
});
