/**
 * App proofs (turnkey-api.md 3; `generateAppProofs` in seed 2.1): for an activity that creates or
 * reveals key material or signs, one statement per thing derived, signed or exported, each signed by
 * the service's app-proof key in the shape of Turnkey's `v1AppProof` so that @turnkey/crypto's
 * `verifyAppProofSignature` checks it unmodified: scheme SIGNATURE_SCHEME_EPHEMERAL_KEY_P256,
 * `publicKey` = the encryption key ‖ the signing key (uncompressed P-256, 130 bytes), `proofPayload`
 * a JSON string, `signature` = r‖s hex of ECDSA P-256 over SHA-256(proofPayload).
 *
 * countersign runs in no enclave: what these proofs establish is that the holder of the published
 * app-proof key (the service) stated these facts at that time. `get_build_attestation` names the
 * build that holds the key, under the service signer key clients already pin.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { p256 } from '@noble/curves/nist.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8 } from '../shared/encoding.js';
import { CountersignError, invalid } from '../shared/errors.js';
import type { Params } from './activities/params.js';
import {
  SERVICE_APP_PROOF_ENCRYPT_KEY_ID,
  SERVICE_APP_PROOF_SIGN_KEY_ID,
  SERVICE_SIGNER_KEY_ID,
  withServiceKey,
  type KeyVault,
} from './keys/index.js';
import type { Store } from './store/types.js';

export const APP_PROOF_SCHEME = 'SIGNATURE_SCHEME_EPHEMERAL_KEY_P256';

export interface AppProof {
  readonly scheme: typeof APP_PROOF_SCHEME;
  readonly publicKey: string;
  readonly proofPayload: string;
  readonly signature: string;
}

/** What one proof states, beyond the activity it belongs to. */
type Claim = Readonly<Record<string, unknown>> & { readonly type: string };

const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
const obj = (v: unknown): Params => (v !== null && typeof v === 'object' ? (v as Params) : {});
const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const digest = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/**
 * Whether the request asks for proofs: the envelope's `generateAppProofs`, or the same flag inside
 * `parameters`, where @turnkey/sdk-server's methods put every input field but the organization and
 * timestamp. Absent is false; anything but a boolean is refused.
 */
export function appProofsRequested(body: Params): boolean {
  const check = (v: unknown, field: string): boolean => {
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') throw invalid(field, 'must be a boolean');
    return v;
  };
  const inParams = obj(body.parameters).generateAppProofs;
  return (
    check(body.generateAppProofs, 'generateAppProofs') || check(inParams, 'parameters.generateAppProofs')
  );
}

/** Wallet addresses, paired with the account specs they were derived from (same order). */
function walletAccountClaims(
  walletId: string,
  accounts: readonly unknown[],
  addresses: readonly unknown[],
): Claim[] {
  return addresses.map((address, i) => {
    const spec = obj(accounts[i]);
    return {
      type: 'APP_PROOF_TYPE_ADDRESS_DERIVATION',
      walletId,
      curve: text(spec.curve),
      path: text(spec.path),
      addressFormat: text(spec.addressFormat),
      address: text(address),
    };
  });
}

function signatureClaim(params: Params, signature: Params, payload: string): Claim {
  return {
    type: 'APP_PROOF_TYPE_SIGNATURE',
    signWith: text(params.signWith),
    payloadSha256: digest(payload),
    ...(params.hashFunction === undefined ? {} : { hashFunction: text(params.hashFunction) }),
    r: text(signature.r),
    s: text(signature.s),
    v: text(signature.v),
  };
}

function exportClaim(what: Params, bundle: unknown): Claim {
  return { type: 'APP_PROOF_TYPE_EXPORT', ...what, exportBundleSha256: digest(text(bundle)) };
}

/** The claims of a completed activity, read from its parameters and result; [] for any other type. */
export function appProofClaims(type: string, params: Params, result: Params): Claim[] {
  switch (type) {
    case 'ACTIVITY_TYPE_CREATE_WALLET':
    case 'ACTIVITY_TYPE_IMPORT_WALLET':
      return walletAccountClaims(text(result.walletId), list(params.accounts), list(result.addresses));
    case 'ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS':
      return walletAccountClaims(text(params.walletId), list(params.accounts), list(result.addresses));
    case 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8': {
      const wallet = obj(result.wallet);
      if (wallet.walletId === undefined) return [];
      return walletAccountClaims(
        text(wallet.walletId),
        list(obj(params.wallet).accounts),
        list(wallet.addresses),
      );
    }
    case 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2':
      return list(result.privateKeys).flatMap((k) =>
        list(obj(k).addresses).map((a) => ({
          type: 'APP_PROOF_TYPE_ADDRESS_DERIVATION',
          privateKeyId: text(obj(k).privateKeyId),
          addressFormat: text(obj(a).format),
          address: text(obj(a).address),
        })),
      );
    case 'ACTIVITY_TYPE_IMPORT_PRIVATE_KEY':
      return list(result.addresses).map((a) => ({
        type: 'APP_PROOF_TYPE_ADDRESS_DERIVATION',
        privateKeyId: text(result.privateKeyId),
        addressFormat: text(obj(a).format),
        address: text(obj(a).address),
      }));
    case 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD':
    case 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2':
      return [signatureClaim(params, result, text(params.payload))];
    case 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS': {
      const payloads = list(params.payloads);
      return list(result.signatures).map((sig, i) => signatureClaim(params, obj(sig), text(payloads[i])));
    }
    case 'ACTIVITY_TYPE_SIGN_TRANSACTION':
    case 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2':
      return [
        {
          type: 'APP_PROOF_TYPE_SIGNATURE',
          signWith: text(params.signWith),
          transactionType: text(params.type),
          unsignedTransactionSha256: digest(text(params.unsignedTransaction)),
          signedTransactionSha256: digest(text(result.signedTransaction)),
        },
      ];
    case 'ACTIVITY_TYPE_EXPORT_WALLET':
      return [exportClaim({ walletId: text(result.walletId) }, result.exportBundle)];
    case 'ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT':
      return [exportClaim({ address: text(result.address) }, result.exportBundle)];
    case 'ACTIVITY_TYPE_EXPORT_PRIVATE_KEY':
      return [exportClaim({ privateKeyId: text(result.privateKeyId) }, result.exportBundle)];
    default:
      return [];
  }
}

export interface AppProofContext {
  readonly store: Pick<Store, 'getServiceKey'>;
  readonly vault: KeyVault;
}

export interface ActivityIdentity {
  readonly activityId: string;
  readonly activityType: string;
  readonly organizationId: string;
  readonly nowMs: number;
}

async function serviceKey(store: Pick<Store, 'getServiceKey'>, id: string) {
  const k = await store.getServiceKey(id);
  if (k === undefined) throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', `the service has no key ${id}`);
  return k;
}

/** The app-proof public key as proofs carry it: encryption ‖ signing, uncompressed, hex. */
export async function appProofPublicKey(store: Pick<Store, 'getServiceKey'>): Promise<string> {
  const enc = await serviceKey(store, SERVICE_APP_PROOF_ENCRYPT_KEY_ID);
  const sign = await serviceKey(store, SERVICE_APP_PROOF_SIGN_KEY_ID);
  return enc.publicKey + sign.publicKey;
}

/** Signs one proof per claim; the key is opened once and zeroed after. */
export async function signAppProofs(
  ctx: AppProofContext,
  who: ActivityIdentity,
  claims: readonly Claim[],
): Promise<AppProof[]> {
  if (claims.length === 0) return [];
  const key = await serviceKey(ctx.store, SERVICE_APP_PROOF_SIGN_KEY_ID);
  const publicKey = (await serviceKey(ctx.store, SERVICE_APP_PROOF_ENCRYPT_KEY_ID)).publicKey + key.publicKey;
  const payloads = claims.map((c) =>
    JSON.stringify({
      ...c,
      organizationId: who.organizationId,
      activityId: who.activityId,
      activityType: who.activityType,
      timestampMs: String(who.nowMs),
    }),
  );
  return withServiceKey(ctx.vault, key, (secret) =>
    payloads.map((proofPayload) => ({
      scheme: APP_PROOF_SCHEME,
      publicKey,
      proofPayload,
      signature: bytesToHex(p256.sign(sha256(utf8(proofPayload)), secret, { prehash: false, lowS: true })),
    })),
  );
}

/** The proofs of a completed activity as stored JSON (`[]` when the type proves nothing). */
export async function appProofsJson(
  ctx: AppProofContext,
  who: ActivityIdentity,
  params: Params,
  result: Params,
): Promise<string> {
  return JSON.stringify(await signAppProofs(ctx, who, appProofClaims(who.activityType, params, result)));
}

// ---- the build statement ----

/** The package root: the nearest directory above this file with a package.json (src/ or dist/src/). */
const ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

/** The source commit: COUNTERSIGN_SOURCE_COMMIT (set by image builds), else the checkout's HEAD. */
function sourceCommit(): string {
  const fromEnv = process.env.COUNTERSIGN_SOURCE_COMMIT;
  if (fromEnv !== undefined && /^[0-9a-f]{7,64}$/i.test(fromEnv)) return fromEnv.toLowerCase();
  const head = readOr(join(ROOT, '.git', 'HEAD'), '').trim();
  const ref = /^ref: (refs\/[A-Za-z0-9._/-]+)$/.exec(head);
  const commit = ref === null ? head : readOr(join(ROOT, '.git', ref[1] as string), '').trim();
  return /^[0-9a-f]{40,64}$/.test(commit) ? commit : 'unknown';
}

let buildFacts: { version: string; sourceCommit: string; packageLockSha256: string } | undefined;

function build(): { version: string; sourceCommit: string; packageLockSha256: string } {
  if (buildFacts !== undefined) return buildFacts;
  const pkg = JSON.parse(readOr(join(ROOT, 'package.json'), '{}')) as { version?: unknown };
  const lock = readOr(join(ROOT, 'package-lock.json'), '');
  buildFacts = {
    version: typeof pkg.version === 'string' ? pkg.version : 'unknown',
    sourceCommit: sourceCommit(),
    packageLockSha256: lock === '' ? 'unknown' : digest(lock),
  };
  return buildFacts;
}

/**
 * A statement of the running build and the app-proof key it holds, signed (ECDSA P-256 over
 * SHA-256, r‖s hex) by the service signer key that clients pin from the discovery endpoint.
 */
export async function buildAttestation(ctx: AppProofContext, nowMs: number): Promise<Record<string, string>> {
  const statement = JSON.stringify({
    type: 'COUNTERSIGN_BUILD_STATEMENT',
    ...build(),
    appProofPublicKey: await appProofPublicKey(ctx.store),
    timestampMs: String(nowMs),
  });
  const signer = await serviceKey(ctx.store, SERVICE_SIGNER_KEY_ID);
  const signature = withServiceKey(ctx.vault, signer, (secret) =>
    bytesToHex(p256.sign(sha256(utf8(statement)), secret, { prehash: false, lowS: true })),
  );
  return { statement, signerPublicKey: signer.publicKey, signature };
}
