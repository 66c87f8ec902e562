import { bytesToHex } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import { encodeTronAddress } from './encodeTronAddress.js';
import type { TronContract, TronPermission, TronTransaction } from './types.js';

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
    case 'FreezeBalanceV2Contract':
      return Object.assign(common, { frozen_balance: p.frozenBalance, resource: p.resource });
    case 'UnfreezeBalanceV2Contract':
      return Object.assign(common, { unfreeze_balance: p.unfreezeBalance, resource: p.resource });
    case 'DelegateResourceContract':
      return Object.assign(common, {
        resource: p.resource,
        balance: p.balance,
        receiver_address: encodeTronAddress(p.receiverAddress),
        lock: p.lock,
        lock_period: p.lockPeriod,
      });
    case 'UnDelegateResourceContract':
      return Object.assign(common, {
        resource: p.resource,
        balance: p.balance,
        receiver_address: encodeTronAddress(p.receiverAddress),
      });
    case 'AccountPermissionUpdateContract':
      return Object.assign(
        common,
        p.owner === undefined ? {} : { owner: describePermission(p.owner) },
        p.witness === undefined ? {} : { witness: describePermission(p.witness) },
        { actives: p.actives.map(describePermission) },
      );
    case 'opaque':
      return common;
    default: {
      const never: never = p;
      throw new CountersignError('INTERNAL', `unhandled contract parameter ${String(never)}`);
    }
  }
}

function describePermission(p: TronPermission): Record<string, unknown> {
  return {
    type: p.type,
    id: BigInt(p.id),
    permission_name: p.permissionName,
    threshold: p.threshold,
    parent_id: BigInt(p.parentId),
    operations: bytesToHex(p.operations),
    keys: p.keys.map((k) => ({ address: encodeTronAddress(k.address), weight: k.weight })),
  };
}

/**
 * The `tron.tx` facts policies read (turnkey-api.md 8.3). Addresses are base58check `T…`; byte
 * fields lower-case hex without 0x, as Tron's own JSON writes them; numbers bigint, proto3 defaults
 * (0, '', false, BANDWIDTH) where a field is absent. Each contract carries the facts of its type:
 * TransferContract adds to_address and amount; TriggerSmartContract contract_address, call_value,
 * data, call_token_value and token_id; FreezeBalanceV2Contract frozen_balance and resource,
 * UnfreezeBalanceV2Contract unfreeze_balance and resource; DelegateResourceContract resource,
 * balance, receiver_address, lock and lock_period, UnDelegateResourceContract the first three;
 * AccountPermissionUpdateContract owner and witness (when present) and actives, each permission as
 * {type (Owner, Witness, Active), id, permission_name, threshold, parent_id, operations, keys
 * [{address, weight}]}; other types only type, permission_id and owner_address.
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
