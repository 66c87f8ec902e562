import { bytesToHex } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import type { ChainAdapter } from '../types.js';
import { applySignatures } from './applySignatures.js';
import { describeTransaction } from './describeTransaction.js';
import { parsePsbt } from './parsePsbt.js';
import { serializePsbt } from './serializePsbt.js';
import { signerAddresses } from './signerAddresses.js';
import { signingPlan, type BitcoinSigner } from './signingPlan.js';
import { transactionFromFields } from './transactionFromFields.js';
import type { BitcoinNetwork, BitcoinTransactionFields, Psbt } from './types.js';
import { verifySignedPsbt } from './verifySignedPsbt.js';

/**
 * The Bitcoin chain adapter (DESIGN.md, "The chain adapter contract") for one signer on one network.
 * It is a factory because the generic contract has no signer where Bitcoin needs one: `digests` and
 * `assemble` must know which inputs are the signer's (P2PKH/P2WPKH/P2TR of its key) and the partial_sig
 * key; `describe` needs the network for addresses; `verify` needs the public key, since an address alone
 * does not give the ECDSA key (so `expectedSigner` must be one of this key's addresses or its hex).
 */
export function bitcoinAdapter(options: {
  signer: BitcoinSigner;
  network: BitcoinNetwork;
}): ChainAdapter<Psbt, BitcoinTransactionFields> {
  const { signer, network } = options;
  return {
    serialize: (fields) => serializePsbt(transactionFromFields(fields)),
    parse: parsePsbt,
    describe: (tx) => describeTransaction(tx, network),
    digests: (tx) => signingPlan(tx, signer).inputs.map((p) => ({ scheme: p.scheme, payload: p.digest })),
    assemble: (tx, _unsigned, signatures) =>
      serializePsbt(applySignatures(tx, signingPlan(tx, signer), signatures)),
    verify: (signed, unsigned, expectedSigner) => {
      const addresses = Object.values(signerAddresses(signer.publicKey, network));
      const isKeyHex = expectedSigner.toLowerCase() === bytesToHex(signer.publicKey);
      if (!isKeyHex && !addresses.includes(expectedSigner)) {
        throw new CountersignError(
          'SIGNATURE_VERIFICATION_FAILED',
          `Bitcoin signature verification failed: ${expectedSigner} is not an address of the signer's key on ${network}`,
        );
      }
      const out = verifySignedPsbt(signed, unsigned, signer.publicKey, network);
      return isKeyHex ? out : { hash: out.hash, signer: expectedSigner };
    },
  };
}
