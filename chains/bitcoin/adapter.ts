import { equalBytes } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import type { ChainAdapter } from '../types.js';
import { applySignatures } from './applySignatures.js';
import { describeTransaction } from './describeTransaction.js';
import { parsePsbt } from './parsePsbt.js';
import { planSignatures } from './planSignatures.js';
import { serializePsbt } from './serializePsbt.js';
import { signerAddresses } from './signerAddresses.js';
import { signingPlan } from './signingPlan.js';
import { transactionFromFields } from './transactionFromFields.js';
import type { BitcoinNetwork, BitcoinTransactionFields, Psbt, SigningPlan } from './types.js';
import { parseOrFail, verifyParsedPsbt } from './verifySignedPsbt.js';

/**
 * Who signs a PSBT: the key (its inputs are those paying to its P2PKH/P2WPKH/P2TR scripts), the
 * network its addresses are spelled for, and, when the caller named the key by one of them, that address.
 */
export interface BitcoinAdapterSigner {
  /** 33-byte compressed secp256k1 key. */
  readonly publicKey: Uint8Array;
  readonly network: BitcoinNetwork;
  /** An address of the key to answer as the signer; else the address of the first signed input's type. */
  readonly address?: string;
}

/** Whether `address` is the key's P2PKH, P2WPKH or P2TR address on `network` (bech32 is case-blind). */
export function isAddressOf(address: string, publicKey: Uint8Array, network: BitcoinNetwork): boolean {
  const lc = address.toLowerCase();
  return Object.values(signerAddresses(publicKey, network)).some(
    (a) => a === address || a.toLowerCase() === lc,
  );
}

/** Plans already made, per parsed PSBT and key: digests, assemble and verify of one request share one. */
const PLANS = new WeakMap<Psbt, { readonly publicKey: Uint8Array; readonly plan: SigningPlan }>();

/** {@link signingPlan} of `tx` for `signer`, computed once per parsed PSBT and key. */
function planOf(tx: Psbt, signer: BitcoinAdapterSigner): SigningPlan {
  const known = PLANS.get(tx);
  if (known !== undefined && equalBytes(known.publicKey, signer.publicKey)) return known.plan;
  const plan = signingPlan(tx, signer);
  PLANS.set(tx, { publicKey: plan.publicKey, plan });
  return plan;
}

/**
 * The Bitcoin chain adapter (DESIGN.md, "The chain adapter contract"): one signature per input of
 * the signer's key, in input order (ECDSA for P2PKH/P2WPKH, BIP-340 Schnorr for P2TR key paths).
 */
export const bitcoinAdapter: ChainAdapter<Psbt, BitcoinTransactionFields, BitcoinAdapterSigner> = {
  serialize: (fields) => serializePsbt(transactionFromFields(fields)),
  parse: parsePsbt,
  describe: (tx, signer) => describeTransaction(tx, signer.network, signer.publicKey),
  digests: (tx, signer) => planOf(tx, signer).inputs.map((p) => ({ scheme: p.scheme, payload: p.digest })),
  assemble: (tx, signatures, signer) => serializePsbt(applySignatures(tx, planOf(tx, signer), signatures)),
  verify: (signed, unsigned, signer) => {
    const { publicKey, network, address } = signer;
    if (address !== undefined && !isAddressOf(address, publicKey, network)) {
      throw new CountersignError(
        'SIGNATURE_VERIFICATION_FAILED',
        `Bitcoin signature verification failed: ${address} is not an address of the signer's key on ${network}`,
      );
    }
    // Each PSBT parsed once and the plan made once; the signatures read from what was verified.
    const before = parseOrFail(unsigned, 'unsigned');
    const out = verifyParsedPsbt(parseOrFail(signed, 'signed'), before, publicKey, network);
    return {
      hash: out.hash,
      signer: address ?? out.signer,
      signatures: planSignatures(out.signed, out.plan, out.recoveryIds),
    };
  },
};
