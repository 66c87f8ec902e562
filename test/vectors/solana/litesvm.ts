/** litesvm helpers shared by the Solana suites: lookup-table accounts and wire-byte execution. */
import { base58 } from '@scure/base';
import { address, getTransactionDecoder, lamports } from '@solana/kit';
import { TransactionMetadata, type LiteSVM } from 'litesvm';

export const LOOKUP_TABLE_PROGRAM = 'AddressLookupTab1e1111111111111111111111111';

/** An active lookup table account (address-lookup-table program state: 56-byte meta, then keys). */
export function lookupTableData(addresses: readonly Uint8Array[]): Uint8Array {
  const meta = Buffer.alloc(56);
  meta.writeUInt32LE(1, 0); // ProgramState::LookupTable
  meta.writeBigUInt64LE(0xffffffffffffffffn, 4); // deactivation_slot: never
  // last_extended_slot 0, start index 0, authority None, padding: all zero.
  return Uint8Array.from([...meta, ...addresses.flatMap((a) => [...a])]);
}

/**
 * Stores an active lookup table at `table` (base58) holding `entries` (base58), then moves past
 * the slot it was "extended" in: entries are usable from the next slot on.
 */
export function installLookupTable(svm: LiteSVM, table: string, entries: readonly string[]): void {
  const keys = entries.map((a) => base58.decode(a));
  svm.setAccount({
    address: address(table),
    data: lookupTableData(keys),
    executable: false,
    lamports: lamports(10_000_000n),
    programAddress: address(LOOKUP_TABLE_PROGRAM),
    space: BigInt(56 + 32 * keys.length),
  });
  svm.warpToSlot(10n);
}

/** Executes a signed wire transaction on litesvm; throws with the runtime's reason if it fails. */
export function execute(svm: LiteSVM, wire: Uint8Array): TransactionMetadata {
  const result = svm.sendTransaction(getTransactionDecoder().decode(wire));
  if (!(result instanceof TransactionMetadata)) throw new Error(`transaction failed: ${String(result)}`);
  return result;
}

/** The balance of a base58 account in lamports (0n for an account that does not exist). */
export function balanceOf(svm: LiteSVM, account: string): bigint {
  return svm.getBalance(address(account)) ?? 0n;
}
