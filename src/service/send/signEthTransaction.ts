/**
 * Signs a transaction the service will broadcast and checks the result before it is stored: the signed
 * bytes must re-serialize to what was signed and recover to the expected sender (native libsecp256k1),
 * so a wrong key or a codec slip never reaches a node.
 */
import {
  assembleSignedTransaction,
  serializeUnsignedTransaction,
  signingDigest,
  verifySignedTransaction,
} from '../../../chains/ethereum/index.js';
import type { EthTransaction } from '../../../chains/ethereum/types.js';
import { signEcdsaSecp256k1 } from '../keys/index.js';

/** The signed transaction of `tx` under `privateKey`, verified to come from `expectedFrom`. */
export function signEthTransaction(input: {
  readonly privateKey: Uint8Array;
  readonly tx: EthTransaction;
  readonly expectedFrom: string;
}): Uint8Array {
  const unsigned = serializeUnsignedTransaction(input.tx);
  const sig = signEcdsaSecp256k1(input.privateKey, signingDigest(unsigned));
  const signed = assembleSignedTransaction(input.tx, { r: sig.r, s: sig.s, yParity: sig.v });
  verifySignedTransaction(signed, unsigned, input.expectedFrom);
  return signed;
}
