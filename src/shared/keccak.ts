/**
 * Keccak-256 (Ethereum's hash: the original Keccak padding, not SHA3-256's) through the native
 * Keccak-f[1600] of the `keccak` package's prebuilt addon: ~3 µs for a transaction-sized input
 * against ~11 µs for @noble/hashes here, and no garbage per call. The addon is loaded directly
 * (node-gyp-build, which picks the prebuild for this platform), not through the package's entry,
 * which wraps each hash in a stream object and falls back to JavaScript silently; a missing addon
 * fails at start-up. `keccak_256.create()` (incremental hashing, off the hot path) stays on
 * @noble/hashes.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { isNativeFunction, loadNative } from './loadNative.js';

interface KeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Buffer): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Buffer;
}

const require = createRequire(import.meta.url);

const KeccakStateClass = loadNative('Keccak addon (keccak package prebuild)', () => {
  const nodeGypBuild = require('node-gyp-build') as (dir: string) => unknown;
  const addon = nodeGypBuild(dirname(require.resolve('keccak/package.json')));
  if (typeof addon !== 'function') throw new Error('the addon exports no KeccakState');
  return addon as new () => KeccakState;
});

/** Whether the state class is the addon's (native code), not JavaScript; checked in tests. */
export const NATIVE_KECCAK_LOADED: boolean = isNativeFunction(KeccakStateClass);

// Keccak-256: rate 1088 bits, capacity 512, domain bits 0x01. One state per thread, reset before
// each use (a hash runs to completion synchronously, so it is never shared by two callers).
const RATE = 1088;
const CAPACITY = 512;
const state = new KeccakStateClass();

/** Keccak-256 of `data` (32 bytes). */
export function keccak_256(data: Uint8Array): Uint8Array {
  state.initialize(RATE, CAPACITY);
  state.absorb(Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  state.absorbLastFewBits(0x01);
  const out = state.squeeze(32);
  return new Uint8Array(out.buffer, out.byteOffset, 32);
}
