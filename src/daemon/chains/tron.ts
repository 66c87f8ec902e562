/**
 * SignTransaction's `tron` member: `raw_data` built from the structured fields of a transfer (or
 * the caller's, parsed strictly, its txID compared with `expected_tx_id`); `sign_with` is the
 * base58check address that owns the transaction.
 */
import {
  expectedTxIdCheck,
  parseTronAddress,
  tronAdapter,
  txId,
  type TronTransaction,
  type TronTransactionFields,
} from '../../../chains/tron/index.js';
import { bytesToHex } from '../../shared/encoding.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import type { TronTransactionMessage } from '../proto.js';
import { enumValue, unsignedOrFields, type DaemonChain } from './chain.js';

export const tronChain: DaemonChain<TronTransaction, TronTransactionFields, string, TronTransactionMessage> =
  {
    member: 'tron',
    transactionType: 'TRANSACTION_TYPE_TRON',
    adapter: tronAdapter,
    input: (t) => {
      if (t !== undefined && t.unsigned.length === 0 && !hasFields(t)) {
        throw new CountersignError(
          'FIELD_MISSING',
          'tron: set unsigned (raw_data bytes) or the structured fields of a transfer',
          { field: 'tron' },
        );
      }
      // rawDataFromFields checks expected_tx_id against what it built; a caller's raw_data is checked here.
      const input = unsignedOrFields('tron', t, tronAdapter, { hasFields, fields: fieldsOf });
      if (t !== undefined && t.unsigned.length > 0 && t.expectedTxId !== '')
        expectedTxIdCheck(input.unsigned, t.expectedTxId, 'tron.expected_tx_id');
      return input;
    },
    signer: (_ctx, _org, req) => {
      if (!req.signWith.startsWith('T'))
        throw invalid('sign_with', 'must be the base58check Tron address (T…) of the key that signs');
      parseTronAddress(req.signWith, 'sign_with');
      return Promise.resolve(req.signWith);
    },
    // The txID is always sha256 of the raw_data bytes sent; a caller's is only compared.
    logFields: (input) => ({ txId: bytesToHex(txId(input.unsigned)) }),
    hash: (v) => bytesToHex(v.hash),
  };

function hasFields(t: TronTransactionMessage): boolean {
  return (
    t.kind !== 'TRON_TRANSACTION_KIND_UNSPECIFIED' ||
    t.ownerAddress !== '' ||
    t.toAddress !== '' ||
    t.amount !== '' ||
    t.tokenContract !== '' ||
    t.feeLimit !== '' ||
    t.refBlockBytes !== '' ||
    t.refBlockHash !== '' ||
    t.expiration !== '' ||
    t.timestamp !== '' ||
    t.memo.length > 0 ||
    t.permissionId !== 0
  );
}

const KIND = {
  TRON_TRANSACTION_KIND_UNSPECIFIED: 'UNSPECIFIED',
  TRON_TRANSACTION_KIND_TRX_TRANSFER: 'TRX_TRANSFER',
  TRON_TRANSACTION_KIND_TRC20_TRANSFER: 'TRC20_TRANSFER',
} as const satisfies Record<string, TronTransactionFields['kind']>;

function fieldsOf(t: TronTransactionMessage): TronTransactionFields {
  return {
    kind: enumValue(KIND, t.kind, 'tron.kind', 'transaction kind'),
    ownerAddress: t.ownerAddress,
    toAddress: t.toAddress,
    amount: t.amount,
    tokenContract: t.tokenContract,
    feeLimit: t.feeLimit,
    refBlockBytes: t.refBlockBytes,
    refBlockHash: t.refBlockHash,
    expiration: t.expiration,
    timestamp: t.timestamp,
    memo: new Uint8Array(t.memo),
    permissionId: t.permissionId,
    expectedTxId: t.expectedTxId,
  };
}
