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
    const [digest, ...rest] = solanaAdapter.digests(tx, B.address);
    expect(rest).toEqual([]);
    expect(digest!.scheme).toBe('ED25519');
    const sigB = rs(B.sign(digest!.payload));
    const signed = solanaAdapter.assemble(tx, [sigB], B.address);
    const verified = solanaAdapter.verify(signed, unsigned, B.address);
    expect(verified.signer).toBe(B.address);
    expect(verified.signatures).toEqual([{ r: sigB.r, s: sigB.s, v: 0 }]);
    const both = solanaAdapter.assemble(
      solanaAdapter.parse(signed),
      [rs(A.sign(digest!.payload))],
      A.address,
    );
    expect(solanaAdapter.verify(both, signed, A.address).hash).toEqual(both.subarray(1, 65));
    expect(solanaAdapter.parse(both).signatures[0]).toEqual(A.sign(tx.messageBytes));
  });

  it('refuses a signer that is not required, naming sign_with, before anything is signed', () => {
    const unsigned = solanaAdapter.serialize(fields);
    const tx = solanaAdapter.parse(unsigned);
    const stranger = testSigner(9);
    for (const step of [
      () => solanaAdapter.digests(tx, stranger.address),
      () => solanaAdapter.assemble(tx, [rs(stranger.sign(tx.messageBytes))], stranger.address),
    ]) {
      expect(step).toThrow(CountersignError);
      try {
        step();
      } catch (e) {
        expect((e as CountersignError).field).toBe('sign_with');
      }
    }
    expect(() => solanaAdapter.assemble(tx, [], A.address)).toThrow('one signer fills one slot');
  });
});
