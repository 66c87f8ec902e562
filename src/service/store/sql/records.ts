import { str, num, bytes, nstr, type Row } from '../conn.js';
import {
  type ActivityUpdate,
  type ActivityRecord,
  type ActivityStatus,
  type ApiKeyCurve,
  type ApiKeyRecord,
  type AuthenticatorRecord,
  type ImportTargetKind,
  type ImportTargetRecord,
  type OrganizationRecord,
  type PolicyEffectValue,
  type PolicyEvaluationRecord,
  type PolicyRecord,
  type SendKind,
  type SendTransactionRecord,
  type SendTransactionStatus,
  type ServiceKeyRecord,
  type UserRecord,
  type VoteRecord,
  type WalletAccountRecord,
  type WalletRecord,
  type WebhookDeliveryRecord,
  type WebhookDeliverySource,
  type WebhookDeliveryState,
  type WebhookEventType,
} from '../types.js';

/** Records to rows and back, shared by the store modules. */

/** The columns an activity is inserted with, in this order (activityValues gives the values). */
export const ACTIVITY_INSERT_COLUMNS =
  'id, organization_id, type, status, fingerprint, intent_key, intent_json, result_key, result_json, failure_json, timestamp_ms, created_at_ms, updated_at_ms, app_proofs_json';

export function activityValues(r: ActivityRecord): unknown[] {
  return [
    r.id,
    r.organizationId,
    r.type,
    r.status,
    r.fingerprint,
    r.intentKey,
    r.intentJson,
    r.resultKey,
    r.resultJson,
    r.failureJson,
    r.timestampMs,
    r.createdAtMs,
    r.updatedAtMs,
    r.appProofsJson ?? null,
  ];
}

/** An activity's update moves these columns, in this order (activityUpdateValues gives the values). */
export const ACTIVITY_UPDATE_SET =
  'status = ?, result_json = ?, failure_json = ?, updated_at_ms = ?, app_proofs_json = COALESCE(?, app_proofs_json), lease_owner = NULL, lease_expires_at_ms = NULL';

export function activityUpdateValues(u: ActivityUpdate): unknown[] {
  return [u.status, u.resultJson, u.failureJson, u.updatedAtMs, u.appProofsJson ?? null];
}

export const INSERT_VOTE_SQL =
  'INSERT INTO votes (id, activity_id, user_id, selection, message, public_key, signature, scheme, created_at_ms) VALUES (?,?,?,?,?,?,?,?,?)';

export function voteValues(v: VoteRecord): unknown[] {
  return [
    v.id,
    v.activityId,
    v.userId,
    v.selection,
    v.message,
    v.publicKey,
    v.signature,
    v.scheme,
    v.createdAtMs,
  ];
}
export function toOrg(r: Row): OrganizationRecord {
  return {
    id: str(r.id),
    name: str(r.name),
    parentId: nstr(r.parent_id),
    rootQuorumThreshold: num(r.root_quorum_threshold),
    createdAtMs: num(r.created_at_ms),
  };
}

export function toUser(r: Row): UserRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    email: nstr(r.email),
    phoneNumber: nstr(r.phone_number),
    isRoot: num(r.is_root) === 1,
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

export function toApiKey(r: Row): ApiKeyRecord {
  return {
    id: str(r.id),
    userId: str(r.user_id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    publicKey: str(r.public_key),
    curve: str(r.curve) as ApiKeyCurve,
    expiresAtMs: r.expires_at_ms === null ? null : num(r.expires_at_ms),
    createdAtMs: num(r.created_at_ms),
  };
}

export function toAuthenticator(r: Row): AuthenticatorRecord {
  return {
    id: str(r.id),
    userId: str(r.user_id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    credentialId: str(r.credential_id),
    publicKey: str(r.public_key),
    createdAtMs: num(r.created_at_ms),
  };
}

export function toWallet(r: Row): WalletRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    sealedMnemonic: bytes(r.sealed_mnemonic),
    exported: num(r.exported) === 1,
    imported: num(r.imported) === 1,
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

export function toAccount(r: Row): WalletAccountRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    walletId: str(r.wallet_id),
    curve: str(r.curve),
    pathFormat: 'PATH_FORMAT_BIP32',
    path: str(r.path),
    addressFormat: str(r.address_format),
    address: str(r.address),
    publicKey: str(r.public_key),
    sealedKey: bytes(r.sealed_key),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

export function toServiceKey(r: Row): ServiceKeyRecord {
  return {
    id: str(r.id),
    publicKey: str(r.public_key),
    sealedKey: bytes(r.sealed_key),
    createdAtMs: num(r.created_at_ms),
  };
}

export function toActivity(r: Row): ActivityRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    type: str(r.type),
    status: str(r.status) as ActivityStatus,
    fingerprint: str(r.fingerprint),
    intentKey: str(r.intent_key),
    intentJson: str(r.intent_json),
    resultKey: str(r.result_key),
    resultJson: nstr(r.result_json),
    failureJson: nstr(r.failure_json),
    timestampMs: str(r.timestamp_ms),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
    appProofsJson: nstr(r.app_proofs_json),
  };
}

export function toVote(r: Row): VoteRecord {
  return {
    id: str(r.id),
    activityId: str(r.activity_id),
    userId: str(r.user_id),
    selection: str(r.selection) as VoteRecord['selection'],
    message: str(r.message),
    publicKey: str(r.public_key),
    signature: str(r.signature),
    scheme: str(r.scheme),
    createdAtMs: num(r.created_at_ms),
  };
}

export function toPolicy(r: Row): PolicyRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    name: str(r.name),
    effect: str(r.effect) as PolicyEffectValue,
    condition: nstr(r.condition_src),
    consensus: nstr(r.consensus_src),
    time: nstr(r.time_src),
    notes: str(r.notes),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

export function toPolicyEvaluation(r: Row): PolicyEvaluationRecord {
  return {
    id: str(r.id),
    activityId: str(r.activity_id),
    organizationId: str(r.organization_id),
    voteId: nstr(r.vote_id),
    outcome: str(r.outcome),
    resultsJson: str(r.results_json),
    createdAtMs: num(r.created_at_ms),
  };
}

export function toSend(r: Row): SendTransactionRecord {
  return {
    id: str(r.id),
    kind: str(r.kind) as SendKind,
    accountAddress: nstr(r.account_address) ?? str(r.from_address),
    gasStationNonce:
      r.gas_station_nonce === null || r.gas_station_nonce === undefined
        ? null
        : BigInt(str(r.gas_station_nonce)),
    organizationId: str(r.organization_id),
    activityId: str(r.activity_id),
    caip2: str(r.caip2),
    fromAddress: str(r.from_address),
    nonce: BigInt(str(r.nonce)),
    signedTransaction: bytes(r.signed_transaction),
    txHash: str(r.tx_hash),
    status: str(r.status) as SendTransactionStatus,
    blockNumber: r.block_number === null || r.block_number === undefined ? null : BigInt(str(r.block_number)),
    errorMessage: nstr(r.error_message),
    revertChainJson: nstr(r.revert_chain_json),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}

export function toImportTarget(r: Row): ImportTargetRecord {
  return {
    id: str(r.id),
    organizationId: str(r.organization_id),
    userId: str(r.user_id),
    kind: str(r.kind) as ImportTargetKind,
    publicKey: str(r.public_key),
    sealedKey: r.sealed_key === null || r.sealed_key === undefined ? null : bytes(r.sealed_key),
    expiresAtMs: num(r.expires_at_ms),
    createdAtMs: num(r.created_at_ms),
    consumedAtMs: r.consumed_at_ms === null || r.consumed_at_ms === undefined ? null : num(r.consumed_at_ms),
    consumedEnc: nstr(r.consumed_enc),
  };
}

export const DELIVERY_COLUMNS = 'd.*, e.event_type AS event_type';

export function toWebhookDelivery(r: Row): WebhookDeliveryRecord {
  return {
    id: str(r.id),
    seq: num(r.seq),
    eventId: str(r.event_id),
    eventType: str(r.event_type) as WebhookEventType,
    lane: str(r.lane),
    source: str(r.source) as WebhookDeliverySource,
    endpointId: nstr(r.endpoint_id),
    ownerOrganizationId: str(r.owner_organization_id),
    url: str(r.url),
    state: str(r.state) as WebhookDeliveryState,
    attempts: num(r.attempts),
    nextAttemptAtMs: num(r.next_attempt_at_ms),
    leaseUntilMs: num(r.lease_until_ms),
    windowStartMs: num(r.window_start_ms),
    lastError: nstr(r.last_error),
    deliveredAtMs:
      r.delivered_at_ms === null || r.delivered_at_ms === undefined ? null : num(r.delivered_at_ms),
    createdAtMs: num(r.created_at_ms),
    updatedAtMs: num(r.updated_at_ms),
  };
}
