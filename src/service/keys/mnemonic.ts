/** BIP-39 mnemonics with the English wordlist (the only one Turnkey wallets use). */
import {
  generateMnemonic as bip39Generate,
  mnemonicToSeedSync,
  validateMnemonic as bip39Validate,
} from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { CountersignError } from '../../shared/errors.js';

export const MNEMONIC_LENGTHS = [12, 15, 18, 21, 24] as const;
export type MnemonicLength = (typeof MNEMONIC_LENGTHS)[number];

/** A fresh BIP-39 English mnemonic of `words` words (entropy = words × 32 / 3 bits). */
export function generateMnemonic(words: MnemonicLength): string {
  if (!(MNEMONIC_LENGTHS as readonly number[]).includes(words)) {
    throw new CountersignError('FIELD_INVALID', 'mnemonic length must be 12, 15, 18, 21 or 24 words');
  }
  // BIP-39: ENT = MS × 32 / 3, so 12 words carry 128 bits and 24 words 256.
  return bip39Generate(wordlist, (words * 32) / 3);
}

/** Whether `mnemonic` is a BIP-39 English mnemonic with a correct checksum. */
export function validateMnemonic(mnemonic: string): boolean {
  if (typeof mnemonic !== 'string') return false;
  return bip39Validate(mnemonic, wordlist);
}

/**
 * The 64-byte BIP-39 seed: PBKDF2-HMAC-SHA512, 2048 rounds, salt "mnemonic" ‖ passphrase, both
 * NFKD-normalized. Does not check the checksum (BIP-39 defines the seed for any sentence); validate first.
 */
export function mnemonicToSeed(mnemonic: string, passphrase = ''): Uint8Array {
  return mnemonicToSeedSync(mnemonic, passphrase);
}
