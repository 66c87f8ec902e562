import { createBase58check } from '@scure/base';
import { sha256 } from '../../src/shared/sha256.js';

/** Base58check with a 4-byte double-SHA-256 checksum, as Tron (and Bitcoin) use it. */
export const base58check = createBase58check(sha256);
