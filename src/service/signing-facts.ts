/**
 * The policy facts of signing activities: the key signed with (`wallet`, `private_key`,
 * `wallet_account`) and, for sign_transaction, the transaction as its chain adapter describes it
 * from the bytes it parsed itself (turnkey-api.md 8.3).
 */
import {
  addressFromPublicKey,
  describeTransaction as describeEthereum,
  parseUnsignedTransaction as parseEthereum,
} from '../../chains/ethereum/index.js';
import { describeTransaction as describeSolana, parseWireTransaction } from '../../chains/solana/index.js';
import { describeTransaction as describeTron, parseRawData } from '../../chains/tron/index.js';
import {
  describeTransaction as describeBitcoin,
  inRequest,
  parsePsbt,
  type BitcoinNetwork,
} from '../../chains/bitcoin/index.js';
import { describeTransaction as describeTempo, parseTransactionToSign } from '../../chains/tempo/index.js';
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
    return {
      ...(w === undefined
        ? {}
        : { wallet: { id: w.id, label: w.name, imported: w.imported, exported: w.exported } }),
      walletAccount: { address: rec.address ?? '' },
    };
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
function inField<T>(field: string, step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (e instanceof CountersignError)
      throw new CountersignError(e.code, `${field}: ${e.message}`, { field, cause: e, meta: e.meta });
    throw e;
  }
}

function ethereumAddressOf(rec: SigningKeyRecord, signWithField: string): string {
  if (rec.address !== null && rec.addressFormat === 'ADDRESS_FORMAT_ETHEREUM') return rec.address;
  return inField(signWithField, () => addressFromPublicKey(hexToBytes(rec.publicKey, signWithField)));
}

function bitcoinNetworkOf(rec: SigningKeyRecord): BitcoinNetwork {
  const f = rec.addressFormat ?? '';
  if (f.includes('_REGTEST_')) return 'regtest';
  if (f.includes('_TESTNET_') || f.includes('_SIGNET_')) return 'testnet';
  return 'mainnet';
}

/**
 * Parses `unsigned` with the adapter of `type` and describes it. A transaction the adapter refuses
 * is refused here already, before the policy gate, with the field named.
 */
export function transactionFacts(
  type: string,
  unsigned: Uint8Array,
  rec: SigningKeyRecord,
  fields: { readonly unsignedField: string; readonly signWithField: string },
): TransactionFacts | undefined {
  const { unsignedField, signWithField } = fields;
  switch (type) {
    case 'TRANSACTION_TYPE_ETHEREUM': {
      const tx = inField(unsignedField, () => parseEthereum(unsigned));
      if (rec.curve !== 'CURVE_SECP256K1') return undefined;
      const facts: Record<string, unknown> = {
        ...describeEthereum(tx, ethereumAddressOf(rec, signWithField)),
      };
      // function_name / function_signature / contract_call_args come from withContractCallFacts.
      return { chain: 'eth', tx: facts };
    }
    case 'TRANSACTION_TYPE_SOLANA':
      return {
        chain: 'solana',
        tx: { ...describeSolana(inField(unsignedField, () => parseWireTransaction(unsigned))) },
      };
    case 'TRANSACTION_TYPE_TRON':
      return { chain: 'tron', tx: describeTron(inField(unsignedField, () => parseRawData(unsigned))) };
    case 'TRANSACTION_TYPE_BITCOIN': {
      const psbt = inRequest(fields, () => parsePsbt(unsigned));
      return { chain: 'bitcoin', tx: inRequest(fields, () => describeBitcoin(psbt, bitcoinNetworkOf(rec))) };
    }
    case 'TRANSACTION_TYPE_TEMPO': {
      const input = inField(unsignedField, () => parseTransactionToSign(unsigned));
      if (rec.curve !== 'CURVE_SECP256K1') return undefined;
      const from = input.kind === 'sender' ? ethereumAddressOf(rec, signWithField) : input.sender;
      return { chain: 'tempo', tx: describeTempo(input.tx, from) };
    }
    default:
      return undefined;
  }
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
