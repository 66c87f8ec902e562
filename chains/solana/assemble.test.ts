import { base58 } from '@scure/base';
import { address, getTransactionDecoder, lamports } from '@solana/kit';
import { LiteSVM, TransactionMetadata } from 'litesvm';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../src/shared/errors.js';
import { testSigner, toHex } from '../../test/vectors/solana/keys.js';
import { fixedKey, SYSTEM_PROGRAM, systemTransferData } from '../../test/vectors/solana/web3.js';
import { assemble } from './assemble.js';
import { digests } from './digests.js';
import { messageFromFields } from './messageFromFields.js';
import { parseWireTransaction } from './parseWireTransaction.js';
import { serializeWireTransaction } from './serializeWireTransaction.js';
import type { SolanaTransactionFields } from './types.js';
import { unsignedTransaction } from './unsignedTransaction.js';
import { verifySignedTransaction } from './verifySignedTransaction.js';

const payer = testSigner(0);
const cosigner = testSigner(1);
const LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';

function transfer(from: string, to: string, amount: bigint): SolanaTransactionFields['instructions'][number] {
  return {
    programId: SYSTEM_PROGRAM,
    accounts: [
      { pubkey: from, isSigner: true, isWritable: true },
      { pubkey: to, isSigner: false, isWritable: true },
    ],
    data: systemTransferData(amount),
  };
}

/** An active lookup table account (address-lookup-table program state: 56-byte meta, then keys). */
function lookupTableData(addresses: Uint8Array[]): Uint8Array {
  const meta = Buffer.alloc(56);
  meta.writeUInt32LE(1, 0); // ProgramState::LookupTable
  meta.writeBigUInt64LE(0xffffffffffffffffn, 4); // deactivation_slot: never
  // last_extended_slot 0, start index 0, authority None, padding: all zero.
  return Uint8Array.from([...meta, ...addresses.flatMap((a) => [...a])]);
}

const ok = (r: unknown) => {
  if (!(r instanceof TransactionMetadata)) throw new Error(`transaction failed: ${String(r)}`);
};

describe('assemble (partial signing)', () => {
  const recipient = fixedKey(77);
  const fields = (blockhash: string, tables?: SolanaTransactionFields['addressLookupTables']) => ({
    feePayer: payer.address,
    recentBlockhash: blockhash,
    instructions: [
      transfer(payer.address, recipient, 1_000_000n),
      transfer(cosigner.address, recipient, 2_000_000n),
    ],
    ...(tables === undefined ? {} : { addressLookupTables: tables }),
  });

  it('fills only slot 1 for the co-signer and keeps slot 0 and the message byte for byte', () => {
    const unsignedWire = serializeWireTransaction(
      unsignedTransaction(messageFromFields(fields(fixedKey(5)))),
    );
    const tx = parseWireTransaction(unsignedWire);
    const [digest] = digests(tx, cosigner.publicKey);
    const once = assemble(tx, cosigner.publicKey, cosigner.sign(digest!.payload));
    expect(toHex(once.subarray(0, 65))).toBe(toHex(unsignedWire.subarray(0, 65)));
    expect(toHex(once.subarray(129))).toBe(toHex(unsignedWire.subarray(129)));
    expect(toHex(once.subarray(65, 129))).not.toBe('00'.repeat(64));
    const partial = verifySignedTransaction(once, unsignedWire, cosigner.address);
    expect(partial).toMatchObject({ signerIndex: 1, complete: false, missingSigners: [payer.address] });
    expect(partial.hash).toEqual(new Uint8Array(64));
  });

  it('keeps a slot another signer already filled', () => {
    const tx = unsignedTransaction(messageFromFields(fields(fixedKey(5))));
    const preSigned = { ...tx, signatures: [payer.sign(tx.messageBytes), new Uint8Array(64)] };
    const wire = assemble(preSigned, cosigner.publicKey, cosigner.sign(tx.messageBytes));
    expect(parseWireTransaction(wire).signatures[0]).toEqual(preSigned.signatures[0]);
  });

  it('refuses a signature that is not 64 bytes and a key that is not a required signer', () => {
    const tx = unsignedTransaction(messageFromFields(fields(fixedKey(5))));
    expect(() => assemble(tx, cosigner.publicKey, new Uint8Array(65))).toThrow(
      'signature: an ed25519 signature is 64 bytes',
    );
    expect(() => assemble(tx, testSigner(5).publicKey, new Uint8Array(64))).toThrow(CountersignError);
    expect(() => assemble(tx, testSigner(5).publicKey, new Uint8Array(64))).toThrow(
      'sign_with: is not a required signer of this transaction',
    );
  });

  describe.each([
    ['legacy', false],
    ['v0 with an address lookup table', true],
  ] as const)('a 2-signer %s transaction signed slot 1 then slot 0', (_name, withTable) => {
    it('executes on litesvm and moves the lamports', () => {
      const svm = new LiteSVM();
      svm.airdrop(address(payer.address), lamports(1_000_000_000n));
      svm.airdrop(address(cosigner.address), lamports(1_000_000_000n));
      let tables: SolanaTransactionFields['addressLookupTables'];
      if (withTable) {
        const table = fixedKey(200);
        const entries = [fixedKey(201), recipient].map((a) => base58.decode(a));
        svm.setAccount({
          address: address(table),
          data: lookupTableData(entries),
          executable: false,
          lamports: lamports(10_000_000n),
          programAddress: address(LOOKUP_TABLE_PROGRAM),
          space: BigInt(56 + 32 * entries.length),
        });
        svm.warpToSlot(10n); // table entries become usable in the slot after they were added
        tables = [{ address: table, addresses: [fixedKey(201), recipient] }];
      }
      const msg = messageFromFields(fields(svm.latestBlockhash(), tables));
      expect(msg.version).toBe(withTable ? 0 : 'legacy');
      expect(msg.addressTableLookups).toHaveLength(withTable ? 1 : 0);
      const unsignedWire = serializeWireTransaction(unsignedTransaction(msg));
      const tx = parseWireTransaction(unsignedWire);

      const afterCosigner = assemble(tx, cosigner.publicKey, cosigner.sign(tx.messageBytes));
      expect(toHex(afterCosigner.subarray(0, 65))).toBe(toHex(unsignedWire.subarray(0, 65)));
      const tx1 = parseWireTransaction(afterCosigner);
      const signed = assemble(tx1, payer.publicKey, payer.sign(tx1.messageBytes));
      expect(toHex(signed.subarray(65, 129))).toBe(toHex(afterCosigner.subarray(65, 129)));

      // Each signer's check against the wire it was sent.
      const v = verifySignedTransaction(signed, afterCosigner, payer.address);
      expect(v).toMatchObject({ signerIndex: 0, complete: true, missingSigners: [] });
      expect(v.hash).toEqual(signed.subarray(1, 65));

      const before = {
        payer: svm.getBalance(address(payer.address))!,
        cosigner: svm.getBalance(address(cosigner.address))!,
      };
      ok(svm.sendTransaction(getTransactionDecoder().decode(signed)));
      expect(svm.getBalance(address(recipient))).toBe(3_000_000n);
      expect(svm.getBalance(address(cosigner.address))).toBe(before.cosigner - 2_000_000n);
      // The payer also pays the fee: 5000 lamports per signature.
      expect(svm.getBalance(address(payer.address))).toBe(before.payer - 1_000_000n - 10_000n);
    });

    it('is refused by litesvm, as by verifySignedTransaction, when slot 0 holds another key’s signature', () => {
      const svm = new LiteSVM();
      svm.airdrop(address(payer.address), lamports(1_000_000_000n));
      svm.airdrop(address(cosigner.address), lamports(1_000_000_000n));
      const tx = unsignedTransaction(messageFromFields(fields(svm.latestBlockhash())));
      const once = assemble(tx, cosigner.publicKey, cosigner.sign(tx.messageBytes));
      const wrong = assemble(
        parseWireTransaction(once),
        payer.publicKey,
        testSigner(9).sign(tx.messageBytes),
      );
      expect(() => verifySignedTransaction(wrong, once, payer.address)).toThrow('slot 0 does not verify');
      const result = svm.sendTransaction(getTransactionDecoder().decode(wrong));
      expect(result).not.toBeInstanceOf(TransactionMetadata);
      expect(String(result)).toMatch(/SignatureFailure/);
      expect(svm.getBalance(address(recipient))).toBeNull();
    });

    it('is refused by litesvm while only one slot is signed', () => {
      const svm = new LiteSVM();
      svm.airdrop(address(payer.address), lamports(1_000_000_000n));
      const tx = unsignedTransaction(messageFromFields(fields(svm.latestBlockhash())));
      const partial = assemble(tx, cosigner.publicKey, cosigner.sign(tx.messageBytes));
      expect(() => svm.sendTransaction(getTransactionDecoder().decode(partial))).toThrow(
        /missing signature/i,
      );
    });
  });
});
