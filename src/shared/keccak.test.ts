import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { keccak_256 as nobleKeccak } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { keccak_256, NATIVE_KECCAK_LOADED } from './keccak.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('native keccak_256', () => {
  it('loaded the prebuilt addon, not a JavaScript fallback', () => {
    expect(NATIVE_KECCAK_LOADED).toBe(true);
  });

  it('answers the Keccak-256 vectors (empty input, "abc")', () => {
    expect(hex(keccak_256(new Uint8Array(0)))).toBe(
      'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
    );
    expect(hex(keccak_256(new TextEncoder().encode('abc')))).toBe(
      '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45',
    );
  });

  it('agrees with @noble/hashes for every length across three rate blocks, views and Buffers', () => {
    const backing = new Uint8Array(600);
    for (let i = 0; i < backing.length; i++) backing[i] = (i * 131 + 7) & 0xff;
    for (let len = 0; len <= 3 * 136 + 1; len++) {
      // A view at an odd offset into a larger buffer: the addon must hash exactly these bytes.
      const view = backing.subarray(3, 3 + len);
      expect(hex(keccak_256(view)), `length ${len}`).toBe(hex(nobleKeccak(view)));
      expect(hex(keccak_256(Buffer.from(view)))).toBe(hex(nobleKeccak(view)));
    }
  });

  it('returns a fresh array each call (the state is reused, the digest is not)', () => {
    const a = keccak_256(new Uint8Array([1]));
    const before = hex(a);
    keccak_256(new Uint8Array([2]));
    expect(hex(a)).toBe(before);
    expect(a).toBeInstanceOf(Uint8Array);
    expect(a.length).toBe(32);
  });

  it('loads and hashes on a worker thread (the service runs on one)', async () => {
    const url = new URL('./keccak.ts', import.meta.url).href;
    // tsx's ESM API, registered inside the worker (as the service worker's bootstrap does).
    const tsxPkg = createRequire(import.meta.url).resolve('tsx/package.json');
    const tsxApi = pathToFileURL(join(dirname(tsxPkg), 'dist/esm/api/index.mjs')).href;
    const worker = new Worker(
      `import(${JSON.stringify(tsxApi)}).then((t) => { t.register(); return import(${JSON.stringify(url)}); })` +
        `.then((m) => require('node:worker_threads').parentPort.postMessage(` +
        `Buffer.from(m.keccak_256(new TextEncoder().encode('abc'))).toString('hex')))`,
      { eval: true },
    );
    const answer = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    expect(answer).toBe('4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
  });
});
