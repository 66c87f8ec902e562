import { concatBytes } from '../../src/shared/encoding.js';
import { invalid } from '../../src/shared/errors.js';
import { encodeFields } from './protobuf.js';
import type { TronTransaction } from './types.js';

/** A secp256k1 signature over the txID: r and s big-endian (up to 32 bytes), yParity 0/1. */
export interface TronSignature {
  readonly r: Uint8Array;
  readonly s: Uint8Array;
  readonly yParity: number;
}

function fixed32(value: Uint8Array, field: string): Uint8Array {
  if (value.length > 32) throw invalid(field, `must be at most 32 bytes, got ${value.length}`);
  const out = new Uint8Array(32);
  out.set(value, 32 - value.length);
  return out;
}

/**
 * The signed `protocol.Transaction { raw_data = 1; signature = 2 }` that `/wallet/broadcasthex`
 * takes: the exact raw_data bytes and one 65-byte signature r ‖ s ‖ v with v = 27 + yParity, as
 * tronweb writes it.
 */
export function assembleSignedTransaction(tx: TronTransaction, sig: TronSignature): Uint8Array {
  if (sig.yParity !== 0 && sig.yParity !== 1) throw invalid('signature.v', 'y-parity must be 0 or 1');
  const signature = concatBytes(
    fixed32(sig.r, 'signature.r'),
    fixed32(sig.s, 'signature.s'),
    Uint8Array.of(27 + sig.yParity),
  );
  return encodeFields([
    { field: 1, wireType: 2, value: tx.rawData },
    { field: 2, wireType: 2, value: signature },
  ]);
}
