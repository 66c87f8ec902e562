/**
 * The Ethereum Foundation's consensus vectors for transactions (ethereum/tests TransactionTests,
 * extracted by test/vectors/ethereum/extractEthereumTests.ts): every signed transaction clients
 * accept parses, re-assembles to the same bytes, has the published hash and recovers the published
 * sender; every one they refuse is refused here, except for the rules named below, which belong to
 * the network a transaction is sent to rather than to its bytes and signature.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { keccak_256 } from '../../src/shared/keccak.js';
import { isCountersignError } from '../../src/shared/errors.js';
import { assembleSignedTransaction } from './assembleSignedTransaction.js';
import { parseSignedTransaction } from './parseSignedTransaction.js';
import { recoverAddress } from './recoverAddress.js';
import { signingDigest } from './signingDigest.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

interface Case {
  file: string;
  name: string;
  fork: string;
  txbytes: string;
  hash?: string;
  sender?: string;
  exception?: string;
}

const { cases } = JSON.parse(
  readFileSync(new URL('../../test/vectors/ethereum/ethereum-tests.json', import.meta.url), 'utf8'),
) as { cases: Case[] };

/**
 * Exceptions of the state transition or of a fork, not of the transaction's encoding: the
 * transaction parses and its signature recovers, and the network refuses it. A signer signs it.
 */
const NETWORK_RULES = new Map([
  // The intrinsic gas depends on the fork (EIP-2028 calldata, EIP-3860 initcode words).
  ['TransactionException.INTRINSIC_GAS_TOO_LOW', 'intrinsic gas'],
  // gas × fee cap past 2^256: the sender's balance check cannot be made.
  ['TransactionException.GASLIMIT_PRICE_PRODUCT_OVERFLOW', 'balance check'],
  // EIP-3860 bounds contract creation code on chains that took Shanghai.
  ['TransactionException.INITCODE_SIZE_EXCEEDED', 'creation code size'],
]);

const bytes = (h: string) => new Uint8Array(Buffer.from(h.slice(2), 'hex'));
const hex0x = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;

/** The signer of a signed transaction, or the reason it is refused (a CountersignError's code). */
function signerOf(raw: Uint8Array): { signer: string; chainId: bigint | undefined } | { refused: string } {
  try {
    const p = parseSignedTransaction(raw);
    const signer = recoverAddress(signingDigest(p.unsigned), p.r, p.s, p.yParity);
    if (signer === undefined) return { refused: 'no public key recovers (or s is high)' };
    return { signer, chainId: p.tx.chainId };
  } catch (e) {
    // Any other error is a crash of the parser, which the test reports as such.
    if (!isCountersignError(e)) throw e;
    return { refused: e.code };
  }
}

describe('ethereum/tests TransactionTests', () => {
  it('holds the suite (valid and invalid cases of every kind)', () => {
    expect(cases.length).toBeGreaterThanOrEqual(200);
    expect(cases.filter((c) => c.exception === undefined).length).toBeGreaterThanOrEqual(50);
  });

  const valid = cases.filter((c) => c.exception === undefined);
  it.each(valid.map((c) => [`${c.file} ${c.name}`, c] as const))('accepts %s', (_, c) => {
    const raw = bytes(c.txbytes);
    const p = parseSignedTransaction(raw);
    expect(hex0x(assembleSignedTransaction(p.tx, { r: p.r, s: p.s, yParity: p.yParity }))).toBe(c.txbytes);
    expect(hex0x(keccak_256(raw))).toBe(c.hash);
    // The daemon's own check: same body, low s, recovers to the published sender.
    const checked = verifySignedTransaction(raw, p.unsigned, c.sender as string);
    expect(checked.signer.toLowerCase()).toBe(c.sender?.toLowerCase());
  });

  const invalid = cases.filter((c) => c.exception !== undefined);
  it.each(invalid.map((c) => [`${c.file} ${c.name} (${c.exception})`, c] as const))(
    'answers %s as clients do',
    (_, c) => {
      const got = signerOf(bytes(c.txbytes));
      const exception = c.exception as string;
      if (NETWORK_RULES.has(exception)) {
        // Parsed and recovered: the rule is the network's (see NETWORK_RULES).
        expect(got).toHaveProperty('signer');
      } else if (exception === 'TransactionException.INVALID_CHAINID' && 'signer' in got) {
        // The cases are for chain 1: a v outside {27, 28, 37, 38} names another chain (EIP-155),
        // which this chain-agnostic parser reads; the transaction can never be replayed on chain 1.
        expect(got.chainId).not.toBe(1n);
      } else {
        expect(got).toHaveProperty('refused');
      }
    },
  );
});
