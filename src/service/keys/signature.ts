/** The signature shape every signer returns: Turnkey's `{r, s, v}` before hex encoding. */
export type SignatureOut = {
  /** 32 bytes: ECDSA r, Ed25519 R, BIP-340 R.x. */
  r: Uint8Array;
  /** 32 bytes. */
  s: Uint8Array;
  /** ECDSA recovery id (y-parity of R, 0 or 1); 0 for Ed25519 and BIP-340. */
  v: number;
};
