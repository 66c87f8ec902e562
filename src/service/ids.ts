import { randomFillSync } from 'node:crypto';

// Random bytes are drawn from the CSPRNG in blocks and handed out 10 at a time, already in hex:
// an activity makes three ids (its own, its vote's and its policy evaluation's), and building each
// from sixteen two-character pieces was ~1.5% of the service thread under load. Each byte is used
// once.
const BLOCK = 10 * 256;
const pool = Buffer.allocUnsafe(BLOCK);
let poolHex = '';
let offset = BLOCK;

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** The variant's first hex digit: binary 10 then two random bits (RFC 9562 section 4.1). */
const VARIANT = ['8', '9', 'a', 'b'] as const;

// The timestamp's part of the last id: the ids of one activity share their millisecond.
let prefixMs = -1;
let prefix = '';

/** RFC 9562 UUIDv7: a millisecond timestamp then randomness, so ids sort by creation time. */
export function uuidv7(nowMs: number = Date.now()): string {
  if (offset === BLOCK) {
    randomFillSync(pool);
    poolHex = pool.toString('hex');
    offset = 0;
  }
  const r = offset;
  offset += 10;
  if (nowMs !== prefixMs) {
    // 48-bit big-endian milliseconds: the high 16 bits and the low 32, without BigInt.
    const hi = Math.floor(nowMs / 0x100000000);
    const lo = nowMs >>> 0;
    const h = (b: number): string => HEX[b & 0xff] as string;
    prefix = h(hi >>> 8) + h(hi) + h(lo >>> 24) + h(lo >>> 16) + '-' + h(lo >>> 8) + h(lo) + '-';
    prefixMs = nowMs;
  }
  // Hex digit x + k is the high (k even) or low (k odd) half of byte r + k/2. The version takes
  // byte r's high half; the variant's two fixed bits take byte r + 2's top two.
  const x = 2 * r;
  return (
    prefix +
    '7' +
    poolHex.slice(x + 1, x + 4) +
    '-' +
    VARIANT[((pool[r + 2] as number) >>> 4) & 3] +
    poolHex.slice(x + 5, x + 8) +
    '-' +
    poolHex.slice(x + 8, x + 20)
  );
}
