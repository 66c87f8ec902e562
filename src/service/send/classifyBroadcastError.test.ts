import { describe, expect, it } from 'vitest';
import { classifyBroadcastError } from './classifyBroadcastError.js';

describe('classifyBroadcastError', () => {
  it.each([
    ['nonce too low: next nonce 5, tx nonce 3', 'NONCE_TOO_LOW'],
    ['already known', 'ALREADY_KNOWN'],
    ['Transaction already imported', 'ALREADY_KNOWN'],
    ['replacement transaction underpriced', 'REPLACEMENT_UNDERPRICED'],
    ['insufficient funds for gas * price + value: have 0 want 21000', 'INSUFFICIENT_FUNDS'],
    ['intrinsic gas too low: have 20000, want 21000', 'REJECTED'],
    ['exceeds block gas limit', 'REJECTED'],
    ['tx fee (1.50 ether) exceeds the configured cap (1.00 ether)', 'REJECTED'],
    ['max fee per gas less than block base fee', 'RETRY'],
    ['fetch failed', 'RETRY'],
  ] as const)('classifies "%s" as %s', (message, kind) => {
    expect(classifyBroadcastError(message)).toBe(kind);
  });
});
