/** The adapter contract every chain folder implements (see DESIGN.md, "The chain adapter contract"). */

/** How a digest is to be signed. */
export type SignatureScheme = 'ECDSA_SECP256K1' | 'SCHNORR_BIP340' | 'ED25519' | 'ECDSA_P256';

/** One thing to sign: the digest (or, for ed25519, the message) and how. */
export interface DigestToSign {
  readonly scheme: SignatureScheme;
  /** 32-byte digest for ECDSA/Schnorr; the whole message for ed25519. */
  readonly payload: Uint8Array;
}

/** A signature as the public API returns it, decoded. */
export interface RawSignature {
  readonly r: Uint8Array; // 32 bytes
  readonly s: Uint8Array; // 32 bytes
  readonly v: number; // y-parity for ECDSA, 0 otherwise
}

/** Result of local verification of a signed transaction: what was checked, so nobody parses it again. */
export interface VerifiedTransaction {
  /** The chain's id for the transaction (Ethereum: keccak of the signed bytes). */
  readonly hash: Uint8Array;
  /** The signer recovered/verified, in the chain's address format. */
  readonly signer: string;
  /** The signatures verified, in the order `digests` listed what they sign (r and s 32 bytes each). */
  readonly signatures: readonly RawSignature[];
}

/**
 * One chain. `Signer` is whatever the chain needs to know about who signs (an address for the
 * account chains; the public key and network for Bitcoin; sender and fee payer for Tempo), so
 * that every step that depends on the signer receives it rather than guessing.
 */
export interface ChainAdapter<Tx, Fields, Signer> {
  /** Structured fields → unsigned transaction bytes. */
  serialize(fields: Fields): Uint8Array;
  /** Strict decode of unsigned bytes. */
  parse(bytes: Uint8Array): Tx;
  /** Facts for the policy engine. */
  describe(tx: Tx, signer: Signer): Record<string, unknown>;
  /** What `signer` must sign, in order; refuses (naming the field) a signer that has nothing to sign. */
  digests(tx: Tx, signer: Signer): DigestToSign[];
  /** The signed transaction bytes from one signature per digest, in `digests` order. */
  assemble(tx: Tx, signatures: readonly RawSignature[], signer: Signer): Uint8Array;
  /** The signed body equals `unsigned` and every signature belongs to `signer`. */
  verify(signed: Uint8Array, unsigned: Uint8Array, signer: Signer): VerifiedTransaction;
}
