/**
 * The address of a standard TON wallet contract (v3r2, v4r2) for an ed25519 public key.
 *
 * A TON contract's address is the representation hash of its StateInit cell (the cell hashing of
 * the TVM whitepaper), so the address of an undeployed wallet follows from its code and initial
 * data alone. Only the hash and depth of the code cell enter that hash; they are the well-known
 * hashes of the two standard wallet codes, checked in test/address-formats.test.ts against the
 * addresses @ton/ton builds from the full code cells.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { base64urlnopad } from '@scure/base';
import { concatBytes, hexToBytes } from '../../shared/encoding.js';
import { crc16Xmodem } from './crc16Xmodem.js';

export type TonWalletVersion = 'V3R2' | 'V4R2';

/** The default subwallet id of every standard wallet on workchain 0 (698983191 + workchain). */
export const TON_DEFAULT_SUBWALLET_ID = 698983191;

/** A cell summarised by what a parent's hash needs of it: its representation hash and depth. */
interface CellRef {
  readonly hash: Uint8Array;
  readonly depth: number;
}

const CODE: Record<TonWalletVersion, CellRef> = {
  // wallet-v3-r2 code: one cell.
  V3R2: {
    hash: hexToBytes('84dafa449f98a6987789ba232358072bc0f76dc4524002a5d0918b9a75d2d599', 'V3R2'),
    depth: 0,
  },
  // wallet-v4-r2 code: a tree of cells seven levels deep.
  V4R2: {
    hash: hexToBytes('feb5ff6820e2ff0d9483e7e0d62c817d846789fb4ae580c878866d959dabd5c0', 'V4R2'),
    depth: 7,
  },
};

/**
 * Representation hash of an ordinary (level 0) cell holding `bitLength` bits of `bits` and `refs`:
 * sha256(d1 ‖ d2 ‖ data padded with a 1 bit then zeros ‖ refs' depths (u16 BE) ‖ refs' hashes).
 */
function ordinaryCell(bits: Uint8Array, bitLength: number, refs: readonly CellRef[]): CellRef {
  const fullBytes = Math.ceil(bitLength / 8);
  const data = bits.slice(0, fullBytes);
  if (bitLength % 8 !== 0) {
    const used = bitLength % 8;
    const last = fullBytes - 1;
    const keep = (0xff << (8 - used)) & 0xff;
    data[last] = ((data[last] as number) & keep) | (0x80 >> used);
  }
  const d1 = refs.length;
  const d2 = Math.floor(bitLength / 8) + fullBytes;
  const depths = new Uint8Array(refs.length * 2);
  refs.forEach((r, i) => {
    depths[2 * i] = r.depth >> 8;
    depths[2 * i + 1] = r.depth & 0xff;
  });
  return {
    hash: sha256(concatBytes(Uint8Array.of(d1, d2), data, depths, ...refs.map((r) => r.hash))),
    depth: refs.length === 0 ? 0 : 1 + Math.max(...refs.map((r) => r.depth)),
  };
}

/** Initial data: seqno u32 = 0 ‖ subwallet id u32 ‖ public key (v4r2 adds an empty plugin dict bit). */
function dataCell(version: TonWalletVersion, publicKey: Uint8Array): CellRef {
  const bits = new Uint8Array(41);
  new DataView(bits.buffer).setUint32(4, TON_DEFAULT_SUBWALLET_ID);
  bits.set(publicKey, 8);
  // The v4r2 plugin dictionary is `Maybe ^Cell`: one 0 bit for empty, already zero in bits[40].
  return ordinaryCell(bits, version === 'V4R2' ? 321 : 320, []);
}

/**
 * The wallet's address on workchain 0 in the user-friendly form: base64url of tag 0x11 (bounceable,
 * not test-only) ‖ workchain ‖ account id ‖ CRC-16/XMODEM (TEP-2). Turnkey's documentation does not
 * show which of the forms it returns; this is the form @ton/ton's `Address.toString()` prints by
 * default for `WalletContractV3R2/V4.create({ workchain: 0, publicKey })`.
 */
export function tonWalletAddress(version: TonWalletVersion, publicKey: Uint8Array): string {
  // StateInit: split_depth absent (0), special absent (0), code present (1), data present (1),
  // library absent (0) — five bits 00110 — and the code and data cells as references.
  const stateInit = ordinaryCell(Uint8Array.of(0b00110000), 5, [CODE[version], dataCell(version, publicKey)]);
  const body = concatBytes(Uint8Array.of(0x11, 0x00), stateInit.hash);
  const crc = crc16Xmodem(body);
  return base64urlnopad.encode(concatBytes(body, Uint8Array.of(crc >> 8, crc & 0xff)));
}
