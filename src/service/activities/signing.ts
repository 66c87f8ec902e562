/** sign_raw_payload (V2, V1), sign_raw_payloads, sign_transaction (V2, V1). */
import { createHash } from 'node:crypto';
import { keccak_256 } from '../../shared/keccak.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import { bytesTo0x, bytesToHex, hexToBytes, utf8, zeroize } from '../../shared/encoding.js';
import {
  hashAuthorization,
  hashTypedDataJson,
  parseAuthorizationJson,
  signedTypedDataJson,
} from '../../../chains/ethereum/index.js';
import {
  signEcdsaP256,
  signEcdsaSecp256k1,
  signEd25519,
  signSchnorrTaproot,
  type KeyVault,
  type SignatureOut,
} from '../keys/index.js';
import type { SigningKeyRecord } from '../store/types.js';
import { reqArray, reqEnum, reqString, stringArray, type Params } from './params.js';
import type { ActivityContext, ActivityDefinition, ActivityFacts, ActivityOutcome } from './types.js';
import { signerFacts, withContractCallFacts } from '../signing-facts.js';
import { bitcoinTransactions } from './chains/bitcoin.js';
import { ethereumTransactions } from './chains/ethereum.js';
import { solanaTransactions } from './chains/solana.js';
import { tempoTransactions } from './chains/tempo.js';
import { tronTransactions } from './chains/tron.js';
import type { TransactionChain, TransactionKey, TransactionRequest } from './chains/types.js';
import { intentActivity } from './intent.js';
import {
  HASH_FUNCTIONS,
  PAYLOAD_ENCODINGS,
  type HashFunction,
  type PayloadEncoding,
} from '../../shared/enums.js';

/** Payloads one sign_raw_payloads may carry (the gRPC SignRawPayloads cap is the same). */
export const MAX_PAYLOADS_PER_ACTIVITY = 100;

export { HASH_FUNCTIONS, PAYLOAD_ENCODINGS, type HashFunction, type PayloadEncoding };

export const TRANSACTION_TYPES = [
  'TRANSACTION_TYPE_ETHEREUM',
  'TRANSACTION_TYPE_SOLANA',
  'TRANSACTION_TYPE_TRON',
  'TRANSACTION_TYPE_BITCOIN',
  'TRANSACTION_TYPE_TEMPO',
] as const;

/** Finds the key behind `signWith` in the request's organization (never a parent's or a child's). */
export async function resolveSigner(
  ctx: ActivityContext,
  signWith: string,
  field: string,
): Promise<SigningKeyRecord> {
  const rec = await ctx.store.resolveSigningKey(ctx.organization.id, signWith);
  if (rec === undefined)
    throw new CountersignError(
      'SIGN_WITH_NOT_FOUND',
      `${field}: Could not find any resource to sign with (no private key or wallet account '${signWith}' in organization ${ctx.organization.id})`,
      { field },
    );
  return rec;
}

/** Opens the sealed key for the duration of `fn` and wipes it afterwards. */
export function withKey<T>(vault: KeyVault, rec: SigningKeyRecord, fn: (priv: Uint8Array) => T): T {
  const priv = vault.open(rec.sealedKey, rec.recordId);
  try {
    return fn(priv);
  } finally {
    zeroize(priv);
  }
}

interface PreparedPayload {
  /** ECDSA/Schnorr: 32-byte digest; ed25519: the message. */
  readonly bytes: Uint8Array;
}

/** Decodes a payload and applies the hash function under the rules of the public API. */
export function preparePayload(
  payload: string,
  encoding: PayloadEncoding,
  hashFunction: HashFunction,
  curve: string,
  field: string,
  hashField: string,
): PreparedPayload {
  const ed = curve === 'CURVE_ED25519';
  if (ed && hashFunction !== 'HASH_FUNCTION_NOT_APPLICABLE')
    throw new CountersignError(
      'HASH_FUNCTION_INVALID',
      `${hashField}: ed25519 keys sign the payload itself (RFC 8032); use HASH_FUNCTION_NOT_APPLICABLE`,
      { field: hashField },
    );
  if (!ed && hashFunction === 'HASH_FUNCTION_NOT_APPLICABLE')
    throw new CountersignError(
      'HASH_FUNCTION_INVALID',
      `${hashField}: HASH_FUNCTION_NOT_APPLICABLE is only for ed25519 keys; ${curve} signs a digest`,
      { field: hashField },
    );
  switch (encoding) {
    case 'PAYLOAD_ENCODING_EIP712':
    case 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION': {
      if (ed)
        throw new CountersignError(
          'PAYLOAD_INVALID',
          `${field}: ${encoding} needs a secp256k1 or P-256 key, not ed25519`,
          {
            field,
          },
        );
      // These encodings define their own digest; the NO_OP clients send is not applied on top.
      const bytes =
        encoding === 'PAYLOAD_ENCODING_EIP712'
          ? hashTypedDataJson(payload, field)
          : hashAuthorization(parseAuthorizationJson(payload, field));
      return { bytes };
    }
    case 'PAYLOAD_ENCODING_HEXADECIMAL':
    case 'PAYLOAD_ENCODING_TEXT_UTF8': {
      const raw = encoding === 'PAYLOAD_ENCODING_HEXADECIMAL' ? hexToBytes(payload, field) : utf8(payload);
      switch (hashFunction) {
        case 'HASH_FUNCTION_NOT_APPLICABLE':
          return { bytes: raw };
        case 'HASH_FUNCTION_NO_OP':
          if (raw.length !== 32)
            throw new CountersignError(
              'PAYLOAD_INVALID',
              `${field}: with HASH_FUNCTION_NO_OP the payload is the digest and must be exactly 32 bytes; got ${raw.length}`,
              { field },
            );
          return { bytes: raw };
        case 'HASH_FUNCTION_SHA256':
          return { bytes: new Uint8Array(createHash('sha256').update(raw).digest()) };
        case 'HASH_FUNCTION_KECCAK256':
          return { bytes: keccak_256(raw) };
      }
    }
  }
}

/** Signs prepared payloads with one key; P2TR addresses switch to BIP-340 over the tweaked key. */
export function signPrepared(
  vault: KeyVault,
  rec: SigningKeyRecord,
  payloads: readonly PreparedPayload[],
): SignatureOut[] {
  return withKey(vault, rec, (priv) =>
    payloads.map(({ bytes }) => {
      switch (rec.curve) {
        case 'CURVE_SECP256K1':
          return rec.addressFormat?.endsWith('_P2TR')
            ? signSchnorrTaproot(priv, bytes)
            : signEcdsaSecp256k1(priv, bytes);
        case 'CURVE_P256':
          return signEcdsaP256(priv, bytes);
        case 'CURVE_ED25519':
          return signEd25519(priv, bytes);
        default:
          throw new CountersignError('CURVE_UNSUPPORTED', `key curve ${rec.curve} cannot sign`);
      }
    }),
  );
}

/** The wire form of a signature: 64-char lower-case r and s, v "00"/"01". */
export function signatureJson(sig: SignatureOut): { r: string; s: string; v: string } {
  return { r: bytesToHex(sig.r), s: bytesToHex(sig.s), v: sig.v.toString(16).padStart(2, '0') };
}

/** A raw-payload signing request with its signer resolved (the rest is validated when it runs). */
interface RawIntent {
  readonly params: Params;
  readonly signWithKey: 'signWith' | 'privateKeyId';
  readonly signer: SigningKeyRecord;
}

async function parseRaw(
  ctx: ActivityContext,
  p: Params,
  signWithKey: 'signWith' | 'privateKeyId',
): Promise<RawIntent> {
  const signWith = reqString(p, signWithKey, 'parameters');
  return { params: p, signWithKey, signer: await resolveSigner(ctx, signWith, `parameters.${signWithKey}`) };
}

function signRaw(ctx: ActivityContext, intent: RawIntent, many: boolean): SignatureOut[] {
  const prefix = 'parameters';
  const { params: p, signer: rec } = intent;
  const encoding = reqEnum(p, 'encoding', prefix, PAYLOAD_ENCODINGS);
  const hashFunction = reqEnum(p, 'hashFunction', prefix, HASH_FUNCTIONS);
  const payloads = many
    ? stringArray(reqArray(p, 'payloads', prefix), `${prefix}.payloads`)
    : [reqString(p, 'payload', prefix)];
  if (many && payloads.length === 0) throw invalid(`${prefix}.payloads`, 'must hold at least one payload');
  // One activity stays one bounded unit of work and one bounded stored result.
  if (payloads.length > MAX_PAYLOADS_PER_ACTIVITY)
    throw new CountersignError(
      'FIELD_TOO_LONG',
      `${prefix}.payloads: at most ${MAX_PAYLOADS_PER_ACTIVITY} payloads per activity (split the batch)`,
      { field: `${prefix}.payloads` },
    );
  const prepared = payloads.map((payload, i) =>
    preparePayload(
      payload,
      encoding,
      hashFunction,
      rec.curve,
      many ? `${prefix}.payloads.${i}` : `${prefix}.payload`,
      `${prefix}.hashFunction`,
    ),
  );
  return signPrepared(ctx.vault, rec, prepared);
}

const TRANSACTION_CHAINS: Record<(typeof TRANSACTION_TYPES)[number], TransactionChain<unknown>> = {
  TRANSACTION_TYPE_ETHEREUM: ethereumTransactions as TransactionChain<unknown>,
  TRANSACTION_TYPE_SOLANA: solanaTransactions as TransactionChain<unknown>,
  TRANSACTION_TYPE_TRON: tronTransactions as TransactionChain<unknown>,
  TRANSACTION_TYPE_BITCOIN: bitcoinTransactions as TransactionChain<unknown>,
  TRANSACTION_TYPE_TEMPO: tempoTransactions as TransactionChain<unknown>,
};

/** The key as a chain's transaction signer sees it: its public key and a scheme-checked sign(). */
function transactionKey(vault: KeyVault, rec: SigningKeyRecord, signWithField: string): TransactionKey {
  const wrongCurve = (scheme: string) =>
    new CountersignError('CURVE_UNSUPPORTED', `${signWithField}: a ${rec.curve} key cannot sign ${scheme}`, {
      field: signWithField,
    });
  return {
    record: rec,
    publicKey: hexToBytes(rec.publicKey, signWithField),
    sign: (scheme, payload) =>
      withKey(vault, rec, (priv) => {
        switch (scheme) {
          case 'ECDSA_SECP256K1':
            if (rec.curve !== 'CURVE_SECP256K1') throw wrongCurve(scheme);
            return signEcdsaSecp256k1(priv, payload);
          case 'SCHNORR_BIP340':
            if (rec.curve !== 'CURVE_SECP256K1') throw wrongCurve(scheme);
            return signSchnorrTaproot(priv, payload);
          case 'ED25519':
            if (rec.curve !== 'CURVE_ED25519') throw wrongCurve(scheme);
            return signEd25519(priv, payload);
          case 'ECDSA_P256':
            if (rec.curve !== 'CURVE_P256') throw wrongCurve(scheme);
            return signEcdsaP256(priv, payload);
        }
      }),
  };
}

/** A sign_transaction request parsed once: the transaction its chain decoded and the signer. */
interface TransactionIntent {
  readonly chain: TransactionChain<unknown>;
  readonly request: TransactionRequest;
  readonly tx: unknown;
  readonly signer: SigningKeyRecord;
}

async function parseTransactionIntent(
  ctx: ActivityContext,
  p: Params,
  signWithKey: 'signWith' | 'privateKeyId',
): Promise<TransactionIntent> {
  const prefix = 'parameters';
  const signWith = reqString(p, signWithKey, prefix);
  const unsignedHex = reqString(p, 'unsignedTransaction', prefix);
  const type = reqEnum(p, 'type', prefix, TRANSACTION_TYPES);
  const unsignedField = `${prefix}.unsignedTransaction`;
  const signWithField = `${prefix}.${signWithKey}`;
  const signer = await resolveSigner(ctx, signWith, signWithField);
  const request = { unsigned: hexToBytes(unsignedHex, unsignedField), unsignedField, signWithField };
  const chain = TRANSACTION_CHAINS[type];
  return { chain, request, tx: chain.parse(request), signer };
}

function signTransaction(ctx: ActivityContext, intent: TransactionIntent) {
  const { chain, request, tx, signer } = intent;
  const signed = chain.sign(tx, request, transactionKey(ctx.vault, signer, request.signWithField));
  return { signedTransaction: bytesToHex(signed) };
}

/** Lower-cases 0x-hex strings inside EIP-712 values, as policies compare them (turnkey-api.md 6.1). */
function normalizeHex(v: unknown): unknown {
  if (typeof v === 'string') return /^0x[0-9a-fA-F]*$/.test(v) ? v.toLowerCase() : v;
  if (Array.isArray(v)) return v.map(normalizeHex);
  if (typeof v === 'object' && v !== null)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalizeHex(x)]));
  return v;
}

/**
 * `eth.eip_712.domain.chain_id`: 0 when the domain type does not declare chainId (nothing signed
 * says which chain). Declared as an integer type, the hash has checked it; declared as another
 * type, it must still read as a non-negative integer.
 */
function domainChainId(chainId: unknown, field: string): bigint {
  if (chainId === undefined) return 0n;
  if (typeof chainId === 'number' && Number.isSafeInteger(chainId) && chainId >= 0) return BigInt(chainId);
  if (typeof chainId === 'string' && /^(0|[1-9][0-9]*|0x[0-9a-fA-F]+)$/.test(chainId)) return BigInt(chainId);
  const f = `${field}.domain.chainId`;
  throw new CountersignError(
    'EIP712_INVALID',
    `${f}: must be a non-negative integer (a number, decimal string or 0x-hex string); EIP-712 makes chainId a uint256`,
    { field: f },
  );
}

/**
 * `eth.eip_712` facts of a typed-data payload, checked by hashing it as signing will: only what the
 * signature covers. A domain field or message member its types do not declare is left out, so a
 * policy never passes on a value the signature does not bind.
 */
export function eip712Facts(payload: string, field: string): Record<string, unknown> {
  const td = signedTypedDataJson(payload, field);
  const d = td.domain;
  return {
    primary_type: td.primaryType,
    domain: {
      name: d['name'] ?? '',
      version: d['version'] ?? '',
      chain_id: domainChainId(d['chainId'], field),
      verifying_contract:
        typeof d['verifyingContract'] === 'string' ? d['verifyingContract'].toLowerCase() : '',
    },
    message: normalizeHex(td.message ?? {}),
  };
}

/**
 * Policy facts of a raw-payload signing request: the key it names, and for a single EIP-712 or
 * EIP-7702 payload what it says (`eth.eip_712`, `eth.eip_7702_authorization`). With several
 * payloads those facts are absent, so a policy that reads them does not allow the request.
 */
async function rawFacts(ctx: ActivityContext, intent: RawIntent): Promise<ActivityFacts> {
  const p = intent.params;
  const signer = await signerFacts(ctx, intent.signer);
  const payloads = Array.isArray(p['payloads']) ? (p['payloads'] as unknown[]) : [p['payload']];
  const field = Array.isArray(p['payloads']) ? 'parameters.payloads.0' : 'parameters.payload';
  const [payload] = payloads;
  if (payloads.length !== 1 || typeof payload !== 'string') return signer;
  switch (p['encoding']) {
    case 'PAYLOAD_ENCODING_EIP712':
      return { ...signer, eip712: eip712Facts(payload, field) };
    case 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION': {
      const a = parseAuthorizationJson(payload, field);
      return {
        ...signer,
        eip7702Authorization: { address: bytesTo0x(a.address), chain_id: a.chainId, nonce: a.nonce },
      };
    }
    default:
      return signer;
  }
}

/** Policy facts of a sign_transaction request: the key, and the transaction its adapter parsed. */
async function transactionRequestFacts(
  ctx: ActivityContext,
  intent: TransactionIntent,
): Promise<ActivityFacts> {
  const { chain, request, tx, signer } = intent;
  const transaction = await withContractCallFacts(ctx, chain.facts(tx, signer, request));
  const facts = await signerFacts(ctx, signer);
  // signerFacts' object is ours: added to, not spread into a new one with a property its source
  // lacks, which costs this V8 a hidden class per call (see withOutcome in api/handler.ts).
  return transaction === undefined ? facts : Object.assign(facts, { transaction });
}

export const SIGNING_ACTIVITIES: readonly ActivityDefinition[] = [
  intentActivity({
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
    path: 'sign_raw_payload',
    intentKey: 'signRawPayloadIntentV2',
    resultKey: 'signRawPayloadResult',
    parse: (ctx, p) => parseRaw(ctx, p, 'signWith'),
    facts: rawFacts,
    run: async (ctx, intent): Promise<ActivityOutcome> => {
      const [sig] = signRaw(ctx, intent, false);
      return { result: signatureJson(sig as SignatureOut) };
    },
  }),
  intentActivity({
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD',
    path: 'sign_raw_payload',
    intentKey: 'signRawPayloadIntent',
    resultKey: 'signRawPayloadResult',
    parse: (ctx, p) => parseRaw(ctx, p, 'privateKeyId'),
    facts: rawFacts,
    run: async (ctx, intent): Promise<ActivityOutcome> => {
      const [sig] = signRaw(ctx, intent, false);
      return { result: signatureJson(sig as SignatureOut) };
    },
  }),
  intentActivity({
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
    path: 'sign_raw_payloads',
    intentKey: 'signRawPayloadsIntent',
    resultKey: 'signRawPayloadsResult',
    parse: (ctx, p) => parseRaw(ctx, p, 'signWith'),
    facts: rawFacts,
    run: async (ctx, intent): Promise<ActivityOutcome> => ({
      result: { signatures: signRaw(ctx, intent, true).map(signatureJson) },
    }),
  }),
  intentActivity({
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    path: 'sign_transaction',
    intentKey: 'signTransactionIntentV2',
    resultKey: 'signTransactionResult',
    parse: (ctx, p) => parseTransactionIntent(ctx, p, 'signWith'),
    facts: transactionRequestFacts,
    run: async (ctx, intent): Promise<ActivityOutcome> => ({ result: signTransaction(ctx, intent) }),
  }),
  intentActivity({
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION',
    path: 'sign_transaction',
    intentKey: 'signTransactionIntent',
    resultKey: 'signTransactionResult',
    parse: (ctx, p) => parseTransactionIntent(ctx, p, 'privateKeyId'),
    facts: transactionRequestFacts,
    run: async (ctx, intent): Promise<ActivityOutcome> => ({ result: signTransaction(ctx, intent) }),
  }),
];
