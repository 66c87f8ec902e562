import { randomFillSync } from 'node:crypto';

// Random bytes are drawn from the CSPRNG in blocks and handed out 10 at a time: one id per
// activity, vote and evaluation made randomBytes(16) and a BigInt shift per byte measurable
// (~2% of the service thread under load). Each byte is used once.
const BLOCK = 10 * 256;
const pool = Buffer.allocUnsafe(BLOCK);
let offset = BLOCK;

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** RFC 9562 UUIDv7: a millisecond timestamp then randomness, so ids sort by creation time. */
export function uuidv7(nowMs: number = Date.now()): string {
  if (offset === BLOCK) {
    randomFillSync(pool);
    offset = 0;
  }
  const r = offset;
  offset += 10;
  // 48-bit big-endian milliseconds: the high 16 bits and the low 32, without BigInt.
  const hi = Math.floor(nowMs / 0x100000000);
  const lo = nowMs >>> 0;
  const h = (b: number): string => HEX[b & 0xff] as string;
  const rb = (i: number): number => pool[r + i] as number;
  return (
    h(hi >>> 8) +
    h(hi) +
    h(lo >>> 24) +
    h(lo >>> 16) +
    '-' +
    h(lo >>> 8) +
    h(lo) +
    '-' +
    h(0x70 | (rb(0) & 0x0f)) +
    h(rb(1)) +
    '-' +
    h(0x80 | (rb(2) & 0x3f)) +
    h(rb(3)) +
    '-' +
    h(rb(4)) +
    h(rb(5)) +
    h(rb(6)) +
    h(rb(7)) +
    h(rb(8)) +
    h(rb(9))
  );
}
