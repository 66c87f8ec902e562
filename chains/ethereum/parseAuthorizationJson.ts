import { UINT256_MAX, UINT64_MAX } from '../../src/shared/encoding.js';
import { CountersignError, invalid, isCountersignError } from '../../src/shared/errors.js';
import { parseAddress } from './parseAddress.js';

const DECIMAL_RE = /^(0|[1-9][0-9]*)$/;
const HEX_RE = /^0x[0-9a-fA-F]{1,64}$/;
const KEYS = new Set(['address', 'chainId', 'nonce']);

function bad(field: string, reason: string): CountersignError {
  return invalid(field, reason, 'PAYLOAD_INVALID');
}

function uint(value: unknown, field: string, max: bigint): bigint {
  let n: bigint;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw bad(field, 'must be a non-negative safe integer (send larger values as a decimal string)');
    }
    n = BigInt(value);
  } else if (typeof value === 'string' && (DECIMAL_RE.test(value) || HEX_RE.test(value))) {
    n = BigInt(value);
  } else if (value === undefined) {
    throw bad(field, 'is required');
  } else {
    throw bad(field, 'must be a number, a decimal string or a 0x-hex string');
  }
  if (n > max) throw bad(field, `must be at most ${max}`);
  return n;
}

/**
 * Parses the EIP-7702 authorization payload @turnkey/viem sends, `JSON.stringify({address,
 * chainId, nonce})`; numbers may be JSON numbers, decimal strings or 0x-hex strings.
 */
export function parseAuthorizationJson(
  json: string,
  field: string,
): { chainId: bigint; address: Uint8Array; nonce: bigint } {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw bad(field, 'is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw bad(field, 'must be a JSON object {address, chainId, nonce}');
  }
  for (const key of Object.keys(value)) {
    if (!KEYS.has(key))
      throw bad(`${field}.${key}`, 'is not an authorization field (address, chainId, nonce)');
  }
  const o = value as Record<string, unknown>;
  if (typeof o['address'] !== 'string') throw bad(`${field}.address`, 'is required as a 0x hex string');
  let address: Uint8Array;
  try {
    address = parseAddress(o['address'], `${field}.address`);
  } catch (e) {
    if (isCountersignError(e)) throw new CountersignError('PAYLOAD_INVALID', e.message, { field: e.field });
    throw e;
  }
  return {
    // EIP-7702: chain_id < 2^256 (0 = valid on every chain), nonce < 2^64.
    chainId: uint(o['chainId'], `${field}.chainId`, UINT256_MAX),
    address,
    nonce: uint(o['nonce'], `${field}.nonce`, UINT64_MAX),
  };
}
