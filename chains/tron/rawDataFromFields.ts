import {
  bigintToFixed,
  concatBytes,
  equalBytes,
  hexToBytes,
  parseDecimal,
  UINT256_MAX,
} from '../../src/shared/encoding.js';
import { CountersignError, invalid, missing } from '../../src/shared/errors.js';
import { expectedTxIdCheck } from './expectedTxIdCheck.js';
import { parseTronAddress } from './parseTronAddress.js';
import { encodeRawData, encodeTransferContract, encodeTriggerSmartContract } from './rawData.js';
import {
  INT64_MAX,
  TRON_CONTRACT_TYPES,
  TYPE_URL_PREFIX,
  type TronContract,
  type TronContractTypeInfo,
  type TronTransactionFields,
} from './types.js';

const P = 'tron';
const EMPTY: Uint8Array = new Uint8Array(0);
/** keccak256("transfer(address,uint256)")[0..4] (ERC-20, which TRC-20 follows). */
const TRANSFER_SELECTOR = Uint8Array.of(0xa9, 0x05, 0x9c, 0xbb);

function contractType(name: 'TransferContract' | 'TriggerSmartContract'): TronContractTypeInfo {
  const t = TRON_CONTRACT_TYPES.find((c) => c.name === name);
  if (t === undefined) throw new CountersignError('INTERNAL', `contract type ${name} missing from the table`);
  return t;
}

function required(value: string, name: string, min: bigint, max: bigint): bigint {
  if (value === '') throw missing(`${P}.${name}`);
  const n = parseDecimal(value, `${P}.${name}`, max);
  if (n < min) throw invalid(`${P}.${name}`, `must be at least ${min}`);
  return n;
}

function fixedHex(value: string, name: string, size: number): Uint8Array {
  if (value === '') throw missing(`${P}.${name}`);
  const b = hexToBytes(value, `${P}.${name}`);
  if (b.length !== size) throw invalid(`${P}.${name}`, `must be ${size} bytes of hex, got ${b.length}`);
  return b;
}

function address(value: string, name: string): Uint8Array {
  if (value === '') throw missing(`${P}.${name}`);
  return parseTronAddress(value, `${P}.${name}`);
}

function absent(present: boolean, name: string, kind: string): void {
  if (present) throw invalid(`${P}.${name}`, `is not used by a ${kind}; leave it empty`);
}

/**
 * Builds `raw_data` offline from the structured gRPC fields: a TRX transfer (TransferContract) or a
 * TRC-20 `transfer(address,uint256)` call (TriggerSmartContract), with the reference block the
 * caller supplies. The bytes equal what tronweb's `sendTrx` / `triggerSmartContract` build from the
 * same inputs. Errors name the proto field (`tron.fee_limit`).
 */
export function rawDataFromFields(fields: TronTransactionFields): Uint8Array {
  if (fields.kind === 'UNSPECIFIED') throw missing(`${P}.kind`);
  if (fields.kind !== 'TRX_TRANSFER' && fields.kind !== 'TRC20_TRANSFER') {
    throw invalid(`${P}.kind`, 'is not a known Tron transaction kind');
  }
  const owner = address(fields.ownerAddress, 'owner_address');
  const to = address(fields.toAddress, 'to_address');
  if (!Number.isInteger(fields.permissionId) || fields.permissionId < 0 || fields.permissionId > 0x7fffffff) {
    throw invalid(`${P}.permission_id`, 'must be a non-negative 32-bit integer');
  }

  let type: TronContractTypeInfo;
  let value: Uint8Array;
  let feeLimit = 0n;
  let parameter: TronContract['parameter'];
  if (fields.kind === 'TRX_TRANSFER') {
    absent(fields.tokenContract !== '', 'token_contract', 'TRX transfer');
    absent(fields.feeLimit !== '', 'fee_limit', 'TRX transfer');
    // java-tron and tronweb refuse a TRX transfer to its own sender.
    if (equalBytes(owner, to)) throw invalid(`${P}.to_address`, 'must differ from owner_address');
    const amount = required(fields.amount, 'amount', 1n, INT64_MAX);
    type = contractType('TransferContract');
    value = encodeTransferContract(owner, to, amount);
    parameter = { type: 'TransferContract', ownerAddress: owner, toAddress: to, amount };
  } else {
    const token = address(fields.tokenContract, 'token_contract');
    const amount = required(fields.amount, 'amount', 0n, UINT256_MAX);
    feeLimit = required(fields.feeLimit, 'fee_limit', 1n, INT64_MAX);
    // ABI: selector ‖ address word (the 20-byte account id, left-padded) ‖ uint256 word.
    const data = concatBytes(
      TRANSFER_SELECTOR,
      new Uint8Array(12),
      to.subarray(1),
      bigintToFixed(amount, 32),
    );
    type = contractType('TriggerSmartContract');
    value = encodeTriggerSmartContract(owner, token, data);
    parameter = {
      type: 'TriggerSmartContract',
      ownerAddress: owner,
      contractAddress: token,
      callValue: 0n,
      data,
      callTokenValue: 0n,
      tokenId: 0n,
    };
  }

  const rawData = encodeRawData({
    refBlockBytes: fixedHex(fields.refBlockBytes, 'ref_block_bytes', 2),
    refBlockNum: 0n,
    refBlockHash: fixedHex(fields.refBlockHash, 'ref_block_hash', 8),
    expiration: required(fields.expiration, 'expiration', 1n, INT64_MAX),
    auths: [],
    data: fields.memo.slice(),
    contract: [
      {
        type,
        typeUrl: `${TYPE_URL_PREFIX}${type.name}`,
        value,
        parameter,
        provider: EMPTY,
        contractName: EMPTY,
        permissionId: fields.permissionId,
        parameterUnknownFields: [],
        unknownFields: [],
      },
    ],
    scripts: EMPTY,
    timestamp: required(fields.timestamp, 'timestamp', 1n, INT64_MAX),
    feeLimit,
    unknownFields: [],
  });
  if (fields.expectedTxId !== '') expectedTxIdCheck(rawData, fields.expectedTxId, `${P}.expected_tx_id`);
  return rawData;
}
