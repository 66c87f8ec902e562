/**
 * The one place that knows the field order of every envelope (EIP-155, EIP-2718, EIP-2930,
 * EIP-1559, EIP-4844, EIP-7702): decoding for the unsigned and signed parsers, the unsigned item
 * list for the serializer and the assembler, and the checks both the byte parser and the gRPC field
 * mapper apply.
 */
import { UINT64_MAX } from '../../src/shared/encoding.js';
import { CountersignError } from '../../src/shared/errors.js';
import { decodeRlp, decodeUint, malformed, uintToBytes, type RlpInput, type RlpItem } from './rlp.js';
import {
  MAX_TX_NONCE,
  VERSIONED_HASH_VERSION_KZG,
  type EthAccessListItem,
  type EthAuthorization,
  type EthTransaction,
  type EthTxType,
} from './types.js';

/** EIP-2718 type byte of each typed envelope. */
export const TYPE_BYTE = { eip2930: 0x01, eip1559: 0x02, eip4844: 0x03, eip7702: 0x04 } as const;

const TYPE_OF_BYTE: Readonly<Record<number, Exclude<EthTxType, 'legacy'>>> = {
  0x01: 'eip2930',
  0x02: 'eip1559',
  0x03: 'eip4844',
  0x04: 'eip7702',
};

/** Number of unsigned fields per typed envelope; the signed form appends yParity, r, s. */
const UNSIGNED_FIELDS = { eip2930: 8, eip1559: 9, eip4844: 11, eip7702: 10 } as const;

const LABEL: Record<EthTxType, string> = {
  legacy: 'legacy',
  eip2930: 'EIP-2930',
  eip1559: 'EIP-1559',
  eip4844: 'EIP-4844',
  eip7702: 'EIP-7702',
};

/** Raw signature slots of a signed envelope, still as RLP integers. */
export interface RawSignatureItems {
  /** legacy: v; typed: yParity (0/1). */
  readonly yParity: number;
  readonly r: bigint;
  readonly s: bigint;
}

export interface DecodedEnvelope {
  readonly tx: EthTransaction;
  readonly signature: RawSignatureItems | undefined;
}

function signedError(): CountersignError {
  return new CountersignError(
    'ETHEREUM_SIGNED_TRANSACTION',
    'the transaction already carries a signature; send the unsigned serialization',
  );
}

/** Decodes an envelope; `signed` says which form is expected, the other one is rejected. */
export function decodeEnvelope(bytes: Uint8Array, signed: boolean): DecodedEnvelope {
  const first = bytes[0];
  if (first === undefined) throw malformed('transaction', 'is empty');
  if (first >= 0xc0) return decodeLegacy(bytes, signed);
  if (first >= 0x80) {
    throw malformed(
      'transaction',
      'is an RLP string, neither a legacy transaction list nor a typed envelope',
    );
  }
  const type = TYPE_OF_BYTE[first];
  if (type === undefined) {
    const hex = `0x${first.toString(16).padStart(2, '0')}`;
    const reason =
      first === 0x76
        ? 'type 0x76 is a Tempo transaction, not an Ethereum one; use the tempo adapter'
        : `transaction type ${hex} is not supported (supported: legacy, 0x01, 0x02, 0x03, 0x04)`;
    throw new CountersignError('ETHEREUM_UNSUPPORTED_TRANSACTION_TYPE', reason, {
      meta: { transactionType: hex },
    });
  }
  const body = decodeRlp(bytes.subarray(1));
  if (body instanceof Uint8Array) throw malformed('transaction', `${LABEL[type]} payload is not an RLP list`);
  if (type === 'eip4844' && body.length > 0 && !(body[0] instanceof Uint8Array)) {
    throw malformed(
      'transaction',
      'EIP-4844 network wrapper (body, blobs, commitments, proofs) is not accepted; send the bare 0x03 body without sidecars',
    );
  }
  const n = UNSIGNED_FIELDS[type];
  if (body.length === n + 3) {
    if (!signed) throw signedError();
  } else if (body.length === n) {
    if (signed) throw malformed('signature', 'the transaction is not signed');
  } else {
    throw malformed(
      'transaction',
      `${LABEL[type]} payload has ${body.length} fields; expected ${signed ? n + 3 : n}`,
    );
  }
  const tx = decodeTypedFields(type, body);
  let signature: RawSignatureItems | undefined;
  if (signed) {
    const yParity = decodeUint(body[n], 'y_parity');
    if (yParity > 1n) throw malformed('y_parity', 'must be 0 or 1');
    signature = {
      yParity: Number(yParity),
      r: decodeUint(body[n + 1], 'r'),
      s: decodeUint(body[n + 2], 's'),
    };
  }
  checkTransaction(tx, malformed);
  return { tx, signature };
}

function decodeLegacy(bytes: Uint8Array, signed: boolean): DecodedEnvelope {
  const list = decodeRlp(bytes);
  if (list instanceof Uint8Array) throw malformed('transaction', 'is not an RLP list');
  if (list.length !== 6 && list.length !== 9) {
    throw malformed('transaction', `legacy transaction has ${list.length} fields; expected 6 or 9`);
  }
  const base = {
    type: 'legacy' as const,
    nonce: decodeUint(list[0], 'nonce', 8),
    gasPrice: decodeUint(list[1], 'gas_price'),
    gasLimit: decodeUint(list[2], 'gas_limit'),
    to: decodeTo(list[3]),
    value: decodeUint(list[4], 'value'),
    data: decodeBytes(list[5], 'data'),
    accessList: [],
  };
  let tx: EthTransaction;
  let signature: RawSignatureItems | undefined;
  if (list.length === 6) {
    if (signed) throw malformed('signature', 'the transaction is not signed');
    tx = { ...base, chainId: undefined };
  } else {
    const v = decodeUint(list[6], signed ? 'v' : 'chain_id');
    const r = decodeUint(list[7], 'r');
    const s = decodeUint(list[8], 's');
    const unsignedForm = r === 0n && s === 0n;
    if (!signed) {
      // EIP-155: the unsigned form carries [chainId, 0, 0] in the v, r, s slots.
      if (!unsignedForm) throw signedError();
      tx = { ...base, chainId: v };
    } else {
      if (unsignedForm) throw malformed('signature', 'the transaction is not signed (r and s are zero)');
      let chainId: bigint | undefined;
      let yParity: number;
      if (v === 27n || v === 28n) {
        chainId = undefined;
        yParity = Number(v - 27n);
      } else if (v >= 37n) {
        chainId = (v - 35n) >> 1n;
        yParity = Number((v - 35n) & 1n);
      } else {
        throw malformed('v', `${v} is neither 27/28 nor an EIP-155 value (chainId * 2 + 35/36)`);
      }
      tx = { ...base, chainId };
      signature = { yParity, r, s };
    }
  }
  checkTransaction(tx, malformed);
  return { tx, signature };
}

function decodeTypedFields(type: Exclude<EthTxType, 'legacy'>, f: readonly RlpItem[]): EthTransaction {
  const chainId = decodeUint(f[0], 'chain_id');
  const nonce = decodeUint(f[1], 'nonce', 8);
  if (type === 'eip2930') {
    return {
      type,
      chainId,
      nonce,
      gasPrice: decodeUint(f[2], 'gas_price'),
      gasLimit: decodeUint(f[3], 'gas_limit'),
      to: decodeTo(f[4]),
      value: decodeUint(f[5], 'value'),
      data: decodeBytes(f[6], 'data'),
      accessList: decodeAccessList(f[7]),
    };
  }
  const common = {
    chainId,
    nonce,
    maxPriorityFeePerGas: decodeUint(f[2], 'max_priority_fee_per_gas'),
    maxFeePerGas: decodeUint(f[3], 'max_fee_per_gas'),
    gasLimit: decodeUint(f[4], 'gas_limit'),
    to: decodeTo(f[5]),
    value: decodeUint(f[6], 'value'),
    data: decodeBytes(f[7], 'data'),
    accessList: decodeAccessList(f[8]),
  };
  switch (type) {
    case 'eip1559':
      return { type, ...common };
    case 'eip4844':
      return {
        type,
        ...common,
        maxFeePerBlobGas: decodeUint(f[9], 'max_fee_per_blob_gas'),
        blobVersionedHashes: decodeList(f[10], 'blob_versioned_hashes').map((h, i) =>
          decodeFixed(h, `blob_versioned_hashes[${i}]`, 32),
        ),
      };
    case 'eip7702':
      return { type, ...common, authorizationList: decodeAuthorizationList(f[9]) };
    default: {
      const never: never = type;
      throw new CountersignError('INTERNAL', `unhandled transaction type ${String(never)}`);
    }
  }
}

function decodeBytes(item: RlpItem | undefined, field: string): Uint8Array {
  if (!(item instanceof Uint8Array)) throw malformed(field, 'expected a byte string, got a list');
  return item.slice();
}

function decodeFixed(item: RlpItem | undefined, field: string, size: number): Uint8Array {
  const b = decodeBytes(item, field);
  if (b.length !== size) throw malformed(field, `must be ${size} bytes, got ${b.length}`);
  return b;
}

function decodeTo(item: RlpItem | undefined): Uint8Array | null {
  const b = decodeBytes(item, 'to');
  if (b.length === 0) return null;
  if (b.length !== 20) throw malformed('to', `must be empty or 20 bytes, got ${b.length}`);
  return b;
}

function decodeList(item: RlpItem | undefined, field: string): readonly RlpItem[] {
  if (item === undefined || item instanceof Uint8Array) throw malformed(field, 'expected a list');
  return item;
}

function decodeAccessList(item: RlpItem | undefined): EthAccessListItem[] {
  return decodeList(item, 'access_list').map((entry, i) => {
    const e = decodeList(entry, `access_list[${i}]`);
    if (e.length !== 2)
      throw malformed(`access_list[${i}]`, `has ${e.length} fields; expected [address, storageKeys]`);
    return {
      address: decodeFixed(e[0], `access_list[${i}].address`, 20),
      storageKeys: decodeList(e[1], `access_list[${i}].storage_keys`).map((k, j) =>
        decodeFixed(k, `access_list[${i}].storage_keys[${j}]`, 32),
      ),
    };
  });
}

function decodeAuthorizationList(item: RlpItem | undefined): EthAuthorization[] {
  return decodeList(item, 'authorization_list').map((entry, i) => {
    const f = `authorization_list[${i}]`;
    const a = decodeList(entry, f);
    if (a.length !== 6)
      throw malformed(f, `has ${a.length} fields; expected [chainId, address, nonce, yParity, r, s]`);
    return {
      chainId: decodeUint(a[0], `${f}.chain_id`),
      address: decodeFixed(a[1], `${f}.address`, 20),
      nonce: decodeUint(a[2], `${f}.nonce`, 8),
      // EIP-7702 bounds: y_parity < 2^8, r and s < 2^256.
      yParity: Number(decodeUint(a[3], `${f}.y_parity`, 1)),
      r: decodeUint(a[4], `${f}.r`),
      s: decodeUint(a[5], `${f}.s`),
    };
  });
}

type Fail = (field: string, reason: string) => CountersignError;

/**
 * Validity rules beyond the byte layout, shared by the byte parser and the gRPC field mapper so
 * both accept exactly the same transactions. Field names are the proto's (snake_case).
 */
export function checkTransaction(tx: EthTransaction, fail: Fail): void {
  if (tx.chainId !== undefined && tx.chainId === 0n) throw fail('chain_id', 'must be positive');
  if (tx.type !== 'legacy' && tx.chainId === undefined) throw fail('chain_id', 'is required');
  if (tx.nonce > MAX_TX_NONCE) throw fail('nonce', 'must be below 2^64 - 1 (EIP-2681)');
  // Every client keeps gas as a uint64: a wider limit never makes a valid transaction.
  if (tx.gasLimit > UINT64_MAX) throw fail('gas_limit', 'must fit in 64 bits');
  if (
    tx.maxFeePerGas !== undefined &&
    tx.maxPriorityFeePerGas !== undefined &&
    tx.maxPriorityFeePerGas > tx.maxFeePerGas
  ) {
    throw fail('max_priority_fee_per_gas', 'must not exceed max_fee_per_gas (EIP-1559)');
  }
  if (tx.type === 'eip4844') {
    if (tx.to === null) throw fail('to', 'is required for an EIP-4844 transaction (no contract creation)');
    const hashes = tx.blobVersionedHashes ?? [];
    if (hashes.length === 0) throw fail('blob_versioned_hashes', 'must name at least one blob (EIP-4844)');
    hashes.forEach((h, i) => {
      if (h[0] !== VERSIONED_HASH_VERSION_KZG) {
        throw fail(`blob_versioned_hashes[${i}]`, 'must start with the KZG version byte 0x01');
      }
    });
  }
  if (tx.type === 'eip7702') {
    if (tx.to === null) throw fail('to', 'is required for an EIP-7702 transaction (no contract creation)');
    if ((tx.authorizationList ?? []).length === 0) {
      throw fail('authorization_list', 'must hold at least one authorization (EIP-7702)');
    }
  }
}

const EMPTY = new Uint8Array(0);

function accessListItems(list: readonly EthAccessListItem[]): RlpInput[] {
  return list.map((e) => [e.address, e.storageKeys]);
}

/** The unsigned field list of `tx` in wire order (without the EIP-155 [chainId, 0, 0] tail). */
export function unsignedItems(tx: EthTransaction): RlpInput[] {
  const u = uintToBytes;
  const to = tx.to ?? EMPTY;
  switch (tx.type) {
    case 'legacy':
      return [u(tx.nonce), u(tx.gasPrice ?? 0n), u(tx.gasLimit), to, u(tx.value), tx.data];
    case 'eip2930':
      return [
        u(tx.chainId ?? 0n),
        u(tx.nonce),
        u(tx.gasPrice ?? 0n),
        u(tx.gasLimit),
        to,
        u(tx.value),
        tx.data,
        accessListItems(tx.accessList),
      ];
    case 'eip1559':
    case 'eip4844':
    case 'eip7702': {
      const items: RlpInput[] = [
        u(tx.chainId ?? 0n),
        u(tx.nonce),
        u(tx.maxPriorityFeePerGas ?? 0n),
        u(tx.maxFeePerGas ?? 0n),
        u(tx.gasLimit),
        to,
        u(tx.value),
        tx.data,
        accessListItems(tx.accessList),
      ];
      if (tx.type === 'eip4844') items.push(u(tx.maxFeePerBlobGas ?? 0n), tx.blobVersionedHashes ?? []);
      if (tx.type === 'eip7702') {
        items.push(
          (tx.authorizationList ?? []).map((a) => [
            u(a.chainId),
            a.address,
            u(a.nonce),
            u(BigInt(a.yParity)),
            u(a.r),
            u(a.s),
          ]),
        );
      }
      return items;
    }
    default: {
      const never: never = tx.type;
      throw new CountersignError('INTERNAL', `unhandled transaction type ${String(never)}`);
    }
  }
}
