import { CountersignError } from '../../src/shared/errors.js';
import { sha256 } from '../../src/shared/sha256.js';
import { ByteWriter } from './bytes.js';
import { SIGHASH_ALL, type BitcoinTransaction } from './types.js';

/** The three hashes BIP-143 shares between all inputs of one transaction (for SIGHASH_ALL). */
interface Bip143Shared {
  readonly hashPrevouts: Uint8Array;
  readonly hashSequence: Uint8Array;
  readonly hashOutputs: Uint8Array;
}

/**
 * Per parsed transaction: the plan, the signer and the verifier each ask for every input of the
 * same one, and the shared hashes do not depend on the input (the model is immutable).
 */
const SHARED = new WeakMap<BitcoinTransaction, Bip143Shared>();

const hash256 = (b: Uint8Array): Uint8Array => sha256(sha256(b));

function shared(tx: BitcoinTransaction): Bip143Shared {
  let s = SHARED.get(tx);
  if (s === undefined) {
    const prevouts = new ByteWriter();
    const sequences = new ByteWriter();
    for (const i of tx.inputs) {
      prevouts.bytes(i.prevTxid).u32(i.vout);
      sequences.u32(i.sequence);
    }
    const outputs = new ByteWriter();
    for (const o of tx.outputs) outputs.u64(o.value).varBytes(o.script);
    s = {
      hashPrevouts: hash256(prevouts.finish()),
      hashSequence: hash256(sequences.finish()),
      hashOutputs: hash256(outputs.finish()),
    };
    SHARED.set(tx, s);
  }
  return s;
}

/**
 * BIP-143 signature hash for SIGHASH_ALL, computed here from the parsed transaction: the double
 * SHA-256 of version, hashPrevouts, hashSequence, the input's outpoint, `scriptCode` (length-
 * prefixed here), `amount`, the input's sequence, hashOutputs, locktime and the type. `scriptCode`
 * for P2WPKH is the P2PKH script of the key hash; `amount` is the spent output's value, which
 * BIP-143 commits to so a lying PSBT cannot inflate the fee. (Tests cross-check bitcoinjs-lib's
 * `hashForWitnessV0`.)
 */
export function segwitV0Sighash(
  tx: BitcoinTransaction,
  index: number,
  scriptCode: Uint8Array,
  amount: bigint,
  hashType: number,
): Uint8Array {
  if (hashType !== SIGHASH_ALL) {
    throw new CountersignError(
      'INTERNAL',
      `BIP-143 sighash type ${hashType} is refused: only SIGHASH_ALL is signed`,
    );
  }
  const input = tx.inputs[index];
  if (input === undefined) throw new CountersignError('INTERNAL', `no input ${index}`);
  const { hashPrevouts, hashSequence, hashOutputs } = shared(tx);
  const preimage = new ByteWriter()
    .i32(tx.version)
    .bytes(hashPrevouts)
    .bytes(hashSequence)
    .bytes(input.prevTxid)
    .u32(input.vout)
    .varBytes(scriptCode)
    .u64(amount)
    .u32(input.sequence)
    .bytes(hashOutputs)
    .u32(tx.locktime)
    .u32(hashType)
    .finish();
  return hash256(preimage);
}
