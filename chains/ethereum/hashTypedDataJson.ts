/**
 * EIP-712 hashing of typed-data JSON `{types, primaryType, domain, message}` as @turnkey/viem sends
 * it (PAYLOAD_ENCODING_EIP712). The domain separator is computed from `types.EIP712Domain` exactly
 * as given; when the JSON has no `EIP712Domain` type but a domain with fields, the type is derived
 * from the fields present in the canonical order (name, version, chainId, verifyingContract, salt),
 * as viem's getTypesForEIP712Domain does. No domain and no type is refused: that is a domain lost on
 * the way (viem's serializeTypedData drops it when the type is absent), not a domain-less signature.
 * Keys of `domain`/`message` not declared in their type are ignored, as viem and eth-sig-util do.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { CountersignError, isCountersignError } from '../../src/shared/errors.js';
import { parseAddress } from './parseAddress.js';

interface Member {
  readonly name: string;
  readonly type: string;
}
type Types = ReadonlyMap<string, readonly Member[]>;

const IDENT_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const INT_RE = /^(u?)int([1-9][0-9]*)$/;
const BYTES_N_RE = /^bytes([1-9][0-9]?)$/;
const ARRAY_RE = /^(.+)\[([1-9][0-9]*)?\]$/;
const DECIMAL_RE = /^-?(0|[1-9][0-9]*)$/;
const HEX_RE = /^0x([0-9a-fA-F]{2})*$/;
const HEX_QUANTITY_RE = /^0x[0-9a-fA-F]+$/;
/** Bounds recursion on hostile input (struct/array nesting); real messages are a few levels deep. */
const MAX_DEPTH = 32;

function fail(path: string, reason: string): CountersignError {
  return new CountersignError('EIP712_INVALID', `${path}: ${reason}`, { field: path });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isAtomic(type: string): boolean {
  if (type === 'address' || type === 'bool' || type === 'string' || type === 'bytes') return true;
  const i = INT_RE.exec(type);
  if (i) {
    const bits = Number(i[2]);
    return bits % 8 === 0 && bits <= 256;
  }
  const b = BYTES_N_RE.exec(type);
  return b !== null && Number(b[1]) <= 32;
}

/** Strips array suffixes: `Person[2][]` → `Person`. */
function baseType(type: string): string {
  let t = type;
  for (let m = ARRAY_RE.exec(t); m; m = ARRAY_RE.exec(t)) t = m[1] as string;
  return t;
}

function parseTypes(raw: unknown, path: string): Types {
  if (!isObject(raw)) throw fail(path, 'must be an object of struct definitions');
  const types = new Map<string, Member[]>();
  for (const [name, members] of Object.entries(raw)) {
    const p = `${path}.${name}`;
    if (!IDENT_RE.test(name) || isAtomic(name)) throw fail(p, 'is not a valid struct type name');
    if (!Array.isArray(members)) throw fail(p, 'must be an array of {name, type}');
    const seen = new Set<string>();
    types.set(
      name,
      members.map((m: unknown, i) => {
        if (!isObject(m) || typeof m['name'] !== 'string' || typeof m['type'] !== 'string') {
          throw fail(`${p}[${i}]`, 'must be {name: string, type: string}');
        }
        if (!IDENT_RE.test(m['name'])) throw fail(`${p}[${i}].name`, 'is not a valid member name');
        if (seen.has(m['name'])) throw fail(`${p}[${i}].name`, `duplicates member '${m['name']}'`);
        seen.add(m['name']);
        return { name: m['name'], type: m['type'] };
      }),
    );
  }
  for (const [name, members] of types) {
    members.forEach((m, i) => {
      const base = baseType(m.type);
      if (!isAtomic(base) && !types.has(base)) {
        throw fail(
          `${path}.${name}[${i}].type`,
          `'${m.type}' is neither an EIP-712 atomic type nor a declared struct`,
        );
      }
    });
  }
  return types;
}

class Encoder {
  private readonly typeHashes = new Map<string, Uint8Array>();
  constructor(private readonly types: Types) {}

  /** encodeType: the primary type, then its referenced struct types sorted by name. */
  encodeType(primary: string): string {
    // Walked with a list, not recursion: a payload may chain thousands of struct types.
    const deps = new Set<string>();
    const pending = [primary];
    for (let t = pending.pop(); t !== undefined; t = pending.pop()) {
      for (const m of this.types.get(t) ?? []) {
        const base = baseType(m.type);
        if (this.types.has(base) && base !== primary && !deps.has(base)) {
          deps.add(base);
          pending.push(base);
        }
      }
    }
    return [primary, ...[...deps].sort()]
      .map((t) => `${t}(${(this.types.get(t) ?? []).map((m) => `${m.type} ${m.name}`).join(',')})`)
      .join('');
  }

  typeHash(type: string): Uint8Array {
    let h = this.typeHashes.get(type);
    if (h === undefined) {
      h = keccak_256(Buffer.from(this.encodeType(type), 'utf8'));
      this.typeHashes.set(type, h);
    }
    return h;
  }

  hashStruct(type: string, value: unknown, path: string, depth: number): Uint8Array {
    if (depth > MAX_DEPTH) throw fail(path, `nests deeper than ${MAX_DEPTH} levels`);
    if (!isObject(value)) throw fail(path, `must be an object of type ${type}`);
    const members = this.types.get(type) ?? [];
    const h = keccak_256.create().update(this.typeHash(type));
    for (const m of members) {
      const p = `${path}.${m.name}`;
      if (!Object.hasOwn(value, m.name)) throw fail(p, `is missing (declared as ${m.type} in ${type})`);
      h.update(this.encodeValue(m.type, value[m.name], p, depth + 1));
    }
    return h.digest();
  }

  /**
   * What a signature over `value` (already hashed as `type`) covers: the members `type` declares,
   * each projected the same way; members it does not declare are left out. Bounded by the hash's
   * own depth checks, which ran first.
   */
  signedPart(type: string, value: unknown): unknown {
    const arr = ARRAY_RE.exec(type);
    if (arr) return (value as unknown[]).map((v) => this.signedPart(arr[1] as string, v));
    const members = this.types.get(type);
    if (members === undefined) return value;
    const v = value as Record<string, unknown>;
    return Object.fromEntries(members.map((m) => [m.name, this.signedPart(m.type, v[m.name])]));
  }

  encodeValue(type: string, value: unknown, path: string, depth: number): Uint8Array {
    const arr = ARRAY_RE.exec(type);
    if (arr) {
      const elem = arr[1] as string;
      if (!Array.isArray(value)) throw fail(path, `must be an array (${type})`);
      if (arr[2] !== undefined && value.length !== Number(arr[2])) {
        throw fail(path, `must have exactly ${arr[2]} elements, got ${value.length}`);
      }
      if (depth > MAX_DEPTH) throw fail(path, `nests deeper than ${MAX_DEPTH} levels`);
      const h = keccak_256.create();
      value.forEach((v: unknown, i) => h.update(this.encodeValue(elem, v, `${path}[${i}]`, depth + 1)));
      return h.digest();
    }
    if (this.types.has(type)) return this.hashStruct(type, value, path, depth);
    return encodeAtomic(type, value, path);
  }
}

function encodeAtomic(type: string, value: unknown, path: string): Uint8Array {
  const out = new Uint8Array(32);
  switch (type) {
    case 'string':
      if (typeof value !== 'string') throw fail(path, 'must be a string');
      return keccak_256(Buffer.from(value, 'utf8'));
    case 'bytes':
      if (typeof value !== 'string' || !HEX_RE.test(value))
        throw fail(path, 'must be a 0x-prefixed hex string');
      return keccak_256(Buffer.from(value.slice(2), 'hex'));
    case 'bool':
      if (typeof value !== 'boolean') throw fail(path, 'must be true or false');
      out[31] = value ? 1 : 0;
      return out;
    case 'address': {
      if (typeof value !== 'string') throw fail(path, 'must be a 0x-prefixed 20-byte address string');
      try {
        out.set(parseAddress(value, path), 12);
      } catch (e) {
        if (isCountersignError(e)) throw fail(path, e.message.slice(path.length + 2));
        throw e;
      }
      return out;
    }
  }
  const b = BYTES_N_RE.exec(type);
  if (b) {
    const n = Number(b[1]);
    if (typeof value !== 'string' || !HEX_RE.test(value) || value.length !== 2 + 2 * n) {
      throw fail(path, `must be a 0x-prefixed hex string of exactly ${n} bytes`);
    }
    out.set(Buffer.from(value.slice(2), 'hex'), 0);
    return out;
  }
  const i = INT_RE.exec(type);
  if (i) {
    const signed = i[1] === '';
    const bits = BigInt(i[2] as string);
    const n = toInteger(value, path);
    const min = signed ? -(1n << (bits - 1n)) : 0n;
    const max = signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
    if (n < min || n > max) throw fail(path, `is out of range for ${type}`);
    // Two's complement over 256 bits for negative intN (EIP-712 encodes as the ABI does).
    const word = n < 0n ? (1n << 256n) + n : n;
    out.set(Buffer.from(word.toString(16).padStart(64, '0'), 'hex'));
    return out;
  }
  throw fail(path, `'${type}' is not an EIP-712 type`);
}

function toInteger(value: unknown, path: string): bigint {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw fail(path, 'must be a safe integer (send larger values as a decimal string)');
    }
    return BigInt(value);
  }
  if (typeof value === 'string' && (DECIMAL_RE.test(value) || HEX_QUANTITY_RE.test(value)))
    return BigInt(value);
  throw fail(path, 'must be an integer (number, decimal string or 0x-hex string)');
}

/** The EIP-712 domain fields in canonical order, each with its type and whether a value counts as present. */
const DOMAIN_FIELDS: readonly (Member & { readonly present: (v: unknown) => boolean })[] = [
  { name: 'name', type: 'string', present: (v) => typeof v === 'string' },
  { name: 'version', type: 'string', present: (v) => typeof v === 'string' && v !== '' },
  {
    name: 'chainId',
    type: 'uint256',
    present: (v) => typeof v === 'number' || (typeof v === 'string' && v !== ''),
  },
  { name: 'verifyingContract', type: 'address', present: (v) => typeof v === 'string' && v !== '' },
  { name: 'salt', type: 'bytes32', present: (v) => typeof v === 'string' && v !== '' },
];

/**
 * The `EIP712Domain` type of a domain sent without one: the canonical fields it has. An empty or
 * absent domain is refused with the cause and the fix; a field outside the canonical five is refused
 * (only a declared type may add one).
 */
function deriveDomainType(domain: unknown, field: string): Member[] {
  const d = domain ?? {};
  if (!isObject(d)) throw fail(`${field}.domain`, 'must be an object');
  for (const k of Object.keys(d))
    if (!DOMAIN_FIELDS.some((f) => f.name === k))
      throw fail(
        `${field}.domain.${k}`,
        'is not one of name, version, chainId, verifyingContract, salt; declare types.EIP712Domain to use it',
      );
  const members = DOMAIN_FIELDS.filter((f) => f.present(d[f.name])).map(({ name, type }) => ({ name, type }));
  if (members.length === 0)
    throw fail(
      `${field}.types.EIP712Domain`,
      'is missing and the domain is empty: the domain was most likely dropped before it reached us (viem’s serializeTypedData drops it when types has no EIP712Domain). Put EIP712Domain in types, or sign through a viem WalletClient, which adds it; to sign over an empty domain on purpose, send "EIP712Domain": []',
    );
  return members;
}

interface ParsedTypedData {
  readonly enc: Encoder;
  readonly domain: unknown;
  readonly primaryType: string;
  readonly message: unknown;
}

function parseTypedData(json: string, field: string): ParsedTypedData {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    throw fail(field, 'is not valid JSON');
  }
  if (!isObject(doc)) throw fail(field, 'must be a JSON object {types, primaryType, domain, message}');
  const types = parseTypes(doc['types'], `${field}.types`) as Map<string, readonly Member[]>;
  if (!types.has('EIP712Domain')) types.set('EIP712Domain', deriveDomainType(doc['domain'], field));
  const primaryType = doc['primaryType'];
  if (typeof primaryType !== 'string') throw fail(`${field}.primaryType`, 'must be a string');
  if (!types.has(primaryType))
    throw fail(`${field}.primaryType`, `'${primaryType}' is not declared in types`);
  return { enc: new Encoder(types), domain: doc['domain'], primaryType, message: doc['message'] };
}

/** hashStruct(EIP712Domain, domain) of typed-data JSON (exposed for the spec vector test). */
export function typedDataDomainSeparator(json: string, field: string): Uint8Array {
  const { enc, domain } = parseTypedData(json, field);
  return enc.hashStruct('EIP712Domain', domain, `${field}.domain`, 0);
}

/**
 * EIP-712 digest keccak256(0x1901 ‖ hashStruct(EIP712Domain, domain) ‖ hashStruct(primaryType,
 * message)) of typed-data JSON; `field` names the request field in errors (EIP712_INVALID).
 */
export function hashTypedDataJson(json: string, field: string): Uint8Array {
  return digestOf(parseTypedData(json, field), field);
}

function digestOf(td: ParsedTypedData, field: string): Uint8Array {
  const { enc, domain, primaryType, message } = td;
  const domainSeparator = enc.hashStruct('EIP712Domain', domain, `${field}.domain`, 0);
  const h = keccak_256
    .create()
    .update(new Uint8Array([0x19, 0x01]))
    .update(domainSeparator);
  // viem and eth-sig-util: a primaryType of EIP712Domain signs the domain alone.
  if (primaryType !== 'EIP712Domain') h.update(enc.hashStruct(primaryType, message, `${field}.message`, 0));
  return h.digest();
}

/** Typed data as a signature over it covers it: the digest, and the domain and message it signs. */
export interface SignedTypedData {
  readonly digest: Uint8Array;
  readonly primaryType: string;
  /** The domain's members its `EIP712Domain` type declares (given or derived), and no others. */
  readonly domain: Readonly<Record<string, unknown>>;
  /** The message's declared members, recursively; undefined when the primary type is EIP712Domain. */
  readonly message: Readonly<Record<string, unknown>> | undefined;
}

/** `hashTypedDataJson` with what the digest covers, for facts that must hold only signed values. */
export function signedTypedDataJson(json: string, field: string): SignedTypedData {
  const td = parseTypedData(json, field);
  const digest = digestOf(td, field);
  const { enc, primaryType } = td;
  return {
    digest,
    primaryType,
    domain: enc.signedPart('EIP712Domain', td.domain) as Record<string, unknown>,
    message:
      primaryType === 'EIP712Domain'
        ? undefined
        : (enc.signedPart(primaryType, td.message) as Record<string, unknown>),
  };
}
