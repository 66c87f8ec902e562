/** Strict DER for ECDSA signatures (BIP-66) to and from the 64-byte compact r‖s form. */

function trimInt(x: Uint8Array): Uint8Array {
  let i = 0;
  while (i < x.length - 1 && x[i] === 0 && ((x[i + 1] as number) & 0x80) === 0) i++;
  const t = x.subarray(i);
  if (((t[0] as number) & 0x80) !== 0) {
    const out = new Uint8Array(t.length + 1);
    out.set(t, 1);
    return out;
  }
  return t;
}

/** DER-encodes a compact r‖s (each 32 bytes, big-endian). */
export function encodeDer(compact: Uint8Array): Uint8Array {
  const r = trimInt(compact.subarray(0, 32));
  const s = trimInt(compact.subarray(32, 64));
  const out = new Uint8Array(6 + r.length + s.length);
  out.set([0x30, 4 + r.length + s.length, 0x02, r.length], 0);
  out.set(r, 4);
  out.set([0x02, s.length], 4 + r.length);
  out.set(s, 6 + r.length);
  return out;
}

/**
 * Decodes a BIP-66 strict DER signature (no sighash byte) into compact r‖s, or undefined when the
 * encoding is not strict: this is Bitcoin Core's IsValidSignatureEncoding without the trailing type byte.
 */
export function decodeDer(sig: Uint8Array): Uint8Array | undefined {
  const n = sig.length;
  if (n < 8 || n > 72) return undefined;
  if (sig[0] !== 0x30 || sig[1] !== n - 2 || sig[2] !== 0x02) return undefined;
  const lenR = sig[3] as number;
  if (lenR === 0 || 5 + lenR >= n) return undefined;
  const lenS = sig[5 + lenR] as number;
  if (sig[4 + lenR] !== 0x02 || lenR + lenS + 6 !== n || lenS === 0) return undefined;
  const r = sig.subarray(4, 4 + lenR);
  const s = sig.subarray(6 + lenR, n);
  for (const x of [r, s]) {
    if (((x[0] as number) & 0x80) !== 0) return undefined; // negative
    if (x.length > 1 && x[0] === 0 && ((x[1] as number) & 0x80) === 0) return undefined; // padded
  }
  const strip = (x: Uint8Array): Uint8Array | undefined => {
    const t = x[0] === 0 ? x.subarray(1) : x;
    return t.length > 32 ? undefined : t;
  };
  const rr = strip(r);
  const ss = strip(s);
  if (rr === undefined || ss === undefined) return undefined;
  const out = new Uint8Array(64);
  out.set(rr, 32 - rr.length);
  out.set(ss, 64 - ss.length);
  return out;
}
