/** The activity as the wire shows it, built from declared fields only (never a spread of a row). */
import type { ActivityRecord, ApiKeyRecord, UserRecord, VoteRecord } from '../store/types.js';

export interface Timestamp {
  seconds: string;
  nanos: string;
}

export function timestampOf(ms: number): Timestamp {
  return { seconds: String(Math.floor(ms / 1000)), nanos: String((ms % 1000) * 1_000_000) };
}

export function userJson(user: UserRecord, apiKeys: readonly ApiKeyRecord[]): Record<string, unknown> {
  return {
    userId: user.id,
    userName: user.name,
    ...(user.email === null ? {} : { userEmail: user.email }),
    ...(user.phoneNumber === null ? {} : { userPhoneNumber: user.phoneNumber }),
    authenticators: [],
    apiKeys: apiKeys.map((k) => ({
      credential: { publicKey: k.publicKey, type: credentialTypeOf(k) },
      apiKeyId: k.id,
      apiKeyName: k.name,
      createdAt: timestampOf(k.createdAtMs),
      updatedAt: timestampOf(k.createdAtMs),
      ...(k.expiresAtMs === null
        ? {}
        : { expirationSeconds: String(Math.floor((k.expiresAtMs - k.createdAtMs) / 1000)) }),
    })),
    userTags: [],
    oauthProviders: [],
    createdAt: timestampOf(user.createdAtMs),
    updatedAt: timestampOf(user.updatedAtMs),
  };
}

function credentialTypeOf(k: ApiKeyRecord): string {
  switch (k.curve) {
    case 'API_KEY_CURVE_P256':
      return 'CREDENTIAL_TYPE_API_KEY_P256';
    case 'API_KEY_CURVE_SECP256K1':
      return 'CREDENTIAL_TYPE_API_KEY_SECP256K1';
    case 'API_KEY_CURVE_ED25519':
      return 'CREDENTIAL_TYPE_API_KEY_ED25519';
  }
}

export interface VoteWithUser {
  readonly vote: VoteRecord;
  readonly user: Record<string, unknown>;
}

const voteOf = ({ vote, user }: VoteWithUser) => ({
  id: vote.id,
  userId: vote.userId,
  user,
  activityId: vote.activityId,
  selection: vote.selection,
  message: vote.message,
  publicKey: vote.publicKey,
  signature: vote.signature,
  scheme: vote.scheme,
  createdAt: timestampOf(vote.createdAtMs),
});

/** The fields every shape of an activity's answer opens with, in the wire's order. */
const identity = (a: ActivityRecord) => ({
  id: a.id,
  organizationId: a.organizationId,
  status: a.status,
  type: a.type,
});

/** `{activity: …}` with the seed's nested record also served at `activity.result.activity`. */
export function activityResponse(
  a: ActivityRecord,
  votes: readonly VoteWithUser[],
): { activity: Record<string, unknown> } {
  const intent = { [a.intentKey]: JSON.parse(a.intentJson) as unknown };
  const resultBody = a.resultJson === null ? undefined : (JSON.parse(a.resultJson) as unknown);
  const voteJson = votes.map(voteOf);
  const pending = a.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED';
  const result: Record<string, unknown> = resultBody === undefined ? {} : { [a.resultKey]: resultBody };
  const nested = {
    ...identity(a),
    intent,
    result: resultBody === undefined ? {} : { [a.resultKey]: resultBody },
    votes: voteJson,
    fingerprint: a.fingerprint,
    canApprove: pending,
    canReject: pending,
    createdAt: String(a.createdAtMs),
    updatedAt: String(a.updatedAtMs),
  };
  return {
    activity: {
      ...identity(a),
      intent,
      result: { ...result, activity: nested },
      votes: voteJson,
      ...(a.appProofsJson == null ? {} : { appProofs: JSON.parse(a.appProofsJson) as unknown }),
      fingerprint: a.fingerprint,
      canApprove: pending,
      canReject: pending,
      createdAt: timestampOf(a.createdAtMs),
      updatedAt: timestampOf(a.updatedAtMs),
      failure: a.failureJson === null ? null : (JSON.parse(a.failureJson) as unknown),
      timestampMs: a.timestampMs,
    },
  };
}

/**
 * `JSON.stringify(activityResponse(a, votes))`, for a record whose JSON columns this process just
 * made with JSON.stringify: they are spliced in as they are (re-serializing their parse would give
 * the same text), and the votes, served twice, are serialized once. The answer to an activity
 * carries the seed's nested copy of itself, so this halves the serializing and skips the parsing.
 */
export function activityResponseJson(a: ActivityRecord, votes: readonly VoteWithUser[]): string {
  // A result key that the nested copy's key would overwrite keeps the general path.
  if (a.resultKey === 'activity') return JSON.stringify(activityResponse(a, votes));
  const q = JSON.stringify;
  const pending = a.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED';
  const result = a.resultJson === null ? '' : `${q(a.resultKey)}:${a.resultJson}`;
  const voteJson = q(votes.map(voteOf));
  const head =
    `"id":${q(a.id)},"organizationId":${q(a.organizationId)},"status":${q(a.status)},` +
    `"type":${q(a.type)},"intent":{${q(a.intentKey)}:${a.intentJson}}`;
  const nested =
    `{${head},"result":{${result}},"votes":${voteJson},"fingerprint":${q(a.fingerprint)},` +
    `"canApprove":${pending},"canReject":${pending},` +
    `"createdAt":${q(String(a.createdAtMs))},"updatedAt":${q(String(a.updatedAtMs))}}`;
  return (
    `{"activity":{${head},"result":{${result === '' ? '' : `${result},`}"activity":${nested}},` +
    `"votes":${voteJson},${a.appProofsJson == null ? '' : `"appProofs":${a.appProofsJson},`}` +
    `"fingerprint":${q(a.fingerprint)},"canApprove":${pending},"canReject":${pending},` +
    `"createdAt":${q(timestampOf(a.createdAtMs))},"updatedAt":${q(timestampOf(a.updatedAtMs))},` +
    `"failure":${a.failureJson ?? 'null'},"timestampMs":${q(a.timestampMs)}}}`
  );
}

/**
 * `{activity: …}` with the fields a client needs to act on the outcome (id, organization, status,
 * type, fingerprint, result, failure, app proofs) and none of the record it already holds: no
 * intent, no votes, no nested copy. The daemon asks for it (`X-Countersign-Answer: summary`); the
 * full answer is ~5 KB against ~0.6 KB for a signed transaction.
 */
export function activitySummary(a: ActivityRecord): { activity: Record<string, unknown> } {
  // identity's fields written out: a spread followed by new properties costs this V8 a new hidden
  // class per call (see withOutcome in handler.ts); this runs for every signature the daemon asks for.
  const result = a.resultJson === null ? {} : { [a.resultKey]: JSON.parse(a.resultJson) as unknown };
  const failure = a.failureJson === null ? null : (JSON.parse(a.failureJson) as unknown);
  const { id, organizationId, status, type, fingerprint } = a;
  return {
    activity:
      a.appProofsJson == null
        ? { id, organizationId, status, type, fingerprint, result, failure }
        : {
            id,
            organizationId,
            status,
            type,
            fingerprint,
            result,
            appProofs: JSON.parse(a.appProofsJson) as unknown,
            failure,
          },
  };
}
