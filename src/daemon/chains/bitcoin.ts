/**
 * `Signer.SignTransaction` for Bitcoin: `bitcoin.unsigned` is a BIP-174 (v0) PSBT. The daemon parses it
 * strictly, plans the inputs of sign_with's key (whose public key it learns through the public API), has
 * them signed on the requested path, and answers only with a PSBT that chains/bitcoin verified against
 * the unsigned one and the key — or, with `finalize`, the network transaction extracted from it.
 */
import {
  applySignatures,
  assertFinalizable,
  fee,
  finalizeAndExtract,
  inRequest,
  parsePsbt,
  planSignatures,
  serializePsbt,
  signerAddresses,
  signingPlan,
  verifySignedPsbt,
  type BitcoinNetwork,
  type PlannedInput,
  type Psbt,
  type RequestFields,
  type SigningPlan,
} from '../../../chains/bitcoin/index.js';
import type { RawSignature } from '../../../chains/types.js';
import type { Activity } from '../../client/client.js';
import { bytesToHex, equalBytes } from '../../shared/encoding.js';
import { CountersignError, invalid, isCountersignError, missing } from '../../shared/errors.js';
import { convertPublicKey, isValidPublicKey } from '../../shared/secp256k1.js';
import { rawSignaturesOf, signedTransactionOf } from '../activity-result.js';
import type { CallContext, DaemonContext } from '../context.js';
import type { BitcoinTransactionMessage, SignTransactionRequest, SignTransactionResponse } from '../proto.js';
import { submitActivity } from '../submit-activity.js';
import { awaitingResponse, resolveMode, verifying } from './common.js';

const FIELDS: RequestFields = { unsignedField: 'bitcoin.unsigned', signWithField: 'sign_with' };

const NETWORKS = {
  BITCOIN_NETWORK_UNSPECIFIED: 'mainnet',
  BITCOIN_NETWORK_MAINNET: 'mainnet',
  BITCOIN_NETWORK_TESTNET: 'testnet',
  BITCOIN_NETWORK_REGTEST: 'regtest',
} as const satisfies Record<string, BitcoinNetwork>;

/** Handles one SignTransaction call whose transaction is `bitcoin`. */
export async function signBitcoinTransaction(
  ctx: DaemonContext,
  call: CallContext,
  req: SignTransactionRequest,
): Promise<SignTransactionResponse> {
  const organizationId = req.organizationId || ctx.defaultOrganizationId;
  if (req.signWith === '') throw missing('sign_with');
  const mode = resolveMode(req.mode);
  const { psbt, unsigned, network, finalize } = bitcoinInput(req);
  const key = await resolveBitcoinKey(ctx, organizationId, req.signWith);
  const plan = inRequest(FIELDS, () => signingPlan(psbt, { publicKey: key.publicKey }));
  inRequest(FIELDS, () => fee(psbt));
  if (finalize) inRequest(FIELDS, () => assertFinalizable(psbt, plan));
  const unsignedHex = bytesToHex(unsigned);
  const log = call.log.child({ mode, network, inputs: plan.inputs.map((p) => p.inputIndex) });

  const common = {
    organizationId,
    idempotencyKey: req.idempotencyKey,
    request: {
      organizationId,
      signWith: req.signWith,
      mode,
      chain: 'bitcoin',
      unsigned: unsignedHex,
      network,
      finalize,
    },
  };

  // Raw mode: every handle is found before anything is submitted, so a missing one leaves nothing signed.
  const groups =
    mode === 'SIGNING_MODE_SIGN_TRANSACTION'
      ? undefined
      : await rawGroups(ctx, organizationId, req.signWith, key, plan, network);
  const activities: Activity[] = [];
  if (groups === undefined) {
    activities.push(
      await submitActivity(
        ctx,
        { log },
        {
          ...common,
          method: 'SignTransaction',
          activityName: 'sign_transaction',
          activityType: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
          parameters: {
            signWith: req.signWith,
            unsignedTransaction: unsignedHex,
            type: 'TRANSACTION_TYPE_BITCOIN',
          },
        },
      ),
    );
  } else {
    for (const g of groups) {
      activities.push(
        await submitActivity(
          ctx,
          { log },
          {
            ...common,
            // One idempotency record per activity of the request.
            method: `SignTransaction:bitcoin:${g.scheme}`,
            activityName: 'sign_raw_payloads',
            activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
            parameters: {
              signWith: g.signWith,
              payloads: g.inputs.map((p) => bytesToHex(p.digest)),
              encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
              hashFunction: 'HASH_FUNCTION_NO_OP',
            },
          },
        ),
      );
    }
  }

  // Both raw activities are submitted before either is waited on, so approvers see them together.
  for (const a of activities) {
    const pending = awaitingResponse(a, mode, log);
    if (pending !== undefined) return pending;
  }
  const first = activities[0] as Activity;
  const signed =
    groups === undefined
      ? signedTransactionOf(first)
      : verifying(() =>
          serializePsbt(applySignatures(psbt, plan, collectRawSignatures(activities, groups, plan))),
        );
  // The one gate: the signed PSBT differs from `unsigned` only by verified signatures of this key.
  const verified = verifying(() => verifySignedPsbt(signed, unsigned, key.publicKey, network));
  const signedPsbt = verifying(() => parsePsbt(signed));
  const signatures = verifying(() => planSignatures(signedPsbt, plan));
  let out = signed;
  let txid = verified.hash;
  if (finalize) {
    const extracted = inRequest(FIELDS, () => finalizeAndExtract(signedPsbt));
    out = extracted.transaction;
    txid = extracted.txid;
  }
  const transactionHash = bytesToHex(txid);
  log.info({ activityId: first.id, transactionHash, finalize }, 'transaction signed and verified');
  return {
    signedTransaction: out,
    transactionHash,
    signatures: signatures.map((sig) => ({ r: sig.r, s: sig.s, v: sig.v })),
    signer: isAddressOf(req.signWith, key.publicKey, network) ? req.signWith : verified.signer,
    activityId: first.id,
    state: 'ACTIVITY_STATE_COMPLETED',
    fingerprint: first.fingerprint,
    mode,
  };
}

/** Whether `address` is the key's P2PKH, P2WPKH or P2TR address on `network` (bech32 is case-blind). */
function isAddressOf(address: string, publicKey: Uint8Array, network: BitcoinNetwork): boolean {
  const lc = address.toLowerCase();
  return Object.values(signerAddresses(publicKey, network)).some(
    (a) => a === address || a.toLowerCase() === lc,
  );
}

function bitcoinInput(req: SignTransactionRequest): {
  psbt: Psbt;
  unsigned: Uint8Array;
  network: BitcoinNetwork;
  finalize: boolean;
} {
  if (req.transaction !== 'bitcoin') {
    throw new CountersignError('FIELD_MISSING', 'transaction: one of bitcoin is required', {
      field: 'transaction',
    });
  }
  const b: BitcoinTransactionMessage | undefined = req.bitcoin;
  if (b === undefined) throw missing('bitcoin');
  if (b.unsigned.length === 0) throw missing('bitcoin.unsigned');
  if (!Object.hasOwn(NETWORKS, b.network)) {
    throw invalid('bitcoin.network', `unknown network ${b.network}`);
  }
  const network = NETWORKS[b.network as keyof typeof NETWORKS];
  const unsigned = new Uint8Array(b.unsigned);
  return { psbt: inRequest(FIELDS, () => parsePsbt(unsigned)), unsigned, network, finalize: b.finalize };
}

// ---------------------------------------------------------------------------------------------
// Raw-payload signing: the public API signs BIP-340 Schnorr (with the BIP-86 tweak) only when
// signWith is a P2TR address (reference 6.1), ECDSA otherwise; so each scheme needs its own handle.

interface RawGroup {
  readonly scheme: 'ecdsa' | 'schnorr';
  readonly signWith: string;
  readonly inputs: readonly PlannedInput[];
}

async function rawGroups(
  ctx: DaemonContext,
  organizationId: string,
  signWith: string,
  key: BitcoinKey,
  plan: SigningPlan,
  network: BitcoinNetwork,
): Promise<RawGroup[]> {
  const ecdsa = plan.inputs.filter((p) => p.scheme === 'ECDSA_SECP256K1');
  const schnorr = plan.inputs.filter((p) => p.scheme === 'SCHNORR_BIP340');
  const groups: RawGroup[] = [];
  if (ecdsa.length > 0) {
    const handle = await signingHandle(ctx, organizationId, signWith, key, network, 'ecdsa');
    groups.push({ scheme: 'ecdsa', signWith: handle, inputs: ecdsa });
  }
  if (schnorr.length > 0) {
    const handle = await signingHandle(ctx, organizationId, signWith, key, network, 'schnorr');
    groups.push({ scheme: 'schnorr', signWith: handle, inputs: schnorr });
  }
  return groups;
}

/** The raw signatures of each group's activity, put back in plan order. */
function collectRawSignatures(acts: Activity[], groups: RawGroup[], plan: SigningPlan): RawSignature[] {
  const byInput = new Map<number, RawSignature>();
  groups.forEach((g, k) => {
    const sigs = rawSignaturesOf(acts[k] as Activity, g.inputs.length);
    g.inputs.forEach((p, j) => byInput.set(p.inputIndex, sigs[j] as RawSignature));
  });
  return plan.inputs.map((p) => byInput.get(p.inputIndex) as RawSignature);
}

/**
 * The signWith that makes the public API sign with `scheme`: sign_with itself when it already does
 * (a private-key id or a non-P2TR address for ECDSA; a P2TR address for Schnorr); else the key's id or
 * one of its addresses (P2WPKH/P2PKH, or P2TR) that the public API knows.
 */
async function signingHandle(
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

// ---------------------------------------------------------------------------------------------
// sign_with → public key, through the public API (the daemon holds no keys and no key database).

interface BitcoinKey {
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

const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const CACHE_LIMIT = 10_000;
/** Per public API client (so per daemon), then per (organization, sign_with); keys never change. */
const KEY_CACHE = new WeakMap<object, Map<string, BitcoinKey>>();

const FORMAT_NETWORK: Record<string, BitcoinNetwork> = {
  MAINNET: 'mainnet',
  TESTNET: 'testnet',
  SIGNET: 'testnet', // signet uses testnet's address encodings
  REGTEST: 'regtest',
};

function networkOfFormat(format: string | undefined): BitcoinNetwork | undefined {
  const m = /^ADDRESS_FORMAT_BITCOIN_([A-Z]+)_/.exec(format ?? '');
  return m === null ? undefined : FORMAT_NETWORK[m[1] as string];
}

async function resolveBitcoinKey(
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

  const found = UUID_RE.test(signWith)
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
