/** SignTransaction's `ethereum` member: the proto message → the Ethereum adapter's input and signer. */
import {
  ethereumAdapter,
  type EthTransaction,
  type EthTransactionFields,
} from '../../../chains/ethereum/index.js';
import { bytesTo0x } from '../../shared/encoding.js';
import type { EthereumTransactionMessage } from '../proto.js';
import { ETHEREUM_TRANSACTION_TYPES } from '../proto.js';
import { enumValue, unsignedOrFields, type DaemonChain } from './chain.js';

export const ethereumChain: DaemonChain<
  EthTransaction,
  EthTransactionFields,
  string,
  EthereumTransactionMessage
> = {
  member: 'ethereum',
  transactionType: 'TRANSACTION_TYPE_ETHEREUM',
  adapter: ethereumAdapter,
  digestCount: 1,
  input: (m) =>
    unsignedOrFields('ethereum', m, ethereumAdapter, { hasFields, fields: fieldsOf, keepParseField: true }),
  signer: (ctx, organizationId, req) => ctx.signers.resolve(organizationId, req.signWith),
  logFields: (input) => ({ txType: input.tx.type }),
  hash: (v) => bytesTo0x(v.hash),
};

function hasFields(e: EthereumTransactionMessage): boolean {
  return (
    e.type !== 'ETHEREUM_TRANSACTION_TYPE_UNSPECIFIED' ||
    e.chainId !== '' ||
    e.nonce !== '' ||
    e.to !== '' ||
    e.value !== '' ||
    e.data.length > 0 ||
    e.gasLimit !== '' ||
    e.gasPrice !== '' ||
    e.maxFeePerGas !== '' ||
    e.maxPriorityFeePerGas !== '' ||
    e.accessList.length > 0 ||
    e.maxFeePerBlobGas !== '' ||
    e.blobVersionedHashes.length > 0 ||
    e.authorizationList.length > 0 ||
    e.legacyWithoutChainId
  );
}

const FIELD_TYPE = {
  ETHEREUM_TRANSACTION_TYPE_UNSPECIFIED: 'UNSPECIFIED',
  ETHEREUM_TRANSACTION_TYPE_LEGACY: 'LEGACY',
  ETHEREUM_TRANSACTION_TYPE_EIP2930: 'EIP2930',
  ETHEREUM_TRANSACTION_TYPE_EIP1559: 'EIP1559',
  ETHEREUM_TRANSACTION_TYPE_EIP4844: 'EIP4844',
  ETHEREUM_TRANSACTION_TYPE_EIP7702: 'EIP7702',
} as const satisfies Record<(typeof ETHEREUM_TRANSACTION_TYPES)[number], EthTransactionFields['type']>;

function fieldsOf(e: EthereumTransactionMessage): EthTransactionFields {
  return {
    type: enumValue(FIELD_TYPE, e.type, 'ethereum.type', 'transaction type'),
    chainId: e.chainId,
    nonce: e.nonce,
    to: e.to,
    value: e.value,
    data: new Uint8Array(e.data),
    gasLimit: e.gasLimit,
    gasPrice: e.gasPrice,
    maxFeePerGas: e.maxFeePerGas,
    maxPriorityFeePerGas: e.maxPriorityFeePerGas,
    accessList: e.accessList.map((a) => ({
      address: a.address,
      storageKeys: a.storageKeys.map((k) => new Uint8Array(k)),
    })),
    maxFeePerBlobGas: e.maxFeePerBlobGas,
    blobVersionedHashes: e.blobVersionedHashes.map((h) => new Uint8Array(h)),
    authorizationList: e.authorizationList.map((a) => ({
      chainId: a.chainId,
      address: a.address,
      nonce: a.nonce,
      yParity: a.yParity,
      r: new Uint8Array(a.r),
      s: new Uint8Array(a.s),
    })),
    legacyWithoutChainId: e.legacyWithoutChainId,
  };
}
