/**
 * The public API's request handler: stamp check over the raw bytes, envelope validation,
 * fingerprint idempotency, authorization, dispatch on `type`, and one transaction that records the
 * activity with the state change it describes. HTTP and the in-process transport both call this.
 */
import { hash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { CountersignError, isCountersignError, toRpcStatus, invalid, missing } from '../../shared/errors.js';
import {
  ANSWER_HEADER,
  type RequestHandler,
  type TransportRequest,
  type TransportResponse,
} from '../../shared/request-handler.js';
import type { KeyVault } from '../keys/index.js';
import type {
  ActivityLease,
  ActivityRecord,
  ActivityStatus,
  ApiKeyRecord,
  OrganizationRecord,
  Store,
  UserRecord,
  VoteRecord,
} from '../store/types.js';
import type { ActivityDefinition } from '../activities/types.js';
import { isUuid, type Params } from '../activities/params.js';
import { ACTIVITIES } from '../activities/registry.js';
import { activityPrologue } from '../activities/prologue.js';
import { createDecider, DECISION_ACTIVITIES, type DecisionDefinition } from '../activities/decisions.js';
import { evaluateGate, evaluationRecord, policyDenied } from '../activities/policy-gate.js';
import { activityResponse, activityResponseJson, activitySummary, userJson } from './envelope.js';
import { runQuery, votesWithUsers } from './queries.js';
import { EVALUATE_POLICIES_QUERY, evaluatePoliciesQuery } from './evaluate-policies.js';
import {
  parseStamp,
  verifyApiKeyStamp,
  verifyApiKeyStampOffThread,
  verifyWebauthnStamp,
  type Stamp,
} from './stamp.js';
import type { P256Verifier } from './p256Verifier.js';
import { attestedCaller, parseAttestedStamp, type AttestedStamp } from './attestedStamp.js'; // --- auth proxy ---
import { uuidv7 } from '../ids.js';
import type { WebauthnPolicy } from '../webauthn.js'; // --- console ---
import { CONSOLE_REDEEM_PATH, redeemInvite } from '../console/invite.js'; // --- console ---
import {
  BUILD_ATTESTATION_QUERY,
  publicApiRoute,
  QUERY_PREFIX,
  servesQuery,
  servesSubmit,
  SUBMIT_PREFIX,
  unservedRoute,
} from './routes.js';
import { appProofPublicKey, appProofsJson, appProofsRequested, buildAttestation } from '../appProofs.js';
import { parseJsonStrict } from '../../shared/parseJsonStrict.js';
import type { Metrics } from './metrics.js';
import { policyOutcomeLabel, secondsSince, serviceMetrics } from '../../observability/metrics.js'; // --- operability ---
import { crashPoint } from '../../observability/failpoints.js'; // --- operability ---
import { inSpan, SpanKind, tracingEnabled } from '../../observability/tracing.js'; // --- operability ---
import {
  SERVICE_NOTARIZER_KEY_ID,
  SERVICE_ONRAMP_KEY_ID,
  SERVICE_SIGNER_KEY_ID,
  SERVICE_TLS_FETCHER_KEY_ID,
} from '../keys/index.js';
import { webhookContextOf } from '../webhooks/context.js'; // --- webhooks ---
import { WEBHOOK_JWKS_PATH, webhookJwks } from '../webhooks/signingKeys.js'; // --- webhooks ---

export interface ApiHandlerOptions {
  readonly store: Store;
  readonly vault: KeyVault;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** How old a request's timestampMs may be. */
  readonly maxRequestAgeMs: number;
  /** How far ahead of our clock a request's timestampMs may be. */
  readonly maxClockSkewMs: number;
  readonly now?: () => number;
  /** Origins a passkey stamp may come from (default: any, with the rpId its host). */
  readonly webauthn?: WebauthnPolicy; // --- console ---
  /** Origins a console invite may register its passkey from (default: any, with the rpId its host). */
  readonly consoleOrigins?: readonly string[]; // --- console ---
  /** The name this process's leases carry (default: a fresh UUID). */
  readonly replicaId?: string;
  /**
   * How long a reservation (or a consensus decision) is held before another replica may take it
   * over, assuming its holder died (default 30 s). Longer than any signing takes.
   */
  readonly activityLeaseMs?: number;
  /** Kept up to date with the number of requests being answered (the store reads it; see embedded.ts). */
  readonly inHand?: { count: number };
  /** Where P-256 stamp checks go in batches when many requests are in hand (else libuv's pool). */
  readonly p256Verifier?: P256Verifier;
}

/** The status of a reserved activity: recorded, being signed by the lease holder. */
const RESERVED = 'ACTIVITY_STATUS_PENDING';

/**
 * The record of an activity whose outcome is `status`, from what was known before it. Written out
 * field by field on purpose: this V8 (Node 20) gives `{...base, status}`, a spread followed by a
 * property its source lacks, a new hidden class on every call (~1 µs, and a map for the collector).
 */
function withOutcome(
  base: Omit<ActivityRecord, 'status' | 'resultJson' | 'appProofsJson'>,
  status: ActivityStatus,
  resultJson: string | null,
  appProofsJson: string | null,
  updatedAtMs: number = base.updatedAtMs,
): ActivityRecord {
  return {
    id: base.id,
    organizationId: base.organizationId,
    type: base.type,
    status,
    fingerprint: base.fingerprint,
    intentKey: base.intentKey,
    intentJson: base.intentJson,
    resultKey: base.resultKey,
    resultJson,
    failureJson: base.failureJson,
    timestampMs: base.timestampMs,
    createdAtMs: base.createdAtMs,
    updatedAtMs,
    appProofsJson,
  };
}

export const DEFAULT_ACTIVITY_LEASE_MS = 30_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Unauthenticated and cacheable: the keys clients pin (`GET`, forwarded by the HTTP listener). */
export const DISCOVERY_KEYS_PATH = '/public/v1/discovery/keys';

const json = (status: number, value: unknown): TransportResponse => ({
  status,
  body: Buffer.from(JSON.stringify(value)),
});

/** What an activity's answer carries: the whole activity, or its summary (envelope.ts). */
type AnswerShape = 'full' | 'summary';

function answerShape(value: string | undefined): AnswerShape {
  if (value === undefined) return 'full';
  if (value === 'summary') return 'summary';
  throw invalid('X-Countersign-Answer', 'must be "summary", or absent for the whole activity');
}

interface Caller {
  readonly user: UserRecord;
  readonly credentialOrgId: string;
  readonly publicKey: string;
  readonly signature: string;
  readonly scheme: string;
}

/** The error body; a policy deny also carries the decision and each policy's outcome. */
function errorBody(e: CountersignError): ReturnType<typeof toRpcStatus> {
  const body = toRpcStatus(e);
  if (e.code === 'POLICY_DENIED' && e.meta !== undefined)
    body.details.push({
      '@type': 'type.googleapis.com/countersign.v1.PolicyDecision',
      outcome: e.meta.outcome,
      policyEvaluations: e.meta.policyEvaluations,
    });
  return body;
}

/** Builds the handler; the returned function never throws. */
/**
 * Requests in hand above which stamp checks are batched. Measured interleaved (bench/PROFILE.md,
 * stop 32): at 64 in flight batches beat the pool by 4–13% in calls; at ~750/s offered, with two to
 * four in hand, batches of one or two on one thread lost 3–10% at p50 to the pool's parallel checks.
 */
const BATCHED_FROM = 8;

export function createApiHandler(opts: ApiHandlerOptions): RequestHandler {
  const { store, vault, logger, metrics } = opts;
  const now = opts.now ?? Date.now;
  const byType = new Map<string, ActivityDefinition>(ACTIVITIES.map((d) => [d.type, d]));
  const decisionsByType = new Map<string, DecisionDefinition>(DECISION_ACTIVITIES.map((d) => [d.type, d]));
  // Identical bodies in flight at once share one execution, so a body is never signed twice.
  const inFlight = new Map<string, Promise<TransportResponse>>();
  /** This process's name on the activity leases it takes (reservations, consensus decisions). */
  const replicaId = opts.replicaId ?? randomUUID();
  const leaseMs = opts.activityLeaseMs ?? DEFAULT_ACTIVITY_LEASE_MS;
  const decide = createDecider({ store, vault, definitions: byType, replicaId, leaseMs });

  /** Requests this handler is answering right now (the one asking included). */
  const inHand = opts.inHand ?? { count: 0 };

  async function authenticate(stamp: Stamp, body: Uint8Array, org: OrganizationRecord): Promise<Caller> {
    const orgs = org.parentId === null ? [org.id] : [org.id, org.parentId];
    if (stamp.kind === 'api_key') {
      const keys = await store.findApiKeys(stamp.publicKey, orgs);
      // Prefer a credential of the organization itself over one of its parent.
      const key: ApiKeyRecord | undefined = keys.find((k) => k.organizationId === org.id) ?? keys[0];
      if (key === undefined)
        throw new CountersignError(
          'STAMP_UNKNOWN_KEY',
          'could not find public key in organization or its parent organization',
        );
      // With other requests in hand, the P-256 check runs off this thread, which goes on with them;
      // alone, it runs here (a hop to another thread and back costs a lone request more). With
      // many in hand, the checks go in batches to the verifier's thread (one wake-up a batch);
      // with a few, to libuv's pool, whose threads check them side by side.
      if (inHand.count > BATCHED_FROM) await verifyApiKeyStampOffThread(stamp, body, opts.p256Verifier);
      else if (inHand.count > 1) await verifyApiKeyStampOffThread(stamp, body);
      else verifyApiKeyStamp(stamp, body);
      if (key.expiresAtMs !== null && key.expiresAtMs <= now())
        throw new CountersignError(
          'API_KEY_EXPIRED',
          `Unauthenticated desc = expired api key publicKey ${key.publicKey}`,
        );
      const user = await store.getUser(key.userId);
      if (user === undefined)
        throw new CountersignError(
          'STAMP_UNKNOWN_KEY',
          'could not find public key in organization or its parent organization',
        );
      return {
        user,
        credentialOrgId: key.organizationId,
        publicKey: key.publicKey,
        signature: stamp.signature,
        scheme: stamp.scheme,
      };
    }
    const auths = await store.findAuthenticators(stamp.credentialId, orgs);
    const auth = auths.find((a) => a.organizationId === org.id) ?? auths[0];
    if (auth === undefined)
      throw new CountersignError(
        'STAMP_UNKNOWN_KEY',
        'could not find credential id in organization or its parent organization',
      );
    await verifyWebauthnStamp(stamp, body, auth.publicKey, opts.webauthn);
    const user = await store.getUser(auth.userId);
    if (user === undefined)
      throw new CountersignError(
        'STAMP_UNKNOWN_KEY',
        'could not find credential id in organization or its parent organization',
      );
    return {
      user,
      credentialOrgId: auth.organizationId,
      publicKey: auth.publicKey,
      signature: Buffer.from(stamp.signature).toString('hex'),
      scheme: 'SIGNATURE_SCHEME_TK_API_P256',
    };
  }

  async function organizationOf(body: Params): Promise<OrganizationRecord> {
    const id = body.organizationId;
    if (id === undefined || id === null) throw missing('organizationId');
    if (typeof id !== 'string' || !isUuid(id))
      throw new CountersignError(
        'ORGANIZATION_ID_MALFORMED',
        'organizationId: malformed organization ID provided (must be a UUID)',
        {
          field: 'organizationId',
        },
      );
    const org = await store.getOrganization(id);
    if (org === undefined)
      throw new CountersignError(
        'ORGANIZATION_NOT_FOUND',
        `organizationId: no organization found with the given ID ${id}`,
        {
          field: 'organizationId',
        },
      );
    return org;
  }

  function parseBody(raw: Uint8Array): Params {
    // Strict: valid UTF-8, no duplicate keys, bounded nesting and arrays (every transport, not only HTTP).
    const v = parseJsonStrict(raw);
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new CountersignError('REQUEST_MALFORMED', 'request body must be a JSON object');
    return v as Params;
  }

  function checkFreshness(body: Params): string {
    const ts = body.timestampMs;
    if (ts === undefined || ts === null) throw missing('timestampMs');
    if (typeof ts !== 'string' || !/^[0-9]{1,16}$/.test(ts))
      throw invalid('timestampMs', 'must be a decimal string of milliseconds since the epoch');
    const t = Number(ts);
    const n = now();
    if (t < n - opts.maxRequestAgeMs)
      throw new CountersignError(
        'TIMESTAMP_STALE',
        `timestampMs: request is stale: ${n - t} ms old, the limit is ${opts.maxRequestAgeMs} ms`,
        { field: 'timestampMs' },
      );
    if (t > n + opts.maxClockSkewMs)
      throw new CountersignError(
        'TIMESTAMP_IN_FUTURE',
        `timestampMs: request is ${t - n} ms in the future, the limit is ${opts.maxClockSkewMs} ms`,
        { field: 'timestampMs' },
      );
    return ts;
  }

  /** The answer for an activity read from the store (another request's), once it is durable. */
  async function respondWith(a: ActivityRecord, shape: AnswerShape): Promise<TransportResponse> {
    const answer = json(
      200,
      shape === 'summary' ? activitySummary(a) : activityResponse(a, await votesWithUsers(store, a.id)),
    );
    await store.synced();
    return answer;
  }

  /**
   * The answer to an activity just recorded, from what was written (its one vote), not re-read: `a`'s
   * JSON columns were made here by JSON.stringify.
   */
  async function respondWritten(
    a: ActivityRecord,
    vote: VoteRecord,
    voter: UserRecord,
    shape: AnswerShape,
  ): Promise<TransportResponse> {
    if (shape === 'summary') return json(200, activitySummary(a));
    const user = userJson(voter, await store.listApiKeys(voter.id));
    return { status: 200, body: Buffer.from(activityResponseJson(a, [{ vote, user }])) };
  }

  async function submit(
    name: string,
    raw: Uint8Array,
    stamp: Stamp | AttestedStamp,
    shape: AnswerShape,
  ): Promise<TransportResponse> {
    const body = parseBody(raw);
    const type = body.type;
    if (type === undefined || type === null) throw missing('type');
    if (typeof type !== 'string') throw invalid('type', 'must be a string');
    const decision = decisionsByType.get(type);
    if (decision !== undefined && decision.path === name) {
      if (stamp.kind === 'attested')
        throw new CountersignError(
          'REQUEST_NOT_AUTHORIZED',
          'X-Stamp-Attested is accepted for stamp_login only',
        );
      return vote(decision, body, raw, stamp, shape);
    }
    const def = byType.get(type);
    if (def === undefined || def.path !== name)
      throw new CountersignError(
        'ACTIVITY_TYPE_UNSUPPORTED',
        `type: ${type} is not an activity accepted on /public/v1/submit/${name}`,
        { field: 'type' },
      );
    let org = await organizationOf(body);
    let caller: Caller;
    // --- auth proxy --- an OTP verification token's key logs its contact's user in (stamp_login only)
    if (stamp.kind === 'attested') {
      if (def.type !== 'ACTIVITY_TYPE_STAMP_LOGIN')
        throw new CountersignError(
          'REQUEST_NOT_AUTHORIZED',
          `X-Stamp-Attested is accepted for stamp_login only, not ${def.type}`,
        );
      // One session per token key: the new session key must be the stamp's (the token's) key, which
      // stamp_login registers once, so a token cannot mint further sessions for other keys.
      const p = body.parameters as Params | undefined;
      if (typeof p?.publicKey !== 'string' || p.publicKey.toLowerCase() !== stamp.publicKey)
        throw invalid(
          'parameters.publicKey',
          "with X-Stamp-Attested it must be the stamp's publicKey (the verification token's key)",
        );
      const a = await attestedCaller({ store, stamp, body: raw, organization: org, nowMs: now() });
      org = a.organization;
      caller = {
        user: a.user,
        credentialOrgId: a.organization.id,
        publicKey: stamp.publicKey,
        signature: stamp.signature,
        scheme: stamp.scheme,
      };
    } else caller = await inSpan('stamp.check', () => authenticate(stamp, raw, org));
    // --- end auth proxy ---
    const fingerprint = `sha256:${hash('sha256', raw, 'hex')}`;
    const known = await store.getActivityLease(fingerprint);
    if (known !== undefined && known.activity.status !== RESERVED) return respondWith(known.activity, shape);
    // A fast path only: the database's reservation is what keeps a body from being signed twice.
    // Keyed by the answer's shape too: a request that asked for another shape runs on its own.
    const key = shape === 'full' ? fingerprint : `${shape} ${fingerprint}`;
    const running = inFlight.get(key);
    if (running !== undefined) return running;
    const p = execute(def, body, raw, org, caller, fingerprint, known, shape);
    inFlight.set(key, p);
    try {
      return await p;
    } finally {
      inFlight.delete(key);
    }
  }

  /** approve_activity / reject_activity: the response describes the activity voted on. */
  async function vote(
    decision: DecisionDefinition,
    body: Params,
    raw: Uint8Array,
    stamp: Stamp,
    shape: AnswerShape,
  ): Promise<TransportResponse> {
    const org = await organizationOf(body);
    const caller = await inSpan('stamp.check', () => authenticate(stamp, raw, org));
    checkFreshness(body);
    const params = parametersOf(body);
    if (caller.credentialOrgId !== org.id)
      throw new CountersignError(
        'REQUEST_NOT_AUTHORIZED',
        'request not authorized: a parent organization can read a sub-organization but not write to it',
        { field: 'organizationId' },
      );
    const target = await decide({
      decision,
      params,
      organization: org,
      voter: {
        user: caller.user,
        publicKey: caller.publicKey,
        signature: caller.signature,
        scheme: caller.scheme,
        message: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8'),
      },
      nowMs: now(),
    });
    logger.info(
      { activityId: target.id, status: target.status, type: decision.type, organizationId: org.id },
      'vote recorded',
    );
    return respondWith(target, shape);
  }

  function parametersOf(body: Params): Params {
    const params = body.parameters;
    if (params === undefined || params === null) throw missing('parameters');
    if (typeof params !== 'object' || Array.isArray(params))
      throw invalid('parameters', 'must be a JSON object');
    return params as Params;
  }

  /**
   * Runs a body whose fingerprint is not yet decided. The activity is reserved first (recorded
   * PENDING with its policy decision and a lease, the unique fingerprint deciding between
   * replicas); only the winner signs, then completes it. Others wait for the winner's activity, and
   * take a reservation over once its lease ran out (its replica died before completing).
   */
  async function execute(
    def: ActivityDefinition,
    body: Params,
    raw: Uint8Array,
    org: OrganizationRecord,
    caller: Caller,
    fingerprint: string,
    /** What submit() just read of the fingerprint: the first round does not read it again. */
    known: ActivityLease | undefined,
    shape: AnswerShape,
  ): Promise<TransportResponse> {
    let pause = 5;
    for (let round = 0; ; round++) {
      const lease = round === 0 ? known : await store.getActivityLease(fingerprint);
      if (lease === undefined) {
        const answer = await attempt(def, body, raw, org, caller, fingerprint, undefined, shape);
        if (answer !== undefined) return answer;
        continue;
      }
      const a = lease.activity;
      if (a.status !== RESERVED) return respondWith(a, shape);
      const t = Date.now();
      if (lease.leaseOwner === null || (lease.leaseExpiresAtMs ?? 0) <= t) {
        checkFreshness(body);
        const won = await store.write(
          async (tx) => await tx.leaseActivity(a.id, RESERVED, replicaId, t, t + leaseMs),
        );
        if (won) {
          logger.warn({ activityId: a.id, type: def.type }, 'taking over an abandoned reservation');
          const answer = await attempt(def, body, raw, org, caller, fingerprint, a, shape);
          if (answer !== undefined) return answer;
        }
        continue;
      }
      // Another request (here or on another replica) holds it: wait for its outcome.
      await sleep(pause);
      pause = Math.min(pause * 2, 100);
    }
  }

  /** One try at running the body; undefined when another request holds (or took) its reservation. */
  async function attempt(
    def: ActivityDefinition,
    body: Params,
    raw: Uint8Array,
    org: OrganizationRecord,
    caller: Caller,
    fingerprint: string,
    takeover: ActivityRecord | undefined,
    shape: AnswerShape,
  ): Promise<TransportResponse | undefined> {
    const timestampMs = checkFreshness(body);
    const submitted = parametersOf(body);
    const wantsProofs = appProofsRequested(body);
    // One clock reading for the activity's time and its id (its vote's and evaluation's take it too).
    const nowMs = now();
    const activityId = takeover?.id ?? uuidv7(nowMs);
    // Secrets are sealed before anything is recorded; the vote then keeps the body with the sealed
    // tokens in place of the secrets (so its stamp no longer verifies over it; the fingerprint still
    // names the original body).
    const { ctx, params, vote } = activityPrologue({
      store,
      vault,
      organization: org,
      submitter: caller,
      def,
      submitted,
      activityId,
      nowMs,
      voteMessage: (sealed: Params) =>
        def.secretParams === undefined
          ? Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8')
          : JSON.stringify({ ...body, parameters: sealed }),
    });
    // A taken-over reservation is given up (removed) when it cannot run after all.
    const abandon = async (): Promise<void> => {
      await store.write(async (tx) => await tx.abandonActivity(activityId, replicaId));
    };
    let queued = 0; // --- webhooks --- deliveries the activity's event queued (none: nothing to wake)
    // Facts first: they also refuse what cannot be described (unknown signWith, malformed tx).
    let decision: Awaited<ReturnType<typeof evaluateGate>>;
    try {
      decision = await inSpan('policy.evaluate', async () => {
        const facts = def.facts === undefined ? {} : await def.facts(ctx, params);
        return evaluateGate({
          store,
          organization: org,
          type: def.type,
          params,
          facts,
          votes: [vote],
          nowMs,
        });
      });
    } catch (e) {
      if (takeover !== undefined) await abandon();
      throw e;
    }
    serviceMetrics().policyDecisions.inc({ outcome: policyOutcomeLabel(decision.outcome) }); // --- operability ---
    crashPoint('after-policy-decision'); // --- operability --- (tests only: see failpoints.ts)
    const base: Omit<ActivityRecord, 'status' | 'resultJson' | 'appProofsJson'> = takeover ?? {
      id: activityId,
      organizationId: org.id,
      type: def.type,
      fingerprint,
      intentKey: def.intentKey,
      intentJson: JSON.stringify(params),
      resultKey: def.resultKey,
      failureJson: null,
      timestampMs,
      createdAtMs: nowMs,
      updatedAtMs: nowMs,
    };
    const evaluation = evaluationRecord(activityId, org.id, vote.id, decision, nowMs);
    switch (decision.outcome) {
      case 'OUTCOME_DENY_EXPLICIT':
      case 'OUTCOME_DENY_IMPLICIT':
        if (takeover !== undefined) await abandon();
        logger.info({ type: def.type, organizationId: org.id, outcome: decision.outcome }, 'policy denied');
        throw policyDenied(decision);
      case 'OUTCOME_REQUIRES_CONSENSUS': {
        // Recorded, not run: approve_activity runs it from the stored intent once consensus is met.
        // '[]' remembers the request for proofs; approve_activity signs them when it completes.
        const record = withOutcome(base, 'ACTIVITY_STATUS_CONSENSUS_NEEDED', null, wantsProofs ? '[]' : null);
        const recorded = await store.write(async (tx) => {
          if (takeover !== undefined) {
            if (
              !(await tx.updateActivity(activityId, RESERVED, {
                status: record.status,
                resultJson: null,
                failureJson: null,
                updatedAtMs: nowMs,
                ...(record.appProofsJson === null ? {} : { appProofsJson: record.appProofsJson }),
              }))
            )
              return false;
          } else {
            if (!(await tx.reserveActivity(record, [vote], null, 0))) return false;
            await tx.insertPolicyEvaluation(evaluation);
          }
          queued = await tx.enqueueActivityEvent(record.id, true, nowMs); // --- webhooks ---
          return true;
        });
        if (!recorded) return undefined;
        if (queued > 0) webhookContextOf(store).wake(); // --- webhooks ---
        logger.info({ activityId, type: def.type, organizationId: org.id }, 'activity awaits consensus');
        return respondWritten(record, vote, caller.user, shape);
      }
      case 'OUTCOME_ALLOW':
        break;
      default: {
        const never: never = decision.outcome;
        throw new CountersignError('INTERNAL', `unknown policy outcome ${String(never)}`);
      }
    }
    if (takeover === undefined) {
      // Reserve before signing: of concurrent requests with this body, on any replica, one inserts.
      const reservation = withOutcome(base, RESERVED, null, null);
      // Committed (visible to every connection and replica) before signing, but not waited on to
      // reach the disk: nobody is answered from it until the completion below, a durable write
      // that makes it durable too. A power loss before then loses both, and nothing was answered.
      const reserved = await store.write(
        async (tx) => {
          const t = Date.now();
          if (!(await tx.reserveActivity(reservation, [vote], replicaId, t + leaseMs))) return false;
          await tx.insertPolicyEvaluation(evaluation);
          return true;
        },
        { durable: false, rerunnable: true },
      );
      if (!reserved) return undefined;
    }
    let outcome: Awaited<ReturnType<ActivityDefinition['run']>>;
    let appProofs: string | null;
    try {
      outcome = await inSpan('sign', () => def.run(ctx, params));
      appProofs = wantsProofs
        ? await appProofsJson(
            { store, vault },
            { activityId, activityType: def.type, organizationId: org.id, nowMs },
            params,
            outcome.result,
          )
        : null;
    } catch (e) {
      // Nothing was signed: the reservation goes, so a retry of the body runs afresh.
      await abandon();
      throw e;
    }
    crashPoint('after-sign-before-commit'); // --- operability ---
    const record = withOutcome(
      base,
      'ACTIVITY_STATUS_COMPLETED',
      JSON.stringify(outcome.result),
      appProofs,
      nowMs,
    );
    let completed: boolean;
    try {
      completed = await inSpan('store.write', () =>
        store.write(
          async (tx) => {
            // Completed only while the lease is still ours (one statement checks and changes it; the
            // row is then held until the commit), so nobody else completes it; the activity's own
            // writes follow in the same transaction, and go with it if any fails.
            const { status, resultJson } = record;
            const held = await tx.completeLeasedActivity(
              activityId,
              replicaId,
              appProofs === null
                ? { status, resultJson, failureJson: null, updatedAtMs: nowMs }
                : { status, resultJson, failureJson: null, updatedAtMs: nowMs, appProofsJson: appProofs },
            );
            if (!held) return false;
            await outcome.write?.(tx);
            queued = await tx.enqueueActivityEvent(record.id, true, nowMs); // --- webhooks ---
            return true;
          },
          // Rows only, so it may run again; an activity's own write is not vouched for here.
          { rerunnable: outcome.write === undefined },
        ),
      );
    } catch (e) {
      await abandon();
      throw e;
    }
    if (!completed) {
      // Our lease ran out while signing and another replica took the reservation over.
      logger.warn({ activityId, type: def.type }, 'reservation lost before completion');
      return undefined;
    }
    if (queued > 0) webhookContextOf(store).wake(); // --- webhooks ---
    crashPoint('after-commit-before-answer'); // --- operability ---
    metrics.activity(def.type);
    logger.info({ activityId, type: def.type, organizationId: org.id }, 'activity completed');
    return respondWritten(record, vote, caller.user, shape);
  }

  async function query(name: string, raw: Uint8Array, stamp: Stamp): Promise<TransportResponse> {
    const body = parseBody(raw);
    const org = await organizationOf(body);
    const caller = await inSpan('stamp.check', () => authenticate(stamp, raw, org));
    // Turnkey's query bodies carry no timestampMs; one that does (a captured activity body replayed
    // to a query path, or a client that opts in) is held to the same window as an activity.
    if (body.timestampMs !== undefined) checkFreshness(body);
    // The dry run needs what an activity gets (the vault, the caller's credential), not a QueryContext.
    if (name === EVALUATE_POLICIES_QUERY)
      return json(
        200,
        await evaluatePoliciesQuery({
          store,
          vault,
          organization: org,
          caller,
          definitions: byType,
          nowMs: now(),
          body,
        }),
      );
    if (name === BUILD_ATTESTATION_QUERY)
      return json(200, { buildAttestation: await buildAttestation({ store, vault }, now()) });
    return json(200, await runQuery(name, { store, organization: org, user: caller.user }, body));
  }

  /** The route as a metric label: a known path, or 'other' (never a name a client made up). */
  function routeLabel(path: string): string {
    if (path === DISCOVERY_KEYS_PATH) return path;
    if (path === WEBHOOK_JWKS_PATH) return path; // --- webhooks ---
    return publicApiRoute(path) ? path : 'other';
  }

  let publishedKeys: Record<string, string> | undefined;
  /** The service's public keys, named after the @turnkey/crypto overrides they feed. */
  async function discoveryKeys(): Promise<Record<string, string>> {
    if (publishedKeys !== undefined) return publishedKeys;
    const hex = async (id: string) => {
      const k = await store.getServiceKey(id);
      if (k === undefined)
        throw new CountersignError('KEY_MATERIAL_UNAVAILABLE', `the service has no key ${id}`);
      return k.publicKey;
    };
    publishedKeys = {
      signerPublicKey: await hex(SERVICE_SIGNER_KEY_ID),
      notarizerPublicKey: await hex(SERVICE_NOTARIZER_KEY_ID),
      tlsFetcherEncryptPublicKey: await hex(SERVICE_TLS_FETCHER_KEY_ID),
      onRampEncryptionPublicKey: await hex(SERVICE_ONRAMP_KEY_ID),
      appProofPublicKey: await appProofPublicKey(store),
    };
    return publishedKeys;
  }

  async function route(req: TransportRequest): Promise<TransportResponse> {
    if (req.path === DISCOVERY_KEYS_PATH) return json(200, await discoveryKeys());
    // --- webhooks --- read per request: a rotation shows at once (the listener adds Cache-Control).
    if (req.path === WEBHOOK_JWKS_PATH)
      return json(200, webhookJwks(await store.listWebhookSigningKeys(), now()));
    // --- console --- an invite link registers its passkey (stamped by the invite's API key)
    if (req.path === CONSOLE_REDEEM_PATH) {
      const stamp = parseStamp(req.headers);
      if (stamp.kind !== 'api_key')
        throw new CountersignError('STAMP_MALFORMED', 'an invite is redeemed with its invite key (X-Stamp)');
      const body = parseBody(req.body);
      const org = await organizationOf(body);
      const caller = await authenticate(stamp, req.body, org);
      checkFreshness(body);
      return json(
        200,
        await redeemInvite({
          store,
          organizationId: org.id,
          user: caller.user,
          publicKey: caller.publicKey,
          body,
          policy: { origins: opts.consoleOrigins ?? [] },
          nowMs: now(),
        }),
      );
    }
    // --- end console ---
    if (req.path.startsWith(SUBMIT_PREFIX)) {
      const name = req.path.slice(SUBMIT_PREFIX.length);
      if (!servesSubmit(name)) throw unservedRoute(req.path);
      // --- auth proxy ---
      const shape = answerShape(req.headers[ANSWER_HEADER]);
      const attested = req.headers['x-stamp-attested'];
      if (attested !== undefined && req.headers['x-stamp'] === undefined)
        return submit(name, req.body, parseAttestedStamp(attested), shape);
      // --- end auth proxy ---
      return submit(name, req.body, parseStamp(req.headers), shape);
    }
    if (req.path.startsWith(QUERY_PREFIX)) {
      const name = req.path.slice(QUERY_PREFIX.length);
      if (!servesQuery(name)) throw unservedRoute(req.path);
      const answer = await query(name, req.body, parseStamp(req.headers));
      // A query answers from what it read: nothing it reports may still be undone by a power loss.
      await store.synced();
      return answer;
    }
    throw new CountersignError('ROUTE_NOT_FOUND', `no route for ${req.path}`);
  }

  /** One request, in a span continuing the caller's trace (its `traceparent` header) when tracing is on. */
  const handle = (req: TransportRequest): Promise<TransportResponse> =>
    tracingEnabled()
      ? inSpan('public_api.request', () => answer(req), {
          kind: SpanKind.SERVER,
          traceparent: req.headers.traceparent,
          attributes: { 'http.route': routeLabel(req.path) },
        })
      : answer(req);

  async function answer(req: TransportRequest): Promise<TransportResponse> {
    const started = process.hrtime.bigint();
    let res: TransportResponse;
    inHand.count++;
    try {
      res = await route(req);
    } catch (e) {
      if (isCountersignError(e)) {
        logger.info({ path: req.path, code: e.code, field: e.field }, 'request refused');
        serviceMetrics().apiErrors.inc({ code: e.code }); // --- operability ---
        res = json(e.httpStatus, errorBody(e));
      } else {
        const id = randomUUID();
        logger.error({ err: e, errorId: id, path: req.path }, 'internal error');
        serviceMetrics().apiErrors.inc({ code: 'INTERNAL' }); // --- operability ---
        res = json(500, { code: 13, message: `internal server error (${id})`, details: [] });
      }
    } finally {
      inHand.count--;
    }
    metrics.request(routeLabel(req.path), res.status, Number(process.hrtime.bigint() - started) / 1e9);
    serviceMetrics().apiSeconds.observe({ route: routeLabel(req.path) }, secondsSince(started)); // --- operability ---
    return res;
  }
  return handle;
}
