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

/** Result of local verification of a signed transaction. */
export interface VerifiedTransaction {
  /** The chain's id for the transaction (Ethereum: keccak of the signed bytes). */
  readonly hash: Uint8Array;
  /** The signer recovered/verified, in the chain's address format. */
  readonly signer: string;
}

export interface ChainAdapter<Tx, Fields> {
  /** Structured fields → unsigned transaction bytes. */
  serialize(fields: Fields): Uint8Array;
  /** Strict decode of unsigned bytes. */
  parse(bytes: Uint8Array): Tx;
  /** Facts for the policy engine. */
  describe(tx: Tx, from: string): Record<string, unknown>;
  /** What must be signed. */
  digests(tx: Tx, unsigned: Uint8Array): DigestToSign[];
  /** The signed transaction bytes. */
  assemble(tx: Tx, unsigned: Uint8Array, signatures: RawSignature[]): Uint8Array;
  /** The signed body equals `unsigned` and every signature belongs to `expectedSigner`. */
  verify(signed: Uint8Array, unsigned: Uint8Array, expectedSigner: string): VerifiedTransaction;
}
