/**
 * One chain as sign_transaction sees it: the unsigned transaction parsed once into `Tx`, which
 * the policy facts describe and the signer signs (no second parse between the gate and the key).
 */
import type { SignatureScheme } from '../../../../chains/types.js';
import type { SignatureOut } from '../../keys/index.js';
import type { TransactionFacts } from '../../policy/index.js';
import type { SigningKeyRecord } from '../../store/types.js';

export interface TransactionKey {
  /** The key `signWith` resolved to (curve, address and format if it was named by address). */
  readonly record: SigningKeyRecord;
  /** Compressed SEC1 (secp256k1, P-256) or raw 32 bytes (ed25519). */
  readonly publicKey: Uint8Array;
  /**
   * Signs one payload; the key is opened for this call and wiped after it.
   * ECDSA_SECP256K1: 32-byte digest. SCHNORR_BIP340: 32-byte digest, signed with the BIP-86
   * (key-path, no script tree) tweak of the key, as a P2TR input needs. ED25519: the message.
   */
  sign(scheme: SignatureScheme, payload: Uint8Array): SignatureOut;
}

export interface TransactionRequest {
  readonly unsigned: Uint8Array;
  /** Field names for errors: `parameters.unsignedTransaction`, `parameters.signWith`. */
  readonly unsignedField: string;
  readonly signWithField: string;
}

/** A chain's sign_transaction in three steps over one parse. */
export interface TransactionChain<Tx> {
  /** Strict decode of `req.unsigned`; a refusal names `req.unsignedField`. */
  parse(req: TransactionRequest): Tx;
  /** What policies read about `tx` (turnkey-api.md 8.3); undefined when the key cannot describe it. */
  facts(tx: Tx, signer: SigningKeyRecord, req: TransactionRequest): TransactionFacts | undefined;
  /** Signs what belongs to the key and returns the signed transaction. */
  sign(tx: Tx, req: TransactionRequest, key: TransactionKey): Uint8Array;
}
