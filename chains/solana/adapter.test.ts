import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { testSigner } from '../../test/vectors/solana/keys.js';
import { instructionMixes, web3Compile } from '../../test/vectors/solana/web3.js';
import { solanaAdapter } from './index.js';

const A = testSigner(0);
const B = testSigner(1);
const rs = (sig: Uint8Array) => ({ r: sig.subarray(0, 32), s: sig.subarray(32), v: 0 });

describe.each([instructionMixes[1]!, instructionMixes[5]!])('solanaAdapter on "$name"', ({ fields }) => {
  it('serialize → parse → describe → digests → sign → assemble → verify', () => {
    const unsigned = solanaAdapter.serialize(fields);
    const tx = solanaAdapter.parse(unsigned);
    expect(Buffer.from(tx.messageBytes)).toEqual(Buffer.from(web3Compile(fields).serialize()));
    expect(solanaAdapter.describe(tx, A.address)['recent_blockhash']).toBe(fields.recentBlockhash);
    const [digest, ...rest] = solanaAdapter.digests(tx, unsigned);
    expect(rest).toEqual([]);
    expect(digest!.scheme).toBe('ED25519');
    const signed = solanaAdapter.assemble(tx, unsigned, [rs(B.sign(digest!.payload))]);
    const verified = solanaAdapter.verify(signed, unsigned, B.address);
    expect(verified.signer).toBe(B.address);
    const both = solanaAdapter.assemble(solanaAdapter.parse(signed), signed, [rs(A.sign(digest!.payload))]);
    expect(solanaAdapter.verify(both, signed, A.address).hash).toEqual(both.subarray(1, 65));
  });

  it('assembles several signatures at once, each into the slot of the key it verifies for', () => {
    const unsigned = solanaAdapter.serialize(fields);
    const tx = solanaAdapter.parse(unsigned);
    const signed = solanaAdapter.assemble(tx, unsigned, [
      rs(B.sign(tx.messageBytes)),
      rs(A.sign(tx.messageBytes)),
    ]);
    const slots = solanaAdapter.parse(signed).signatures;
    expect(slots[0]).toEqual(A.sign(tx.messageBytes));
    expect(slots.slice(1).some((s) => Buffer.from(s).equals(Buffer.from(B.sign(tx.messageBytes))))).toBe(
      true,
    );
  });

  it('refuses a signature that verifies for no required signer', () => {
    const unsigned = solanaAdapter.serialize(fields);
    const tx = solanaAdapter.parse(unsigned);
    const stranger = rs(testSigner(9).sign(tx.messageBytes));
    expect(() => solanaAdapter.assemble(tx, unsigned, [stranger])).toThrow(CountersignError);
    expect(() => solanaAdapter.assemble(tx, unsigned, [stranger])).toThrow('verifies for no required signer');
    expect(() => solanaAdapter.assemble(tx, unsigned, [])).toThrow('no signature');
  });
});
