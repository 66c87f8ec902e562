/**
 * The policy facts of signing activities: the key signed with (`wallet`, `private_key`,
 * `wallet_account`), and the helpers the chains' sign_transaction facts share
 * (activities/chains/*: the transaction as its adapter describes it from the bytes it parsed itself,
 * turnkey-api.md 8.3).
 */
import { addressFromPublicKey } from '../../chains/ethereum/index.js';
import type { BitcoinNetwork } from '../../chains/bitcoin/index.js';
import { CountersignError } from '../shared/errors.js';
import { hexToBytes } from '../shared/encoding.js';
import type { TransactionFacts } from './policy/index.js';
import type { ActivityContext, ActivityFacts } from './activities/types.js';
import type { SigningKeyRecord } from './store/types.js';
import { addContractCallFacts } from './abi-facts.js';

/** `wallet` + `wallet_account` for an account, `private_key` for a private key. */
export async function signerFacts(ctx: ActivityContext, rec: SigningKeyRecord): Promise<ActivityFacts> {
  if (rec.kind === 'wallet_account' && rec.walletId !== null) {
    const w = await ctx.store.getWallet(ctx.organization.id, rec.walletId);
    const walletAccount = { address: rec.address ?? '' };
    // Two literals, not a spread and then walletAccount: that would cost a hidden class per call.
    return w === undefined
      ? { walletAccount }
      : { wallet: { id: w.id, label: w.name, imported: w.imported, exported: w.exported }, walletAccount };
  }
  const k =
    rec.privateKeyId === null
      ? undefined
      : await ctx.store.getPrivateKey(ctx.organization.id, rec.privateKeyId);
  if (k === undefined) return {};
  return {
    privateKey: { id: k.id, label: k.name, tags: k.tags, imported: k.imported, exported: k.exported },
  };
}

/** Re-homes an adapter's error onto the request field that carried the transaction. */
export function inField<T>(field: string, step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (e instanceof CountersignError)
      throw new CountersignError(e.code, `${field}: ${e.message}`, { field, cause: e, meta: e.meta });
    throw e;
  }
}

/** The Ethereum address of a secp256k1 signer (its stored address, else derived from its key). */
export function ethereumAddressOf(rec: SigningKeyRecord, signWithField: string): string {
  if (rec.address !== null && rec.addressFormat === 'ADDRESS_FORMAT_ETHEREUM') return rec.address;
  return inField(signWithField, () => addressFromPublicKey(hexToBytes(rec.publicKey, signWithField)));
}

/** The network a Bitcoin signer's address format names. */
export function bitcoinNetworkOf(rec: SigningKeyRecord): BitcoinNetwork {
  const f = rec.addressFormat ?? '';
  if (f.includes('_REGTEST_')) return 'regtest';
  if (f.includes('_TESTNET_') || f.includes('_SIGNET_')) return 'testnet';
  return 'mainnet';
}

/** Adds the decoded contract call (from an uploaded ABI for `eth.tx.to`) to Ethereum facts. */
export async function withContractCallFacts(
  ctx: ActivityContext,
  transaction: TransactionFacts | undefined,
): Promise<TransactionFacts | undefined> {
  if (transaction?.chain === 'eth')
    await addContractCallFacts(ctx.store, ctx.organization.id, transaction.tx as Record<string, unknown>);
  return transaction;
}
