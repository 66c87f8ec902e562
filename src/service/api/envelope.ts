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

/** The intent and result of a record just written, as the objects its JSON was made from. */
export interface WrittenBodies {
  readonly intent: unknown;
  readonly result: unknown;
}

/**
 * `{activity: …}` with the seed's nested record also served at `activity.result.activity`. With
 * `written` (the objects `a.intentJson` and `a.resultJson` were just serialized from) the record's
 * JSON is not parsed back.
 */
export function activityResponse(
  a: ActivityRecord,
  votes: readonly VoteWithUser[],
  written?: WrittenBodies,
): { activity: Record<string, unknown> } {
  const intent = {
    [a.intentKey]: written === undefined ? (JSON.parse(a.intentJson) as unknown) : written.intent,
  };
  const resultBody =
    a.resultJson === null
      ? undefined
      : written === undefined
        ? (JSON.parse(a.resultJson) as unknown)
        : written.result;
  const voteJson = votes.map(({ vote, user }) => ({
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
  }));
  const pending = a.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED';
  const result: Record<string, unknown> = resultBody === undefined ? {} : { [a.resultKey]: resultBody };
  const nested = {
    id: a.id,
    organizationId: a.organizationId,
    status: a.status,
    type: a.type,
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
      id: a.id,
      organizationId: a.organizationId,
      status: a.status,
      type: a.type,
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
