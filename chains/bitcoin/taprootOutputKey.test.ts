import { describe, expect, it } from 'vitest';
import { bytesToHex, hexToBytes } from '../../src/shared/encoding.js';
import { taprootOutputKey } from './taprootOutputKey.js';

// BIP-86, first receiving address of account 0 (m/86'/0'/0'/0/0).
const INTERNAL = 'cc8a4bc64d897bddc5fbc2f670f7a8ba0b386779106cf1223c6fc5d7cd6fc115';
const OUTPUT = 'a60869f0dbcf1dc659c9cecbaf8050135ea9e8cdc487053f1dc6880949dc684c';

describe('taprootOutputKey', () => {
  it('tweaks the BIP-86 vector key, x-only or compressed', () => {
    expect(bytesToHex(taprootOutputKey(hexToBytes(INTERNAL, 'k')))).toBe(OUTPUT);
    expect(bytesToHex(taprootOutputKey(hexToBytes(`03${INTERNAL}`, 'k')))).toBe(OUTPUT);
  });

  it('answers a repeated key with a copy the caller may change without changing the next answer', () => {
    const first = taprootOutputKey(hexToBytes(INTERNAL, 'k'));
    first.fill(0);
    expect(bytesToHex(taprootOutputKey(hexToBytes(INTERNAL, 'k')))).toBe(OUTPUT);
  });
});
