/**
 * Bitcoin's `sign_with` → its key, through the public API (the daemon holds no keys and no key
 * database), and the handles that make the public API sign raw payloads with each scheme.
 */
import { isUuid } from '../../shared/uuid.js';
import { isAddressOf, signerAddresses, type BitcoinNetwork } from '../../../chains/bitcoin/index.js';
import { equalBytes } from '../../shared/encoding.js';
import { CountersignError, isCountersignError } from '../../shared/errors.js';
import { convertPublicKey, isValidPublicKey } from '../../shared/secp256k1.js';
import type { DaemonContext } from '../context.js';

/**
 * The signWith that makes the public API sign with `scheme`: sign_with itself when it already does
 * (a private-key id or a non-P2TR address for ECDSA; a P2TR address for Schnorr); else the key's id or
 * one of its addresses (P2WPKH/P2PKH, or P2TR) that the public API knows.
 */
export async function signingHandle(
  ctx: DaemonContext,
  organizationId: string,
  signWith: string,
  key: BitcoinKey,
  network: BitcoinNetwork,
  scheme: 'ecdsa' | 'schnorr',
): Promise<string> {
  const signWithIsP2tr = key.signWithFormat?.endsWith('_P2TR') === true;
  if (scheme === 'ecdsa' && !signWithIsP2tr) return signWith;
  if (scheme === 'schnorr' && signWithIsP2tr) return signWith;
  if (scheme === 'ecdsa' && key.privateKeyId !== undefined) return key.privateKeyId;
  const cacheKey = `${scheme}\u0000${network}`;
  const cached = key.handles.get(cacheKey);
  if (cached !== undefined) return cached;
  const networks = [
    ...new Set([network, ...(key.signWithNetwork === undefined ? [] : [key.signWithNetwork])]),
  ];
  const candidates = networks.flatMap((n) => {
    const a = signerAddresses(key.publicKey, n);
    return scheme === 'ecdsa' ? [a.P2WPKH, a.P2PKH] : [a.P2TR];
  });
  for (const address of candidates) {
    const known = key.knownAddresses.has(address.toLowerCase())
      ? key.publicKey
      : (await findAddress(ctx, organizationId, address))?.publicKey;
    if (known !== undefined && equalBytes(known, key.publicKey)) {
      key.handles.set(cacheKey, address);
      return address;
    }
  }
  const need = scheme === 'ecdsa' ? 'P2WPKH or P2PKH address' : 'P2TR address';
  throw new CountersignError(
    'SIGN_WITH_NOT_FOUND',
    `sign_with: SIGN_RAW_PAYLOADS must sign the ${scheme === 'ecdsa' ? 'ECDSA' : 'BIP-340 Schnorr'} inputs ` +
      `with the key's ${need} (${candidates.join(' or ')}), and the public API knows no wallet account or ` +
      'private key with it; use SIGNING_MODE_SIGN_TRANSACTION, or add that address to the key',
    { field: 'sign_with' },
  );
}

export interface BitcoinKey {
  /** 33-byte compressed secp256k1 key. */
  readonly publicKey: Uint8Array;
  /** When sign_with is (or is an address of) a private key. */
  readonly privateKeyId: string | undefined;
  /** ADDRESS_FORMAT_* of sign_with when it is an address. */
  readonly signWithFormat: string | undefined;
  readonly signWithNetwork: BitcoinNetwork | undefined;
  /** Lower-cased addresses of this key the public API reported. */
  readonly knownAddresses: ReadonlySet<string>;
  /** Raw-mode handles found so far, by scheme and network. */
  readonly handles: Map<string, string>;
}

interface FoundKey {
  readonly publicKey: Uint8Array;
  readonly curve: string;
  readonly privateKeyId: string | undefined;
  readonly format: string | undefined;
  readonly addresses: readonly string[];
}

const CACHE_LIMIT = 10_000;
/** Per public API client (so per daemon), then per (organization, sign_with); keys never change. */
const KEY_CACHE = new WeakMap<object, Map<string, BitcoinKey>>();

const FORMAT_NETWORK: Record<string, BitcoinNetwork> = {
  MAINNET: 'mainnet',
  TESTNET: 'testnet',
  SIGNET: 'testnet', // signet uses testnet's address encodings
  REGTEST: 'regtest',
};

export function networkOfFormat(format: string | undefined): BitcoinNetwork | undefined {
  const m = /^ADDRESS_FORMAT_BITCOIN_([A-Z]+)_/.exec(format ?? '');
  return m === null ? undefined : FORMAT_NETWORK[m[1] as string];
}

export async function resolveBitcoinKey(
  ctx: DaemonContext,
  organizationId: string,
  signWith: string,
): Promise<BitcoinKey> {
  let cache = KEY_CACHE.get(ctx.client);
  if (cache === undefined) {
    cache = new Map();
    KEY_CACHE.set(ctx.client, cache);
  }
  const cacheKey = `${organizationId}\u0000${signWith}`;
  const cached = cache.get(cacheKey);
  if (cached !== undefined) return cached;

  const found = isUuid(signWith)
    ? await privateKeyById(ctx, organizationId, signWith)
    : await findAddress(ctx, organizationId, signWith);
  if (found === undefined) {
    throw new CountersignError(
      'SIGN_WITH_NOT_FOUND',
      `sign_with: no private key or wallet account '${signWith}' in organization ${organizationId}`,
      { field: 'sign_with' },
    );
  }
  if (found.curve !== 'CURVE_SECP256K1') {
    throw new CountersignError(
      'CURVE_UNSUPPORTED',
      `sign_with: Bitcoin transactions need a secp256k1 key; this one is ${found.curve}`,
      { field: 'sign_with' },
    );
  }
  const signWithNetwork = networkOfFormat(found.format);
  if (signWithNetwork !== undefined) {
    if (!isAddressOf(signWith, found.publicKey, signWithNetwork)) {
      throw new CountersignError(
        'UPSTREAM_ERROR',
        `the public key the public API reports for ${signWith} does not give that address`,
      );
    }
  }
  const key: BitcoinKey = {
    publicKey: found.publicKey,
    privateKeyId: found.privateKeyId,
    signWithFormat: found.format,
    signWithNetwork,
    knownAddresses: new Set(found.addresses.map((a) => a.toLowerCase())),
    handles: new Map(),
  };
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(cacheKey, key);
  return key;
}

interface AddressJson {
  format?: unknown;
  address?: unknown;
}
interface PrivateKeyJson {
  privateKeyId?: unknown;
  publicKey?: unknown;
  curve?: unknown;
  addresses?: AddressJson[];
}
interface AccountJson {
  publicKey?: unknown;
  curve?: unknown;
  address?: unknown;
  addressFormat?: unknown;
}

function isNotFound(e: unknown): boolean {
  return isCountersignError(e) && e.grpcStatus === 5;
}

function upstreamMalformed(what: string): CountersignError {
  return new CountersignError('UPSTREAM_ERROR', `public API result is malformed: ${what}`);
}

/** A reported secp256k1 public key (hex, compressed or not) as 33 compressed bytes. */
function compressedKey(value: unknown, curve: unknown, what: string): Uint8Array {
  if (curve !== 'CURVE_SECP256K1') return new Uint8Array(0);
  if (typeof value !== 'string' || !/^([0-9a-fA-F]{66}|[0-9a-fA-F]{130})$/.test(value)) {
    throw upstreamMalformed(`${what}.publicKey is not a secp256k1 public key`);
  }
  const bytes = Uint8Array.from(Buffer.from(value, 'hex'));
  if (!isValidPublicKey(bytes)) throw upstreamMalformed(`${what}.publicKey is not on secp256k1`);
  return bytes.length === 33 ? bytes : convertPublicKey(bytes, true);
}

function fromPrivateKey(k: PrivateKeyJson | undefined, what: string, format?: string): FoundKey {
  if (k === undefined || typeof k.curve !== 'string') throw upstreamMalformed(`${what} is missing`);
  const addresses = (k.addresses ?? []).flatMap((a) => (typeof a.address === 'string' ? [a.address] : []));
  return {
    publicKey: compressedKey(k.publicKey, k.curve, what),
    curve: k.curve,
    privateKeyId: typeof k.privateKeyId === 'string' ? k.privateKeyId : undefined,
    format,
    addresses,
  };
}

async function privateKeyById(
  ctx: DaemonContext,
  organizationId: string,
  privateKeyId: string,
): Promise<FoundKey | undefined> {
  try {
    const res = await ctx.client.query<{ privateKey?: PrivateKeyJson }>('get_private_key', {
      organizationId,
      privateKeyId,
    });
    return fromPrivateKey(res.privateKey, 'privateKey');
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** The key behind an address: a wallet account of any wallet, else a private key's address. */
async function findAddress(
  ctx: DaemonContext,
  organizationId: string,
  address: string,
): Promise<FoundKey | undefined> {
  const { wallets } = await ctx.client.query<{ wallets?: { walletId?: unknown }[] }>('list_wallets', {
    organizationId,
  });
  for (const w of wallets ?? []) {
    if (typeof w.walletId !== 'string') throw upstreamMalformed('wallets[].walletId is missing');
    let account: AccountJson | undefined;
    try {
      ({ account } = await ctx.client.query<{ account?: AccountJson }>('get_wallet_account', {
        organizationId,
        walletId: w.walletId,
        address,
      }));
    } catch (e) {
      if (isNotFound(e)) continue;
      throw e;
    }
    if (account === undefined || typeof account.curve !== 'string') {
      throw upstreamMalformed('account is missing');
    }
    return {
      publicKey: compressedKey(account.publicKey, account.curve, 'account'),
      curve: account.curve,
      privateKeyId: undefined,
      format: typeof account.addressFormat === 'string' ? account.addressFormat : undefined,
      addresses: typeof account.address === 'string' ? [account.address] : [],
    };
  }
  const { privateKeys } = await ctx.client.query<{ privateKeys?: PrivateKeyJson[] }>('list_private_keys', {
    organizationId,
  });
  const lc = address.toLowerCase();
  for (const k of privateKeys ?? []) {
    const match = (k.addresses ?? []).find(
      (a) => typeof a.address === 'string' && a.address.toLowerCase() === lc,
    );
    if (match !== undefined) {
      return fromPrivateKey(k, 'privateKeys[]', typeof match.format === 'string' ? match.format : undefined);
    }
  }
  return undefined;
}
