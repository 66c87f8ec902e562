/**
 * The chains the daemon signs for, by SignTransactionRequest's `transaction` oneof member and by
 * the public API's TRANSACTION_TYPE_*. Adding a chain is one folder in chains/, its proto message,
 * and one line here.
 */
import { CountersignError } from '../../shared/errors.js';
import { bitcoinChain } from './bitcoin.js';
import type { AnyDaemonChain } from './chain.js';
import { ethereumChain } from './ethereum.js';
import { solanaChain } from './solana.js';
import { tempoChain } from './tempo.js';
import { tronChain } from './tron.js';

const CHAINS: AnyDaemonChain[] = [ethereumChain, solanaChain, tronChain, bitcoinChain, tempoChain];

/** Adds a chain (tests add a toy one); returns the function that removes it again. */
export function registerChain(chain: AnyDaemonChain): () => void {
  if (CHAINS.some((c) => c.member === chain.member || c.transactionType === chain.transactionType))
    throw new Error(`a chain for ${chain.member} / ${chain.transactionType} is registered already`);
  CHAINS.push(chain);
  return () => {
    const i = CHAINS.indexOf(chain);
    if (i >= 0) CHAINS.splice(i, 1);
  };
}

/** The chain of a request's `transaction` member; FIELD_MISSING naming the members when there is none. */
export function chainOfMember(member: string | undefined): AnyDaemonChain {
  const chain = CHAINS.find((c) => c.member === member);
  if (chain !== undefined) return chain;
  throw new CountersignError(
    'FIELD_MISSING',
    `transaction: one of ${CHAINS.map((c) => c.member).join(', ')} is required`,
    { field: 'transaction' },
  );
}

/** The chain of a TRANSACTION_TYPE_*, or undefined. */
export function chainOfType(transactionType: string): AnyDaemonChain | undefined {
  return CHAINS.find((c) => c.transactionType === transactionType);
}
