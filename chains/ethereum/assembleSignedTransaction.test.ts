import { createTxFromRLP } from '@ethereumjs/tx';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { signDigest } from '../../src/shared/secp256k1.js';
import {
  eip155Vectors,
  ethereumjsCommon,
  fieldsFromJson,
  hex,
  to0x,
  transactionVectors,
  toViem,
} from '../../test/vectors/ethereum/vectors.js';
import { assembleSignedTransaction } from './assembleSignedTransaction.js';
import { parseUnsignedTransaction } from './parseUnsignedTransaction.js';
import { serializeUnsignedTransaction } from './serializeUnsignedTransaction.js';
import { signingDigest } from './signingDigest.js';
import { transactionFromFields } from './transactionFromFields.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

const key = hex(transactionVectors.privateKey);
const account = privateKeyToAccount(transactionVectors.privateKey);

function signAndAssemble(unsignedHex: string, seckey: Uint8Array) {
  const unsigned = hex(unsignedHex);
  const tx = parseUnsignedTransaction(unsigned);
  const sig = signDigest(signingDigest(unsigned), seckey);
  const signed = assembleSignedTransaction(tx, {
    r: sig.compact.subarray(0, 32),
    s: sig.compact.subarray(32),
    yParity: sig.recovery,
  });
  return { tx, unsigned, signed };
}

describe.each(transactionVectors.transactions)('$name', (v) => {
  const { tx, unsigned, signed } = signAndAssemble(v.unsigned, key);

  it('assembles what viem privateKeyToAccount(pk).signTransaction produces', async () => {
    expect(to0x(signed)).toBe(v.signed);
    expect(to0x(signed)).toBe(await account.signTransaction(toViem(tx)));
  });

  it('is accepted by @ethereumjs/tx with the anvil sender', () => {
    const ejs = createTxFromRLP(signed, { common: ethereumjsCommon(tx.chainId) });
    expect(ejs.verifySignature()).toBe(true);
    expect(ejs.getSenderAddress().toString()).toBe(v.sender.toLowerCase());
    expect(to0x(ejs.hash())).toBe(v.hash);
  });

  it('passes verifySignedTransaction with the tx hash and the checksummed signer', () => {
    const { hash, signer } = verifySignedTransaction(signed, unsigned, v.sender.toLowerCase());
    expect(to0x(hash)).toBe(v.hash);
    expect(signer).toBe(transactionVectors.sender);
  });

  it('structured fields serialize to the same bytes the signature commits to', () => {
    expect(serializeUnsignedTransaction(transactionFromFields(fieldsFromJson(v.fields)))).toEqual(unsigned);
  });
});

describe('EIP-155 specification example', () => {
  it.each(eip155Vectors.valid)('reproduces $name from the spec', (v) => {
    const { unsigned, signed } = signAndAssemble(v.unsigned, hex(v.privateKey));
    expect(to0x(signingDigest(unsigned))).toBe(v.digest);
    expect(to0x(signed)).toBe(v.signed);
    expect(verifySignedTransaction(signed, unsigned, v.sender).signer).toBe(v.sender);
  });
});

describe('assembleSignedTransaction', () => {
  const tx = parseUnsignedTransaction(hex(transactionVectors.transactions[4]!.unsigned));
  const r = new Uint8Array(32).fill(0x11);
  const s = new Uint8Array(32).fill(0x22);

  it('writes r and s as minimal integers (leading zero bytes stripped)', () => {
    const rz = new Uint8Array(32);
    rz[31] = 0x05;
    const out = assembleSignedTransaction(tx, { r: rz, s, yParity: 1 });
    // …, yParity 0x01, r 0x05, s 0xa0 ‖ 32 bytes
    expect(Buffer.from(out).toString('hex')).toMatch(new RegExp(`0105a0${'22'.repeat(32)}$`));
  });

  it('encodes y-parity 0 as the empty integer', () => {
    const out = assembleSignedTransaction(tx, { r, s, yParity: 0 });
    expect(Buffer.from(out).toString('hex')).toMatch(
      new RegExp(`80a0${'11'.repeat(32)}a0${'22'.repeat(32)}$`),
    );
  });

  it('computes legacy v = chainId * 2 + 35 + yParity for a chain id beyond 2^53', () => {
    const legacy = {
      ...parseUnsignedTransaction(hex(transactionVectors.transactions[0]!.unsigned)),
      chainId: 2n ** 60n,
    };
    const out = assembleSignedTransaction(legacy, { r, s, yParity: 1 });
    const v = 2n ** 61n + 36n;
    expect(Buffer.from(out).toString('hex')).toContain(`88${v.toString(16)}a0${'11'.repeat(32)}`);
  });

  it('computes legacy v = 27 + yParity without a chain id', () => {
    const legacy = parseUnsignedTransaction(hex(transactionVectors.transactions[2]!.unsigned));
    expect(Buffer.from(assembleSignedTransaction(legacy, { r, s, yParity: 1 })).toString('hex')).toContain(
      `1ca0${'11'.repeat(32)}`,
    );
  });

  it('rejects a y-parity other than 0 or 1', () => {
    expect(() => assembleSignedTransaction(tx, { r, s, yParity: 27 })).toThrow(
      'signature.v: y-parity must be 0 or 1',
    );
  });

  it('rejects r longer than 32 bytes', () => {
    expect(() => assembleSignedTransaction(tx, { r: new Uint8Array(33), s, yParity: 0 })).toThrow(
      'signature.r',
    );
  });
});
