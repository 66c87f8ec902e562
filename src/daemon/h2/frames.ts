/**
 * HTTP/2's frame vocabulary (RFC 9113 §4, §6): the types and flags, the client preface, and the
 * 9-byte frame header. The daemon's server (server.ts) frames with these, and so does the bench's
 * client (bench/h2client.ts).
 */

export const DATA = 0x0;
export const HEADERS = 0x1;
export const PRIORITY = 0x2;
export const RST_STREAM = 0x3;
export const SETTINGS = 0x4;
export const PUSH_PROMISE = 0x5;
export const PING = 0x6;
export const GOAWAY = 0x7;
export const WINDOW_UPDATE = 0x8;
export const CONTINUATION = 0x9;
export const FLAG_END_STREAM = 0x1;
export const FLAG_ACK = 0x1;
export const FLAG_END_HEADERS = 0x4;
export const FLAG_PADDED = 0x8;
export const FLAG_PRIORITY = 0x20;

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** The largest flow-control window (§6.9.1). */
export const MAX_WINDOW = 0x7fffffff;

/** Writes a frame header (length, type, flags, stream id) into `out` at `at`. */
export function frameHeader(
  out: Buffer,
  at: number,
  length: number,
  type: number,
  flags: number,
  id: number,
) {
  out[at] = length >>> 16;
  out[at + 1] = (length >>> 8) & 0xff;
  out[at + 2] = length & 0xff;
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(id, at + 5);
}

/** One whole frame: its header, then `payload`. */
export function frame(type: number, flags: number, id: number, payload?: Uint8Array): Buffer {
  const len = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(9 + len);
  frameHeader(out, 0, len, type, flags, id);
  if (payload !== undefined) out.set(payload, 9);
  return out;
}
