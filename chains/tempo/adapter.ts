import { CountersignError } from '../../src/shared/errors.js';
import type { ChainAdapter, RawSignature } from '../types.js';
import { assemble } from './assemble.js';
import { describeTransaction } from './describeTransaction.js';
import { feePayerDigest } from './feePayerDigest.js';
import { parseSignedTransaction } from './parseSignedTransaction.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { senderDigest } from './senderDigest.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import { transactionFromFields } from './transactionFromFields.js';
import type { TempoSignature, TempoTransaction, TempoTransactionFields } from './types.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

/** Who signs a Tempo transaction: the sender and, for a sponsored one signed here too, the fee payer. */
export interface TempoSigner {
  /** 0x address of the sender. */
  readonly sender: string;
  /** 0x address of the fee payer, when its signature is to be made and checked as well. */
  readonly feePayer?: string;
}

/**
 * The Tempo chain adapter (DESIGN.md, "The chain adapter contract"): one secp256k1 sender
 * signature over keccak256(unsigned) and, with a fee payer, its signature over the 0x78 digest,
 * which commits to the sender (so the signer is passed to `digests`).
 */
export const tempoAdapter: ChainAdapter<TempoTransaction, TempoTransactionFields, TempoSigner> = {
  serialize: (fields) => serializeUnsignedTransaction(transactionFromFields(fields)),
  parse: parseUnsignedTransaction,
  describe: (tx, signer) => describeTransaction(tx, signer.sender),
  digests: (tx, signer) => [
    { scheme: 'ECDSA_SECP256K1', payload: senderDigest(tx) },
    ...(signer.feePayer === undefined
      ? []
      : [{ scheme: 'ECDSA_SECP256K1' as const, payload: feePayerDigest(tx, signer.sender) }]),
  ],
  assemble: (tx, signatures, signer) => {
    const [sender, feePayer, ...rest] = signatures;
    if (
      sender === undefined ||
      rest.length > 0 ||
      (feePayer === undefined) !== (signer.feePayer === undefined)
    ) {
      throw new CountersignError(
        'INTERNAL',
        `a Tempo transaction takes one signature (two with a fee payer), got ${signatures.length}`,
      );
    }
    const toSig = (s: RawSignature): TempoSignature => ({ r: s.r, s: s.s, yParity: s.v });
    return feePayer === undefined
      ? assemble(tx, toSig(sender))
      : assemble(tx, toSig(sender), toSig(feePayer));
  },
  verify: (signed, unsigned, signer) => {
    const v = verifySignedTransaction(
      signed,
      unsigned,
      signer.sender,
      signer.feePayer === undefined ? {} : { expectedFeePayer: signer.feePayer },
    );
    const p = parseSignedTransaction(signed);
    const signatures = [asRaw(p.senderSignature)];
    if (signer.feePayer !== undefined && p.feePayerSignature !== undefined)
      signatures.push(asRaw(p.feePayerSignature));
    return { hash: v.hash, signer: v.signer, signatures };
  },
};

/** r and s as 32-byte words (RLP drops their leading zeros). */
function asRaw(sig: TempoSignature): RawSignature {
  return { r: word(sig.r), s: word(sig.s), v: sig.yParity };
}

function word(b: Uint8Array): Uint8Array {
  if (b.length > 32) throw new Error('signature component longer than 32 bytes');
  const out = new Uint8Array(32);
  out.set(b, 32 - b.length);
  return out;
}
