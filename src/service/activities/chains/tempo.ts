/**
 * sign_transaction for TRANSACTION_TYPE_TEMPO (what @turnkey/viem sends for any `76…` payload).
 * The unsigned 0x76 serialization is signed by its sender; a sponsored transaction comes back as
 * the sender-signed hand-off (0x00 fee payer marker, no fee token). Given that hand-off, a key
 * other than the sender signs as the fee payer and the broadcastable envelope comes back.
 */
import { keccak_256 } from '../../../shared/keccak.js';
import { addressFromPublicKey } from '../../../../chains/ethereum/index.js';
import {
  assemble,
  describeTransaction,
  feePayerDigest,
  parseTransactionToSign,
  type TempoSignature,
  type TempoTransactionToSign,
} from '../../../../chains/tempo/index.js';
import { CountersignError, invalid } from '../../../shared/errors.js';
import type { SignatureOut } from '../../keys/index.js';
import { ethereumAddressOf, inField } from '../../signing-facts.js';
import type { TransactionChain } from './types.js';

const toSignature = (sig: SignatureOut): TempoSignature => ({ r: sig.r, s: sig.s, yParity: sig.v });

export const tempoTransactions: TransactionChain<TempoTransactionToSign> = {
  parse: (req) => inField(req.unsignedField, () => parseTransactionToSign(req.unsigned)),
  facts: (input, rec, req) => {
    if (rec.curve !== 'CURVE_SECP256K1') return undefined;
    const from = input.kind === 'sender' ? ethereumAddressOf(rec, req.signWithField) : input.sender;
    return { chain: 'tempo', tx: describeTransaction(input.tx, from) };
  },
  sign: (input, req, key) => {
    if (key.record.curve !== 'CURVE_SECP256K1')
      throw new CountersignError(
        'CURVE_UNSUPPORTED',
        `${req.signWithField}: Tempo transactions are signed here with secp256k1 keys; this one is ${key.record.curve}`,
        { field: req.signWithField },
      );
    if (input.kind === 'sender') {
      // The input parsed strictly, so it is the sender preimage byte for byte (ox getSignPayload).
      const sig = key.sign('ECDSA_SECP256K1', keccak_256(input.unsigned));
      return assemble(input.tx, toSignature(sig));
    }
    const signer = addressFromPublicKey(key.publicKey);
    if (signer.toLowerCase() === input.sender.toLowerCase()) {
      throw invalid(
        req.signWithField,
        `${signer} is the sender of this sponsored transaction and has already signed it; the fee payer signs the hand-off`,
      );
    }
    // The 0x78 preimage names the sender, so this signature pays for this sender only.
    const sig = key.sign('ECDSA_SECP256K1', feePayerDigest(input.tx, input.sender));
    return assemble(input.tx, input.senderSignature, toSignature(sig));
  },
};
