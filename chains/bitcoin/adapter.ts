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
import type { BitcoinNetwork, BitcoinTransactionFields, Psbt } from './types.js';
import { verifySignedPsbt } from './verifySignedPsbt.js';

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

/**
 * The Bitcoin chain adapter (DESIGN.md, "The chain adapter contract"): one signature per input of
 * the signer's key, in input order (ECDSA for P2PKH/P2WPKH, BIP-340 Schnorr for P2TR key paths).
 */
export const bitcoinAdapter: ChainAdapter<Psbt, BitcoinTransactionFields, BitcoinAdapterSigner> = {
  serialize: (fields) => serializePsbt(transactionFromFields(fields)),
  parse: parsePsbt,
  describe: (tx, signer) => describeTransaction(tx, signer.network),
  digests: (tx, signer) =>
    signingPlan(tx, signer).inputs.map((p) => ({ scheme: p.scheme, payload: p.digest })),
  assemble: (tx, signatures, signer) =>
    serializePsbt(applySignatures(tx, signingPlan(tx, signer), signatures)),
  verify: (signed, unsigned, signer) => {
    const { publicKey, network, address } = signer;
    if (address !== undefined && !isAddressOf(address, publicKey, network)) {
      throw new CountersignError(
        'SIGNATURE_VERIFICATION_FAILED',
        `Bitcoin signature verification failed: ${address} is not an address of the signer's key on ${network}`,
      );
    }
    const out = verifySignedPsbt(signed, unsigned, publicKey, network);
    const signatures = planSignatures(parsePsbt(signed), signingPlan(parsePsbt(unsigned), signer));
    return { hash: out.hash, signer: address ?? out.signer, signatures };
  },
};
