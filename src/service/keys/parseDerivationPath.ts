/** BIP-32 path strings. */
import { invalid } from '../../shared/errors.js';

/** Hardened indexes have this bit set (BIP-32 "i ≥ 2^31"). */
export const HARDENED_OFFSET = 0x80000000;
/** BIP-32 serializes depth in one byte. */
export const MAX_PATH_DEPTH = 255;

const SEGMENT_RE = /^(0|[1-9][0-9]*)(['hH]?)$/;

/**
 * Parses `m/44'/60'/0'/0/0` into child indexes, hardened ones with bit 31 set. `'`, `h` and `H` mark a
 * hardened segment. Leading zeros, spaces, empty segments and indexes ≥ 2^31 are rejected.
 */
export function parseDerivationPath(path: string, field: string): number[] {
  if (typeof path !== 'string')
    throw invalid(field, "must be a BIP-32 path string such as \"m/44'/60'/0'/0/0\"");
  const parts = path.split('/');
  if (parts[0] !== 'm') throw invalid(field, 'must start with "m"');
  if (parts.length - 1 > MAX_PATH_DEPTH) throw invalid(field, `must have at most ${MAX_PATH_DEPTH} segments`);
  const out: number[] = [];
  for (let i = 1; i < parts.length; i++) {
    const seg = parts[i] as string;
    const m = SEGMENT_RE.exec(seg);
    if (m === null)
      throw invalid(field, `segment ${i} ("${seg.slice(0, 16)}") is not an index such as 0 or 44'`);
    const index = Number(m[1]);
    if (!Number.isSafeInteger(index) || index >= HARDENED_OFFSET) {
      throw invalid(field, `segment ${i} must be below 2^31 (mark hardened indexes with ', h or H)`);
    }
    out.push(m[2] === '' ? index : index + HARDENED_OFFSET);
  }
  return out;
}

/** Whether a child index is hardened. */
export function isHardened(index: number): boolean {
  return index >= HARDENED_OFFSET;
}
