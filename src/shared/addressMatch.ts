/**
 * Whether an address as a request spells it names a stored address. Addresses are looked up by
 * their lower case (one index serves every format), so the row found is checked here: hex
 * spellings (Ethereum and its relatives, SEC1 public keys) compare without case, bech32 and
 * bech32m too when written in one case throughout (BIP-173; a mixed-case one is not an address),
 * and every other encoding exactly: in base58 (Solana, Tron, Bitcoin's legacy addresses) another
 * case is another key.
 */
/** 0x-prefixed hex, or bare hex from a leading 0 (SEC1 keys): base58 has no 0, so never this. */
const HEX = /^0(x[0-9a-f]+|[0-9a-f]+)$/i;
const BECH32 = /^[a-z0-9]{1,83}1[02-9ac-hj-np-z]{6,}$/;

export function sameAddress(requested: string, stored: string): boolean {
  if (requested === stored) return true;
  if (requested.toLowerCase() !== stored.toLowerCase()) return false;
  if (HEX.test(stored)) return true;
  return BECH32.test(stored) && requested === requested.toUpperCase();
}

/**
 * One spelling for every spelling `sameAddress` takes as the same address: hex and one-case bech32
 * in lower case, anything else (base58, mixed-case bech32, ids) as given. Two values name the same
 * address exactly when their canonical forms are equal, so a set of them can be looked up by it.
 */
export function canonicalAddress(value: string): string {
  if (HEX.test(value)) return value.toLowerCase();
  const lower = value.toLowerCase();
  if (BECH32.test(lower) && (value === lower || value === value.toUpperCase())) return lower;
  return value;
}
