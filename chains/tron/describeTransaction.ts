import { bytesToHex } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import { encodeTronAddress } from './encodeTronAddress.js';
import type { TronContract, TronTransaction } from './types.js';

function describeContract(c: TronContract): Record<string, unknown> {
  const common = {
    type: c.type.name,
    permission_id: BigInt(c.permissionId),
    owner_address: encodeTronAddress(c.parameter.ownerAddress),
  };
  const p = c.parameter;
  switch (p.type) {
    // Object.assign, not a spread followed by new properties: this V8 (Node 20) would make a new
    // hidden class for that on every call.
    case 'TransferContract':
      return Object.assign(common, { to_address: encodeTronAddress(p.toAddress), amount: p.amount });
    case 'TriggerSmartContract':
      return Object.assign(common, {
        contract_address: encodeTronAddress(p.contractAddress),
        call_value: p.callValue,
        data: bytesToHex(p.data),
        call_token_value: p.callTokenValue,
        token_id: p.tokenId,
      });
    case 'opaque':
      return common;
    default: {
      const never: never = p;
      throw new CountersignError('INTERNAL', `unhandled contract parameter ${String(never)}`);
    }
  }
}

/**
 * The `tron.tx` facts policies read (turnkey-api.md 8.3). Addresses are base58check `T…`; byte
 * fields lower-case hex without 0x, as Tron's own JSON writes them; numbers bigint, proto3 defaults
 * (0, '') where a field is absent. Each contract carries the facts of its type: TransferContract
 * adds to_address and amount, TriggerSmartContract contract_address, call_value, data,
 * call_token_value and token_id; other types only type, permission_id and owner_address.
 */
export function describeTransaction(tx: TronTransaction): Record<string, unknown> {
  return {
    ref_block_bytes: bytesToHex(tx.refBlockBytes),
    ref_block_hash: bytesToHex(tx.refBlockHash),
    expiration: tx.expiration,
    timestamp: tx.timestamp,
    data: bytesToHex(tx.data),
    fee_limit: tx.feeLimit,
    contract: tx.contract.map(describeContract),
  };
}
