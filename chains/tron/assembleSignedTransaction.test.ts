import { utils } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { signDigest } from '../../src/shared/secp256k1.js';
import { hex, toHex, transactionVectors, tronWebProto } from '../../test/vectors/tron/vectors.js';
import { assembleSignedTransaction } from './assembleSignedTransaction.js';
import { digests } from './digests.js';
import { parseRawData } from './parseRawData.js';

const key = hex(transactionVectors.privateKey);

describe.each(transactionVectors.transactions)('assembleSignedTransaction on $name', (v) => {
  const tx = parseRawData(hex(v.rawDataHex));
  const [digest] = digests(tx);
  const sig = signDigest(digest!.payload, key);
  const signed = assembleSignedTransaction(tx, {
    r: sig.compact.subarray(0, 32),
    s: sig.compact.subarray(32),
    yParity: sig.recovery,
  });

  it('signs the txID itself with ECDSA secp256k1', () => {
    expect(digest!.scheme).toBe('ECDSA_SECP256K1');
    expect(toHex(digest!.payload)).toBe(v.txID);
  });

  it('equals the transaction tronweb signs and wraps (v = 27 + y-parity; tronweb writes it upper-case)', () => {
    expect(toHex(signed)).toBe(v.signedHex.toLowerCase());
    expect(toHex(signed.subarray(signed.length - 65))).toBe(v.signature.toLowerCase());
  });

  it("decodes with tronweb's protobuf classes to the same raw_data and one signature", () => {
    const decoded = tronWebProto.Transaction.deserializeBinary(signed);
    expect(toHex(decoded.getRawData().serializeBinary())).toBe(v.rawDataHex);
    const sigs = decoded.getSignatureList_asU8();
    expect(sigs).toHaveLength(1);
    expect(sigs[0]![64]).toBe(27 + sig.recovery);
  });

  it("recovers the signer with tronweb's ecRecover", () => {
    const sigHex = toHex(signed.subarray(signed.length - 65));
    const recovered = utils.crypto.ecRecover(v.txID, sigHex);
    expect(utils.address.fromHex(recovered)).toBe(transactionVectors.signer);
  });
});

describe('assembleSignedTransaction input checks', () => {
  const tx = parseRawData(hex(transactionVectors.transactions[0]!.rawDataHex));
  const r = new Uint8Array(32).fill(1);
  const s = new Uint8Array(32).fill(2);

  it('left-pads short r and s to 32 bytes', () => {
    const signed = assembleSignedTransaction(tx, { r: Uint8Array.of(7), s: Uint8Array.of(9), yParity: 1 });
    const sig = signed.subarray(signed.length - 65);
    expect(toHex(sig)).toBe(`${'00'.repeat(31)}07${'00'.repeat(31)}091c`);
  });

  it('rejects a y-parity other than 0 or 1', () => {
    for (const yParity of [2, 27, -1]) {
      expect(() => assembleSignedTransaction(tx, { r, s, yParity })).toThrow(CountersignError);
    }
  });

  it('rejects r or s longer than 32 bytes', () => {
    expect(() => assembleSignedTransaction(tx, { r: new Uint8Array(33), s, yParity: 0 })).toThrow(
      'signature.r',
    );
    expect(() => assembleSignedTransaction(tx, { r, s: new Uint8Array(33), yParity: 0 })).toThrow(
      'signature.s',
    );
  });
});
