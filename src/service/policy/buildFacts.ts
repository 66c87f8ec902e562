import { activityKind, activityResourceAction } from './activityResourceAction.js';

/** `wallet` as a condition reads it. */
export interface WalletFacts {
  readonly id: string;
  readonly label: string;
  readonly imported: boolean;
  readonly exported: boolean;
}

/** `private_key` as a condition reads it. */
export interface PrivateKeyFacts {
  readonly id: string;
  readonly label: string;
  readonly tags: readonly string[];
  readonly imported: boolean;
  readonly exported: boolean;
}

export const TRANSACTION_CHAINS = ['eth', 'solana', 'tron', 'bitcoin', 'tempo'] as const;
export type TransactionChain = (typeof TRANSACTION_CHAINS)[number];

/** The transaction an activity signs, as its chain adapter's `describeTransaction` gave it. */
export interface TransactionFacts {
  readonly chain: TransactionChain;
  readonly tx: Readonly<Record<string, unknown>>;
}

export interface BuildFactsInput {
  /** The activity's versioned type and its (camelCase) intent parameters. */
  readonly activity: { readonly type: string; readonly parameters: Readonly<Record<string, unknown>> };
  /** The wallet signed with, if the signer is a wallet account. */
  readonly wallet?: WalletFacts | undefined;
  /** The wallets the activity touches (`wallets`). */
  readonly wallets?: readonly WalletFacts[] | undefined;
  /** The private key signed with, if the signer is a private key. */
  readonly privateKey?: PrivateKeyFacts | undefined;
  /** The wallet account signed with. */
  readonly walletAccount?: { readonly address: string } | undefined;
  readonly transaction?: TransactionFacts | undefined;
  /** `eth.eip_712` {primary_type, domain{name, version, chain_id, verifying_contract}, message}. */
  readonly eip712?: Readonly<Record<string, unknown>> | undefined;
  /** `eth.eip_7702_authorization` {address, chain_id, nonce}. */
  readonly eip7702Authorization?: Readonly<Record<string, unknown>> | undefined;
}

const SIGN_RAW: readonly (readonly [string, string])[] = [
  ['hash_function', 'hashFunction'],
  ['encoding', 'encoding'],
];
const EXPORT: readonly (readonly [string, string])[] = [['target_public_key', 'targetPublicKey']];
const SESSION: readonly (readonly [string, string])[] = [['session_profile_id', 'sessionProfileId']];
const WEBHOOK: readonly (readonly [string, string])[] = [['endpoint_id', 'endpointId']];

// activity.params of each kind (turnkey-api.md 8.3): fact name ← intent parameter name.
const PARAMS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  SIGN_RAW_PAYLOAD: SIGN_RAW,
  SIGN_RAW_PAYLOADS: SIGN_RAW,
  SIGN_TRANSACTION: [['type', 'type']],
  DELETE_USERS: [['user_ids', 'userIds']],
  CREATE_API_KEYS: [['user_id', 'userId']],
  DELETE_API_KEYS: [
    ['user_id', 'userId'],
    ['api_key_ids', 'apiKeyIds'],
  ],
  EXPORT_WALLET: EXPORT,
  EXPORT_WALLET_ACCOUNT: EXPORT,
  EXPORT_PRIVATE_KEY: EXPORT,
  UPDATE_WALLET: [['wallet_id', 'walletId']],
  INIT_OTP_AUTH: [['otp_length', 'otpLength']],
  OTP_LOGIN: SESSION,
  STAMP_LOGIN: SESSION,
  OAUTH_LOGIN: SESSION,
  UPDATE_WEBHOOK_ENDPOINT: WEBHOOK,
  DELETE_WEBHOOK_ENDPOINT: WEBHOOK,
};

/** A JSON intent value as a fact: integral numbers become ints, the rest is kept as it is. */
function paramFact(v: unknown): unknown {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (Array.isArray(v)) return v.map(paramFact);
  return v;
}

function activityParams(
  kind: string,
  parameters: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = Object.hasOwn(PARAMS, kind) ? PARAMS[kind] : undefined;
  for (const [fact, key] of fields ?? []) {
    const v = Object.hasOwn(parameters, key) ? parameters[key] : undefined;
    // Absent stays absent: reading it is a MissingField error, as 8.2 says.
    if (v !== undefined && v !== null) out[fact] = paramFact(v);
  }
  return out;
}

/**
 * The condition keywords of one request: `activity` {type, kind, resource, action, params}, the
 * signer's `wallet` / `private_key` / `wallet_account`, and `eth` / `solana` / `tron` / `bitcoin` /
 * `tempo` from the adapters' facts. Whatever does not apply is left out, so reading it errors.
 */
export function buildFacts(input: BuildFactsInput): Record<string, unknown> {
  const { type, parameters } = input.activity;
  const kind = activityKind(type);
  const activity: Record<string, unknown> = { type, kind, params: activityParams(kind, parameters) };
  const ra = activityResourceAction(type);
  if (ra !== undefined) {
    activity['resource'] = ra.resource;
    activity['action'] = ra.action;
  }
  const facts: Record<string, unknown> = { activity };
  if (input.wallet !== undefined) facts['wallet'] = { ...input.wallet };
  if (input.wallets !== undefined) facts['wallets'] = input.wallets.map((w) => ({ ...w }));
  if (input.privateKey !== undefined)
    facts['private_key'] = { ...input.privateKey, tags: [...input.privateKey.tags] };
  if (input.walletAccount !== undefined) facts['wallet_account'] = { address: input.walletAccount.address };

  const eth: Record<string, unknown> = {};
  if (input.eip712 !== undefined) eth['eip_712'] = input.eip712;
  if (input.eip7702Authorization !== undefined) eth['eip_7702_authorization'] = input.eip7702Authorization;
  const t = input.transaction;
  if (t !== undefined) {
    if (t.chain === 'eth') eth['tx'] = t.tx;
    else facts[t.chain] = { tx: t.tx };
  }
  if (Object.keys(eth).length > 0) facts['eth'] = eth;
  return facts;
}
