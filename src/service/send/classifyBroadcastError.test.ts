import { describe, expect, it } from 'vitest';
import { classifyBroadcastError } from './classifyBroadcastError.js';

describe('classifyBroadcastError', () => {
  it.each([
    ['nonce too low: next nonce 5, tx nonce 3', 'NONCE_TOO_LOW'],
    ['already known', 'ALREADY_KNOWN'],
    ['Transaction already imported', 'ALREADY_KNOWN'],
    ['replacement transaction underpriced', 'REPLACEMENT_UNDERPRICED'],
    ['insufficient funds for gas * price + value: have 0 want 21000', 'INSUFFICIENT_FUNDS'],
    ['fetch failed', 'RETRY'],
  ] as const)('classifies "%s" as %s', (message, kind) => {
    expect(classifyBroadcastError(message)).toBe(kind);
  });
});
