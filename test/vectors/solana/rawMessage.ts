/**
 * An unchecked second encoder of Solana messages, so tests can write bytes the real serializer
 * refuses (out-of-range indexes, bad headers) and feed them to the parser.
 */
export interface RawMessage {
  versionByte?: number;
  header: [number, number, number];
  keys: Uint8Array[];
  blockhash: Uint8Array;
  instructions: { program: number; accounts: number[]; data: Uint8Array }[];
  lookups?: { key: Uint8Array; writable: number[]; readonly: number[] }[];
}

function shortVec(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const low = n & 0x7f;
    n >>= 7;
    if (n === 0) return [...out, low];
    out.push(low | 0x80);
  }
}

export function encodeRawMessage(m: RawMessage): Uint8Array {
  const out: number[] = [];
  if (m.versionByte !== undefined) out.push(m.versionByte);
  out.push(...m.header, ...shortVec(m.keys.length));
  for (const k of m.keys) out.push(...k);
  out.push(...m.blockhash, ...shortVec(m.instructions.length));
  for (const ix of m.instructions) {
    out.push(ix.program, ...shortVec(ix.accounts.length), ...ix.accounts, ...shortVec(ix.data.length), ...ix.data);
  }
  if (m.lookups !== undefined) {
    out.push(...shortVec(m.lookups.length));
    for (const l of m.lookups) {
      out.push(...l.key, ...shortVec(l.writable.length), ...l.writable, ...shortVec(l.readonly.length), ...l.readonly);
    }
  }
  return Uint8Array.from(out);
}

/** A wire transaction of `count` zeroed slots in front of `message`. */
export function rawWire(message: Uint8Array, count: number): Uint8Array {
  return Uint8Array.from([...shortVec(count), ...new Uint8Array(64 * count), ...message]);
}

export const key = (n: number): Uint8Array => new Uint8Array(32).fill(n);

/** A valid baseline: 2 signers (1 read-only), 1 read-only unsigned program, one instruction. */
export function baseline(): RawMessage {
  return {
    header: [2, 1, 1],
    keys: [key(1), key(2), key(3), key(4)],
    blockhash: key(9),
    instructions: [{ program: 3, accounts: [0, 1, 2], data: Uint8Array.of(1, 2, 3) }],
  };
}
