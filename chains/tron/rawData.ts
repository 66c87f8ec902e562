/**
 * The one place that knows the layout of `protocol.Transaction.raw`, `Transaction.Contract`,
 * `google.protobuf.Any` and the contract parameters countersign decodes (java-tron Tron.proto,
 * balance_contract.proto, smart_contract.proto, account_contract.proto). Decoding is
 * canonical-only: besides the wire rules of protobuf.ts it rejects known fields with the wrong wire
 * type, repeated scalars, and proto3 scalars explicitly set to their default (protobuf-java drops
 * those on re-serialization, so the node would compute another txID). Unknown fields are kept in
 * place so encoding reproduces the input.
 */
import { equalBytes, utf8 } from '../../src/shared/encoding.js';
import {
  decodeFields,
  encodeFields,
  malformed,
  nonNegativeInt32,
  nonNegativeInt64,
  type ProtoField,
} from './protobuf.js';
import {
  TRON_ADDRESS_LENGTH,
  TRON_ADDRESS_PREFIX,
  TRON_CONTRACT_TYPES,
  TRON_PERMISSION_TYPES,
  TRON_RESOURCES,
  TYPE_URL_PREFIX,
  type TronContract,
  type TronContractParameter,
  type TronContractTypeInfo,
  type TronPermission,
  type TronPermissionType,
  type TronResource,
  type TronTransaction,
} from './types.js';

/** The transaction model without its bytes: what the encoder consumes. */
export type TronTransactionBody = Omit<TronTransaction, 'rawData'>;

const TYPE_BY_NUMBER: ReadonlyMap<number, TronContractTypeInfo> = new Map(
  TRON_CONTRACT_TYPES.map((t) => [t.number, t]),
);

const EMPTY: Uint8Array = new Uint8Array(0);
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Contract types Tron.proto defines that countersign refuses (CustomContract, GetContract,
 * ShieldedTransferContract: no owner to bind a signer to); any other unknown number is malformed.
 */
const OWNERLESS_CONTRACT_TYPES: ReadonlySet<number> = new Set([20, 32, 51]);

/** Collects the known fields of one message, enforcing wire types, uniqueness and canonical values. */
class MessageReader {
  private readonly seen = new Set<number>();
  readonly unknown: ProtoField[] = [];

  constructor(private readonly path: string) {}

  private name(field: string): string {
    return this.path === '' ? field : `${this.path}.${field}`;
  }

  private once(f: ProtoField, field: string): void {
    if (this.seen.has(f.field)) throw malformed(this.name(field), 'appears more than once');
    this.seen.add(f.field);
  }

  /** A singular int64/int32/enum: wire type 0, once, not the default 0. */
  varint(f: ProtoField, field: string): bigint {
    if (f.wireType !== 0)
      throw malformed(this.name(field), `has wire type ${f.wireType}; expected 0 (varint)`);
    this.once(f, field);
    if (f.value === 0n) throw malformed(this.name(field), 'explicitly encodes the default 0 (not canonical)');
    return f.value;
  }

  int64(f: ProtoField, field: string): bigint {
    return nonNegativeInt64(this.varint(f, field), this.name(field));
  }

  int32(f: ProtoField, field: string): number {
    return nonNegativeInt32(this.varint(f, field), this.name(field));
  }

  /** A length-delimited field; singular ones must be non-empty (proto3 omits empty bytes). */
  bytes(f: ProtoField, field: string, repeated = false): Uint8Array {
    if (f.wireType !== 2)
      throw malformed(this.name(field), `has wire type ${f.wireType}; expected 2 (length-delimited)`);
    if (!repeated) {
      this.once(f, field);
      if (f.value.length === 0)
        throw malformed(this.name(field), 'explicitly encodes the default empty value (not canonical)');
    }
    return f.value;
  }

  /** A singular embedded message: present even when empty. */
  message(f: ProtoField, field: string): Uint8Array {
    if (f.wireType !== 2)
      throw malformed(this.name(field), `has wire type ${f.wireType}; expected 2 (length-delimited)`);
    this.once(f, field);
    return f.value;
  }

  /** An enum given by its names in number order (the first, 0, is the default and never encoded). */
  enumName<T extends string>(f: ProtoField, field: string, names: readonly T[]): T {
    const n = this.varint(f, field);
    const name = n < BigInt(names.length) ? names[Number(n)] : undefined;
    if (name === undefined) throw malformed(this.name(field), `${n} is not one of ${names.join(', ')}`);
    return name;
  }

  /** A singular bool: true is 1 (false, the default, is never encoded; protobuf-java writes 1). */
  bool(f: ProtoField, field: string): true {
    if (this.varint(f, field) !== 1n) throw malformed(this.name(field), 'a bool must be encoded as 1');
    return true;
  }

  /** A singular string: UTF-8 (protobuf-java refuses anything else). */
  string(f: ProtoField, field: string): string {
    const b = this.bytes(f, field);
    try {
      return STRICT_UTF8.decode(b);
    } catch {
      throw malformed(this.name(field), 'is not UTF-8');
    }
  }

  address(f: ProtoField, field: string): Uint8Array {
    const b = this.bytes(f, field);
    if (b.length !== TRON_ADDRESS_LENGTH || b[0] !== TRON_ADDRESS_PREFIX) {
      throw malformed(
        this.name(field),
        `must be a 21-byte address starting with 0x41, got ${b.length} bytes`,
      );
    }
    return b;
  }

  has(field: number): boolean {
    return this.seen.has(field);
  }
}

/** Decodes `Transaction.raw`. `bytes` must stay unchanged while the result is in use (views). */
export function decodeRawData(bytes: Uint8Array): TronTransaction {
  if (bytes.length === 0) throw malformed('raw_data', 'is empty');
  const r = new MessageReader('');
  let refBlockBytes = EMPTY;
  let refBlockNum = 0n;
  let refBlockHash = EMPTY;
  let expiration = 0n;
  const auths: Uint8Array[] = [];
  let data: Uint8Array = EMPTY;
  const contract: TronContract[] = [];
  let scripts = EMPTY;
  let timestamp = 0n;
  let feeLimit = 0n;
  for (const f of decodeFields(bytes, 'raw_data')) {
    switch (f.field) {
      case 1:
        refBlockBytes = r.bytes(f, 'ref_block_bytes');
        break;
      case 3:
        refBlockNum = r.int64(f, 'ref_block_num');
        break;
      case 4:
        refBlockHash = r.bytes(f, 'ref_block_hash');
        break;
      case 8:
        expiration = r.int64(f, 'expiration');
        break;
      case 9:
        auths.push(r.bytes(f, `auths[${auths.length}]`, true));
        break;
      case 10:
        data = r.bytes(f, 'data');
        break;
      case 11:
        contract.push(decodeContract(r.bytes(f, `contract[${contract.length}]`, true), contract.length));
        break;
      case 12:
        scripts = r.bytes(f, 'scripts');
        break;
      case 14:
        timestamp = r.int64(f, 'timestamp');
        break;
      case 18:
        feeLimit = r.int64(f, 'fee_limit');
        break;
      default:
        r.unknown.push(f);
    }
  }
  if (refBlockBytes.length !== 2)
    throw malformed('ref_block_bytes', `must be 2 bytes, got ${refBlockBytes.length}`);
  if (refBlockHash.length !== 8)
    throw malformed('ref_block_hash', `must be 8 bytes, got ${refBlockHash.length}`);
  if (expiration === 0n) throw malformed('expiration', 'is required');
  // java-tron rejects any other count (ContractSizeNotEqualToOneException).
  if (contract.length !== 1)
    throw malformed('contract', `must hold exactly one contract, got ${contract.length}`);
  return {
    rawData: bytes,
    refBlockBytes,
    refBlockNum,
    refBlockHash,
    expiration,
    auths,
    data,
    contract,
    scripts,
    timestamp,
    feeLimit,
    unknownFields: r.unknown,
  };
}

function decodeContract(bytes: Uint8Array, index: number): TronContract {
  const path = `contract[${index}]`;
  const r = new MessageReader(path);
  let typeNumber = 0;
  let any: Uint8Array | undefined;
  let provider = EMPTY;
  let contractName = EMPTY;
  let permissionId = 0;
  for (const f of decodeFields(bytes, path)) {
    switch (f.field) {
      case 1:
        typeNumber = r.int32(f, 'type');
        break;
      case 2:
        any = r.message(f, 'parameter');
        break;
      case 3:
        provider = r.bytes(f, 'provider');
        break;
      case 4:
        contractName = r.bytes(f, 'ContractName');
        break;
      case 5:
        permissionId = r.int32(f, 'Permission_id');
        break;
      default:
        r.unknown.push(f);
    }
  }
  const type = TYPE_BY_NUMBER.get(typeNumber);
  if (type === undefined) {
    throw malformed(
      `${path}.type`,
      `contract type ${typeNumber} is not supported`,
      OWNERLESS_CONTRACT_TYPES.has(typeNumber)
        ? 'TRON_UNSUPPORTED_CONTRACT_TYPE'
        : 'TRON_MALFORMED_TRANSACTION',
    );
  }
  if (any === undefined) throw malformed(`${path}.parameter`, 'is required');
  const a = new MessageReader(`${path}.parameter`);
  let typeUrl: Uint8Array | undefined;
  let value = EMPTY;
  for (const f of decodeFields(any, `${path}.parameter`)) {
    if (f.field === 1) typeUrl = a.bytes(f, 'type_url');
    else if (f.field === 2) value = a.bytes(f, 'value');
    else a.unknown.push(f);
  }
  const expectedUrl = `${TYPE_URL_PREFIX}${type.name}`;
  if (typeUrl === undefined || !equalBytes(typeUrl, utf8(expectedUrl))) {
    throw malformed(`${path}.parameter.type_url`, `must be ${expectedUrl} for a ${type.name}`);
  }
  return {
    type,
    typeUrl: expectedUrl,
    value,
    parameter: decodeParameter(type, value, `${path}.parameter.value`),
    provider,
    contractName,
    permissionId,
    parameterUnknownFields: a.unknown,
    unknownFields: r.unknown,
  };
}

function decodeParameter(type: TronContractTypeInfo, value: Uint8Array, path: string): TronContractParameter {
  const r = new MessageReader(path);
  const fields = decodeFields(value, path);
  if (type.name === 'TransferContract') {
    let owner: Uint8Array | undefined;
    let to: Uint8Array | undefined;
    let amount = 0n;
    for (const f of fields) {
      if (f.field === 1) owner = r.address(f, 'owner_address');
      else if (f.field === 2) to = r.address(f, 'to_address');
      else if (f.field === 3) amount = r.int64(f, 'amount');
    }
    if (owner === undefined) throw malformed(`${path}.owner_address`, 'is required');
    if (to === undefined) throw malformed(`${path}.to_address`, 'is required');
    return { type: type.name, ownerAddress: owner, toAddress: to, amount };
  }
  if (type.name === 'TriggerSmartContract') {
    let owner: Uint8Array | undefined;
    let contractAddress: Uint8Array | undefined;
    let callValue = 0n;
    let data: Uint8Array = EMPTY;
    let callTokenValue = 0n;
    let tokenId = 0n;
    for (const f of fields) {
      if (f.field === 1) owner = r.address(f, 'owner_address');
      else if (f.field === 2) contractAddress = r.address(f, 'contract_address');
      else if (f.field === 3) callValue = r.int64(f, 'call_value');
      else if (f.field === 4) data = r.bytes(f, 'data');
      else if (f.field === 5) callTokenValue = r.int64(f, 'call_token_value');
      else if (f.field === 6) tokenId = r.int64(f, 'token_id');
    }
    if (owner === undefined) throw malformed(`${path}.owner_address`, 'is required');
    if (contractAddress === undefined) throw malformed(`${path}.contract_address`, 'is required');
    return {
      type: type.name,
      ownerAddress: owner,
      contractAddress,
      callValue,
      data,
      callTokenValue,
      tokenId,
    };
  }
  if (type.name === 'FreezeBalanceV2Contract' || type.name === 'UnfreezeBalanceV2Contract') {
    // { owner_address = 1; frozen_balance | unfreeze_balance = 2; resource = 3 }
    let owner: Uint8Array | undefined;
    let amount = 0n;
    let resource: TronResource = 'BANDWIDTH';
    const amountName = type.name === 'FreezeBalanceV2Contract' ? 'frozen_balance' : 'unfreeze_balance';
    for (const f of fields) {
      if (f.field === 1) owner = r.address(f, 'owner_address');
      else if (f.field === 2) amount = r.int64(f, amountName);
      else if (f.field === 3) resource = r.enumName(f, 'resource', TRON_RESOURCES);
    }
    if (owner === undefined) throw malformed(`${path}.owner_address`, 'is required');
    return type.name === 'FreezeBalanceV2Contract'
      ? { type: type.name, ownerAddress: owner, frozenBalance: amount, resource }
      : { type: type.name, ownerAddress: owner, unfreezeBalance: amount, resource };
  }
  if (type.name === 'DelegateResourceContract' || type.name === 'UnDelegateResourceContract') {
    // { owner_address = 1; resource = 2; balance = 3; receiver_address = 4; lock = 5; lock_period = 6 }
    const delegate = type.name === 'DelegateResourceContract';
    let owner: Uint8Array | undefined;
    let receiver: Uint8Array | undefined;
    let resource: TronResource = 'BANDWIDTH';
    let balance = 0n;
    let lock = false;
    let lockPeriod = 0n;
    for (const f of fields) {
      if (f.field === 1) owner = r.address(f, 'owner_address');
      else if (f.field === 2) resource = r.enumName(f, 'resource', TRON_RESOURCES);
      else if (f.field === 3) balance = r.int64(f, 'balance');
      else if (f.field === 4) receiver = r.address(f, 'receiver_address');
      else if (f.field === 5 && delegate) lock = r.bool(f, 'lock');
      else if (f.field === 6 && delegate) lockPeriod = r.int64(f, 'lock_period');
    }
    if (owner === undefined) throw malformed(`${path}.owner_address`, 'is required');
    if (receiver === undefined) throw malformed(`${path}.receiver_address`, 'is required');
    return {
      type: type.name,
      ownerAddress: owner,
      resource,
      balance,
      receiverAddress: receiver,
      lock,
      lockPeriod,
    };
  }
  if (type.name === 'AccountPermissionUpdateContract') {
    // { owner_address = 1; Permission owner = 2; Permission witness = 3; repeated Permission actives = 4 }
    let owner: Uint8Array | undefined;
    let ownerPermission: TronPermission | undefined;
    let witness: TronPermission | undefined;
    const actives: TronPermission[] = [];
    for (const f of fields) {
      if (f.field === 1) owner = r.address(f, 'owner_address');
      else if (f.field === 2) ownerPermission = decodePermission(r.message(f, 'owner'), `${path}.owner`);
      else if (f.field === 3) witness = decodePermission(r.message(f, 'witness'), `${path}.witness`);
      else if (f.field === 4) {
        const at = `actives[${actives.length}]`;
        actives.push(decodePermission(r.bytes(f, at, true), `${path}.${at}`));
      }
    }
    if (owner === undefined) throw malformed(`${path}.owner_address`, 'is required');
    return {
      type: type.name,
      ownerAddress: owner,
      owner: ownerPermission,
      witness,
      actives,
    };
  }
  let owner: Uint8Array | undefined;
  for (const f of fields) {
    if (f.field === type.ownerField) owner = r.address(f, 'owner_address');
  }
  if (owner === undefined) throw malformed(`${path}.owner_address`, 'is required');
  return { type: 'opaque', ownerAddress: owner };
}

/**
 * `Permission { type = 1; id = 2; permission_name = 3; threshold = 4; parent_id = 5; operations = 6;
 * repeated Key keys = 7 }`, `Key { address = 1; weight = 2 }` (Tron.proto).
 */
function decodePermission(bytes: Uint8Array, path: string): TronPermission {
  const r = new MessageReader(path);
  let type: TronPermissionType = 'Owner';
  let id = 0;
  let permissionName = '';
  let threshold = 0n;
  let parentId = 0;
  let operations = EMPTY;
  const keys: { address: Uint8Array; weight: bigint }[] = [];
  for (const f of decodeFields(bytes, path)) {
    if (f.field === 1) type = r.enumName(f, 'type', TRON_PERMISSION_TYPES);
    else if (f.field === 2) id = r.int32(f, 'id');
    else if (f.field === 3) permissionName = r.string(f, 'permission_name');
    else if (f.field === 4) threshold = r.int64(f, 'threshold');
    else if (f.field === 5) parentId = r.int32(f, 'parent_id');
    else if (f.field === 6) operations = r.bytes(f, 'operations');
    else if (f.field === 7) {
      const at = `keys[${keys.length}]`;
      const k = new MessageReader(`${path}.${at}`);
      let address: Uint8Array | undefined;
      let weight = 0n;
      for (const kf of decodeFields(r.bytes(f, at, true), `${path}.${at}`)) {
        if (kf.field === 1) address = k.address(kf, 'address');
        else if (kf.field === 2) weight = k.int64(kf, 'weight');
      }
      if (address === undefined) throw malformed(`${path}.${at}.address`, 'is required');
      keys.push({ address, weight });
    }
  }
  return { type, id, permissionName, threshold, parentId, operations, keys };
}

/** Known fields first, then the unknown ones merged in by field number (a stable sort keeps repeats in order). */
function merge(known: ProtoField[], unknown: readonly ProtoField[]): ProtoField[] {
  if (unknown.length === 0) return known;
  return [...known, ...unknown].sort((a, b) => a.field - b.field);
}

function bytesField(out: ProtoField[], field: number, value: Uint8Array): void {
  if (value.length > 0) out.push({ field, wireType: 2, value });
}

function varintField(out: ProtoField[], field: number, value: bigint): void {
  if (value !== 0n) out.push({ field, wireType: 0, value });
}

/** Encodes a contract's `Any` and the contract; proto3 defaults are omitted, as protobuf-java does. */
function encodeContract(c: TronContract): Uint8Array {
  const any: ProtoField[] = [];
  bytesField(any, 1, utf8(c.typeUrl));
  bytesField(any, 2, c.value);
  const out: ProtoField[] = [];
  varintField(out, 1, BigInt(c.type.number));
  out.push({ field: 2, wireType: 2, value: encodeFields(merge(any, c.parameterUnknownFields)) });
  bytesField(out, 3, c.provider);
  bytesField(out, 4, c.contractName);
  varintField(out, 5, BigInt(c.permissionId));
  return encodeFields(merge(out, c.unknownFields));
}

/** Encodes `Transaction.raw` from the model; for a parsed transaction this reproduces its bytes. */
export function encodeRawData(tx: TronTransactionBody): Uint8Array {
  const out: ProtoField[] = [];
  bytesField(out, 1, tx.refBlockBytes);
  varintField(out, 3, tx.refBlockNum);
  bytesField(out, 4, tx.refBlockHash);
  varintField(out, 8, tx.expiration);
  for (const a of tx.auths) out.push({ field: 9, wireType: 2, value: a });
  bytesField(out, 10, tx.data);
  for (const c of tx.contract) out.push({ field: 11, wireType: 2, value: encodeContract(c) });
  bytesField(out, 12, tx.scripts);
  varintField(out, 14, tx.timestamp);
  varintField(out, 18, tx.feeLimit);
  return encodeFields(merge(out, tx.unknownFields));
}

/** `TransferContract { owner_address = 1; to_address = 2; amount = 3 }`. */
export function encodeTransferContract(owner: Uint8Array, to: Uint8Array, amount: bigint): Uint8Array {
  const out: ProtoField[] = [];
  bytesField(out, 1, owner);
  bytesField(out, 2, to);
  varintField(out, 3, amount);
  return encodeFields(out);
}

/** `TriggerSmartContract { owner_address = 1; contract_address = 2; call_value = 3; data = 4; … }`. */
export function encodeTriggerSmartContract(
  owner: Uint8Array,
  contractAddress: Uint8Array,
  data: Uint8Array,
): Uint8Array {
  const out: ProtoField[] = [];
  bytesField(out, 1, owner);
  bytesField(out, 2, contractAddress);
  bytesField(out, 4, data);
  return encodeFields(out);
}
