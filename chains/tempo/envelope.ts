/**
 * The one place that knows the Tempo envelope's field order (ox `TxEnvelopeTempo`, docs.tempo.xyz
 * "Tempo Transaction" spec):
 *   0x76 ‖ rlp([chainId, maxPriorityFeePerGas, maxFeePerGas, gas, calls, accessList, nonceKey,
 *               nonce, validBefore, validAfter, feeToken, feePayerSlot, authorizationList,
 *               keyAuthorization?, signature?])
 * It decodes for both parsers, builds the item lists for the serializer, the digests and the
 * assembler, and holds the checks the byte parser and the gRPC field mapper share.
 */
import { CountersignError, isCountersignError } from '../../src/shared/errors.js';
import { decodeRlp, decodeUint, uintToBytes, type RlpInput, type RlpItem } from '../ethereum/rlp.js';
import {
  FEE_PAYER_MAGIC,
  TEMPO_TX_TYPE,
  U128_MAX,
  U64_MAX,
  type TempoAccessListItem,
  type TempoCall,
  type TempoSignature,
  type TempoTransaction,
} from './types.js';

const PREFIX = 'failed to pre-parse Tempo transaction: ';
const EMPTY = new Uint8Array(0);
/** Fee payer slot marker: the sender signs for a fee payer that has not signed yet. */
const FEE_PAYER_MARKER = Uint8Array.of(0x00);
const U256_MAX = (1n << 256n) - 1n;

/**
 * The error every Tempo byte parser throws; the message prefix and `meta.transactionField` (the
 * proto field name of the part that is wrong) are the stable contract.
 */
export function malformed(field: string, reason: string, cause?: unknown): CountersignError {
  return new CountersignError('TEMPO_MALFORMED_TRANSACTION', `${PREFIX}${field}: ${reason}`, {
    meta: { transactionField: field },
    cause,
  });
}

/** Well-formed but outside what countersign signs (access keys, delegation, non-secp256k1 signatures). */
function unsupported(field: string, reason: string): CountersignError {
  return new CountersignError('TEMPO_UNSUPPORTED_FEATURE', `${PREFIX}${field}: ${reason} is not supported`, {
    meta: { transactionField: field, unsupported: true },
  });
}

function signedError(): CountersignError {
  return new CountersignError(
    'TEMPO_MALFORMED_TRANSACTION',
    `${PREFIX}signature: the transaction already carries a signature; send the unsigned serialization`,
    { meta: { transactionField: 'signature' } },
  );
}

const ETH_PREFIX = 'failed to pre-parse Ethereum transaction: ';

/** The shared RLP codec reports Ethereum's code; re-tag its errors as Tempo ones, same field and reason. */
function retagged<T>(run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (!isCountersignError(e) || e.code !== 'ETHEREUM_MALFORMED_TRANSACTION') throw e;
    const f = e.meta?.['transactionField'];
    const field = typeof f === 'string' ? f : 'rlp';
    let reason = e.message.startsWith(ETH_PREFIX) ? e.message.slice(ETH_PREFIX.length) : e.message;
    if (reason.startsWith(`${field}: `)) reason = reason.slice(field.length + 2);
    throw malformed(field, reason, e);
  }
}

export interface DecodedEnvelope {
  readonly tx: TempoTransaction;
  /** r and s 32 bytes each. */
  readonly senderSignature: TempoSignature | undefined;
  readonly feePayerSignature: TempoSignature | undefined;
}

/**
 * Which forms a caller takes: only the unsigned serialization, only a sender-signed envelope, or
 * either (the field count decides: 13 unsigned, 14 signed).
 */
export type EnvelopeForm = 'unsigned' | 'signed' | 'either';

/** Decodes a 0x76 envelope of the given form; any other form is rejected. */
export function decodeEnvelope(bytes: Uint8Array, form: EnvelopeForm): DecodedEnvelope {
  const first = bytes[0];
  if (first === undefined) throw malformed('transaction', 'is empty');
  if (first !== TEMPO_TX_TYPE) {
    const hex = `0x${first.toString(16).padStart(2, '0')}`;
    let reason: string;
    if (first === FEE_PAYER_MAGIC) {
      reason = 'type 0x78 is the fee payer signing preimage, not a transaction';
    } else if (first <= 0x04 || first >= 0xc0) {
      reason = `type ${hex} is an Ethereum transaction, not a Tempo one; use the ethereum adapter`;
    } else {
      reason = `transaction type ${hex} is not supported (supported: 0x76)`;
    }
    throw new CountersignError('TRANSACTION_TYPE_UNSUPPORTED', `${PREFIX}${reason}`, {
      meta: { transactionType: hex },
    });
  }
  return retagged(() => decodeBody(bytes.subarray(1), form));
}

function decodeBody(payload: Uint8Array, form: EnvelopeForm): DecodedEnvelope {
  const f = decodeRlp(payload);
  if (f instanceof Uint8Array) throw malformed('transaction', 'payload is not an RLP list');
  if (f.length < 13 || f.length > 15) {
    const expected = { unsigned: '13', signed: '14', either: '13 or 14' }[form];
    throw malformed('transaction', `has ${f.length} fields; expected ${expected}`);
  }
  // A 14th list item (or a 15th field) is a key authorization, which provisions an access key.
  if (f.length === 15 || (f.length === 14 && !(f[13] instanceof Uint8Array))) {
    throw unsupported('key_authorization', 'provisioning an access key (key_authorization)');
  }
  if (f.length === 14 && form === 'unsigned') throw signedError();
  if (f.length === 13 && form === 'signed') throw malformed('signature', 'the transaction is not signed');
  const signed = f.length === 14;

  const calls = decodeList(f[4], 'calls').map(decodeCall);
  const authorizations = decodeList(f[12], 'authorization_list');
  if (authorizations.length > 0) {
    throw unsupported('authorization_list', 'delegating the account (authorization_list)');
  }
  const feeToken = decodeOptionalAddress(f[10], 'fee_token');
  const slot = decodeFeePayerSlot(f[11], signed);
  if (slot.sponsored && slot.signature === undefined && feeToken !== null) {
    throw malformed(
      'fee_token',
      'must be empty next to the 0x00 fee payer marker: the sender does not commit to the fee token, the fee payer chooses it',
    );
  }
  const tx: TempoTransaction = {
    chainId: decodeUint(f[0], 'chain_id', 8),
    maxPriorityFeePerGas: decodeUint(f[1], 'max_priority_fee_per_gas', 16),
    maxFeePerGas: decodeUint(f[2], 'max_fee_per_gas', 16),
    gasLimit: decodeUint(f[3], 'gas_limit', 8),
    calls,
    accessList: decodeAccessList(f[5]),
    nonceKey: decodeUint(f[6], 'nonce_key', 32),
    nonce: decodeUint(f[7], 'nonce', 8),
    validBefore: decodeOptionalUint(f[8], 'valid_before'),
    validAfter: decodeOptionalUint(f[9], 'valid_after'),
    feeToken,
    sponsored: slot.sponsored,
  };
  checkTransaction(tx, malformed);
  return {
    tx,
    senderSignature: signed ? decodeSenderSignature(f[13]) : undefined,
    feePayerSignature: slot.signature,
  };
}

function decodeBytes(item: RlpItem | undefined, field: string): Uint8Array {
  if (!(item instanceof Uint8Array)) throw malformed(field, 'expected a byte string, got a list');
  return item;
}

function decodeFixed(item: RlpItem | undefined, field: string, size: number): Uint8Array {
  const b = decodeBytes(item, field);
  if (b.length !== size) throw malformed(field, `must be ${size} bytes, got ${b.length}`);
  return b.slice();
}

function decodeOptionalAddress(item: RlpItem | undefined, field: string): Uint8Array | null {
  const b = decodeBytes(item, field);
  if (b.length === 0) return null;
  if (b.length !== 20) throw malformed(field, `must be empty or 20 bytes, got ${b.length}`);
  return b.slice();
}

/** An absent bound is the empty string; 0 cannot be written canonically (0x00 is not an RLP integer). */
function decodeOptionalUint(item: RlpItem | undefined, field: string): bigint | null {
  if (item instanceof Uint8Array && item.length === 0) return null;
  return decodeUint(item, field, 8);
}

function decodeList(item: RlpItem | undefined, field: string): readonly RlpItem[] {
  if (item === undefined || item instanceof Uint8Array) throw malformed(field, 'expected a list');
  return item;
}

function decodeCall(item: RlpItem, i: number): TempoCall {
  const field = `calls[${i}]`;
  const c = decodeList(item, field);
  if (c.length !== 3) throw malformed(field, `has ${c.length} fields; expected [to, value, data]`);
  return {
    to: decodeOptionalAddress(c[0], `${field}.to`),
    value: decodeUint(c[1], `${field}.value`, 32),
    data: decodeBytes(c[2], `${field}.data`).slice(),
  };
}

function decodeAccessList(item: RlpItem | undefined): TempoAccessListItem[] {
  return decodeList(item, 'access_list').map((entry, i) => {
    const e = decodeList(entry, `access_list[${i}]`);
    if (e.length !== 2) {
      throw malformed(`access_list[${i}]`, `has ${e.length} fields; expected [address, storageKeys]`);
    }
    return {
      address: decodeFixed(e[0], `access_list[${i}].address`, 20),
      storageKeys: decodeList(e[1], `access_list[${i}].storage_keys`).map((k, j) =>
        decodeFixed(k, `access_list[${i}].storage_keys[${j}]`, 32),
      ),
    };
  });
}

function decodeFeePayerSlot(
  item: RlpItem | undefined,
  signed: boolean,
): { sponsored: boolean; signature: TempoSignature | undefined } {
  const field = 'fee_payer_signature';
  if (item instanceof Uint8Array) {
    if (item.length === 0) return { sponsored: false, signature: undefined };
    if (item.length === 1 && item[0] === 0) return { sponsored: true, signature: undefined };
    if (item.length === 20) {
      throw malformed(
        field,
        'holds a sender address, which belongs in the 0x78 fee payer preimage, not in a transaction',
      );
    }
    throw malformed(field, 'must be empty, the 0x00 marker or [yParity, r, s]');
  }
  if (item === undefined) throw malformed(field, 'is missing');
  if (!signed) {
    throw malformed(
      field,
      'an unsigned transaction carries no fee payer signature; send the sender preimage with the 0x00 marker',
    );
  }
  if (item.length !== 3) throw malformed(field, `has ${item.length} fields; expected [yParity, r, s]`);
  const yParity = decodeUint(item[0], `${field}.y_parity`, 1);
  if (yParity > 1n) throw malformed(`${field}.y_parity`, 'must be 0 or 1');
  return {
    sponsored: true,
    signature: {
      yParity: Number(yParity),
      r: fixed32(decodeUint(item[1], `${field}.r`, 32)),
      s: fixed32(decodeUint(item[2], `${field}.s`, 32)),
    },
  };
}

/** Type bytes of the other signature envelopes (ox `SignatureEnvelope`); only secp256k1 is signed here. */
const ENVELOPE_TYPES: Readonly<Record<number, string>> = {
  0x01: 'a P-256 signature envelope',
  0x02: 'a WebAuthn signature envelope',
  0x03: 'a keychain (access key) signature envelope',
  0x04: 'a keychain v2 (access key) signature envelope',
  0x05: 'a configurable-account signature envelope',
};

/** secp256k1 is the bare 65 bytes r ‖ s ‖ v, without a type byte; v is 27/28 (ox), 0/1 accepted. */
function decodeSenderSignature(item: RlpItem | undefined): TempoSignature {
  const b = decodeBytes(item, 'signature');
  if (b.length !== 65) {
    const kind = b[0] === undefined ? undefined : ENVELOPE_TYPES[b[0]];
    if (kind !== undefined) throw unsupported('signature', kind);
    throw malformed('signature', `has ${b.length} bytes; a secp256k1 signature has 65`);
  }
  const v = b[64] as number;
  let yParity: number;
  if (v === 27 || v === 28) yParity = v - 27;
  else if (v === 0 || v === 1) yParity = v;
  else throw malformed('signature', `v is ${v}; expected 27 or 28`);
  return { r: b.slice(0, 32), s: b.slice(32, 64), yParity };
}

function fixed32(value: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = value;
  for (let i = 31; i >= 0 && v > 0n; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

type Fail = (field: string, reason: string) => CountersignError;

/**
 * Validity rules beyond the byte layout, shared by the byte parser, the serializer and the gRPC
 * field mapper so all accept exactly the same transactions. Field names are the proto's.
 */
export function checkTransaction(tx: TempoTransaction, fail: Fail): void {
  if (tx.chainId <= 0n || tx.chainId > U64_MAX) throw fail('chain_id', 'must be between 1 and 2^64 - 1');
  if (tx.maxFeePerGas < 0n || tx.maxFeePerGas > U128_MAX)
    throw fail('max_fee_per_gas', 'must fit in 128 bits');
  if (tx.maxPriorityFeePerGas < 0n || tx.maxPriorityFeePerGas > U128_MAX) {
    throw fail('max_priority_fee_per_gas', 'must fit in 128 bits');
  }
  if (tx.maxPriorityFeePerGas > tx.maxFeePerGas) {
    throw fail('max_priority_fee_per_gas', 'must not exceed max_fee_per_gas');
  }
  if (tx.gasLimit < 0n || tx.gasLimit > U64_MAX) throw fail('gas_limit', 'must fit in 64 bits');
  if (tx.nonce < 0n || tx.nonce > U64_MAX) throw fail('nonce', 'must fit in 64 bits');
  if (tx.nonceKey < 0n || tx.nonceKey > U256_MAX) throw fail('nonce_key', 'must fit in 256 bits');
  if (tx.calls.length === 0) throw fail('calls', 'must hold at least one call');
  tx.calls.forEach((c, i) => {
    if (c.to !== null && c.to.length !== 20) throw fail(`calls[${i}].to`, 'must be 20 bytes');
    if (c.value < 0n || c.value > U256_MAX) throw fail(`calls[${i}].value`, 'must fit in 256 bits');
  });
  tx.accessList.forEach((e, i) => {
    if (e.address.length !== 20) throw fail(`access_list[${i}].address`, 'must be 20 bytes');
    e.storageKeys.forEach((k, j) => {
      if (k.length !== 32) throw fail(`access_list[${i}].storage_keys[${j}]`, 'must be 32 bytes');
    });
  });
  for (const [name, bound] of [
    ['valid_before', tx.validBefore],
    ['valid_after', tx.validAfter],
  ] as const) {
    if (bound !== null && (bound <= 0n || bound > U64_MAX)) {
      throw fail(name, 'must be between 1 and 2^64 - 1 unix seconds; leave it empty for no bound');
    }
  }
  if (tx.validBefore !== null && tx.validAfter !== null && tx.validBefore <= tx.validAfter) {
    throw fail('valid_before', `(${tx.validBefore}) must be greater than valid_after (${tx.validAfter})`);
  }
  if (tx.feeToken !== null && tx.feeToken.length !== 20) throw fail('fee_token', 'must be 20 bytes');
}

const u = uintToBytes;

/** The fee payer slot of the sender's preimage: the 0x00 marker when sponsored, else empty. */
export function senderSlot(tx: TempoTransaction): RlpInput {
  return tx.sponsored ? FEE_PAYER_MARKER : EMPTY;
}

/** The 13 transaction fields in wire order, with the given fee payer slot; `feeToken` only when asked. */
export function transactionItems(tx: TempoTransaction, slot: RlpInput, withFeeToken: boolean): RlpInput[] {
  return [
    u(tx.chainId),
    u(tx.maxPriorityFeePerGas),
    u(tx.maxFeePerGas),
    u(tx.gasLimit),
    tx.calls.map((c) => [c.to ?? EMPTY, u(c.value), c.data]),
    tx.accessList.map((e) => [e.address, e.storageKeys]),
    u(tx.nonceKey),
    u(tx.nonce),
    tx.validBefore === null ? EMPTY : u(tx.validBefore),
    tx.validAfter === null ? EMPTY : u(tx.validAfter),
    withFeeToken && tx.feeToken !== null ? tx.feeToken : EMPTY,
    slot,
    // authorization_list: always empty here (the parser refuses a non-empty one).
    [],
  ];
}
