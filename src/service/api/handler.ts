/**
 * The public API's request handler: stamp check over the raw bytes, envelope validation,
 * fingerprint idempotency, authorization, dispatch on `type`, and one transaction that records the
 * activity with the state change it describes. HTTP and the in-process transport both call this.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { CountersignError, isCountersignError, toRpcStatus, invalid, missing } from '../../shared/errors.js';
import type { RequestHandler, TransportRequest, TransportResponse } from '../../client/transport.js';
import type { KeyVault } from '../keys/index.js';
import type {
  ActivityRecord,
  ApiKeyRecord,
  OrganizationRecord,
  Store,
  UserRecord,
  VoteRecord,
} from '../store/types.js';
import type { ActivityDefinition } from '../activities/types.js';
import { isUuid, type Params } from '../activities/params.js';
import { ACTIVITIES } from '../activities/registry.js';
import { activityResponse } from './envelope.js';
import { isQuery, runQuery, votesWithUsers } from './queries.js';
import { parseStamp, verifyApiKeyStamp, verifyWebauthnStamp, type Stamp } from './stamp.js';
import { uuidv7 } from '../ids.js';
import type { Metrics } from './metrics.js';

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
}

const SUBMIT_PREFIX = '/public/v1/submit/';
const QUERY_PREFIX = '/public/v1/query/';

const json = (status: number, value: unknown): TransportResponse => ({
  status,
  body: Buffer.from(JSON.stringify(value)),
});

interface Caller {
  readonly user: UserRecord;
  readonly credentialOrgId: string;
  readonly publicKey: string;
  readonly signature: string;
  readonly scheme: string;
}

/** Builds the handler; the returned function never throws. */
export function createApiHandler(opts: ApiHandlerOptions): RequestHandler {
  const { store, vault, logger, metrics } = opts;
  const now = opts.now ?? Date.now;
  const byType = new Map<string, ActivityDefinition>(ACTIVITIES.map((d) => [d.type, d]));
  const paths = new Set(ACTIVITIES.map((d) => d.path));
  // Identical bodies in flight at once share one execution, so a body is never signed twice.
  const inFlight = new Map<string, Promise<TransportResponse>>();

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
      verifyApiKeyStamp(stamp, body);
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
    verifyWebauthnStamp(stamp, body, auth.publicKey);
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
    let v: unknown;
    try {
      v = JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8'));
    } catch {
      throw new CountersignError('REQUEST_MALFORMED', 'request body is not valid JSON');
    }
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

  async function respondWith(a: ActivityRecord): Promise<TransportResponse> {
    return json(200, activityResponse(a, await votesWithUsers(store, a.id)));
  }

  async function submit(name: string, raw: Uint8Array, stamp: Stamp): Promise<TransportResponse> {
    const body = parseBody(raw);
    const type = body.type;
    if (type === undefined || type === null) throw missing('type');
    if (typeof type !== 'string') throw invalid('type', 'must be a string');
    const def = byType.get(type);
    if (def === undefined || def.path !== name)
      throw new CountersignError(
        'ACTIVITY_TYPE_UNSUPPORTED',
        `type: ${type} is not an activity accepted on /public/v1/submit/${name}`,
        { field: 'type' },
      );
    const org = await organizationOf(body);
    const caller = await authenticate(stamp, raw, org);
    const fingerprint = `sha256:${createHash('sha256').update(raw).digest('hex')}`;
    const existing = await store.getActivityByFingerprint(fingerprint);
    if (existing !== undefined) return respondWith(existing);
    const running = inFlight.get(fingerprint);
    if (running !== undefined) return running;
    const p = execute(def, body, raw, org, caller, fingerprint);
    inFlight.set(fingerprint, p);
    try {
      return await p;
    } finally {
      inFlight.delete(fingerprint);
    }
  }

  async function execute(
    def: ActivityDefinition,
    body: Params,
    raw: Uint8Array,
    org: OrganizationRecord,
    caller: Caller,
    fingerprint: string,
  ): Promise<TransportResponse> {
    const timestampMs = checkFreshness(body);
    const params = body.parameters;
    if (params === undefined || params === null) throw missing('parameters');
    if (typeof params !== 'object' || Array.isArray(params))
      throw invalid('parameters', 'must be a JSON object');
    if (caller.credentialOrgId !== org.id)
      throw new CountersignError(
        'REQUEST_NOT_AUTHORIZED',
        'request not authorized: a parent organization can read a sub-organization but not write to it',
        { field: 'organizationId' },
      );
    authorize(caller.user, org);
    const activityId = uuidv7();
    const nowMs = now();
    const outcome = await def.run(
      { store, vault, organization: org, user: caller.user, activityId, nowMs },
      params as Params,
    );
    const record: ActivityRecord = {
      id: activityId,
      organizationId: org.id,
      type: def.type,
      status: 'ACTIVITY_STATUS_COMPLETED',
      fingerprint,
      intentKey: def.intentKey,
      intentJson: JSON.stringify(params),
      resultKey: def.resultKey,
      resultJson: JSON.stringify(outcome.result),
      failureJson: null,
      timestampMs,
      createdAtMs: nowMs,
      updatedAtMs: nowMs,
    };
    const vote: VoteRecord = {
      id: randomUUID(),
      activityId,
      userId: caller.user.id,
      selection: 'VOTE_SELECTION_APPROVED',
      message: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8'),
      publicKey: caller.publicKey,
      signature: caller.signature,
      scheme: caller.scheme,
      createdAtMs: nowMs,
    };
    await store.write((tx) => {
      outcome.write?.(tx);
      tx.insertActivity(record, [vote]);
    });
    metrics.activity(def.type);
    logger.info({ activityId, type: def.type, organizationId: org.id }, 'activity completed');
    return respondWith(record);
  }

  /**
   * Until the policy engine lands, the root quorum decides: a root user of an organization whose
   * root quorum threshold is 1 may run every activity; anyone else meets an implicit deny.
   */
  function authorize(user: UserRecord, org: OrganizationRecord): void {
    if (user.isRoot && org.rootQuorumThreshold <= 1) return;
    throw new CountersignError('POLICY_DENIED', 'policy engine denied request implicitly', {
      meta: { outcome: 'OUTCOME_DENY_IMPLICIT' },
    });
  }

  async function query(name: string, raw: Uint8Array, stamp: Stamp): Promise<TransportResponse> {
    const body = parseBody(raw);
    const org = await organizationOf(body);
    const caller = await authenticate(stamp, raw, org);
    return json(200, await runQuery(name, { store, organization: org, user: caller.user }, body));
  }

  async function route(req: TransportRequest): Promise<TransportResponse> {
    if (req.path.startsWith(SUBMIT_PREFIX)) {
      const name = req.path.slice(SUBMIT_PREFIX.length);
      if (!paths.has(name))
        throw new CountersignError('ROUTE_NOT_FOUND', `unknown activity path /public/v1/submit/${name}`);
      return submit(name, req.body, parseStamp(req.headers));
    }
    if (req.path.startsWith(QUERY_PREFIX)) {
      const name = req.path.slice(QUERY_PREFIX.length);
      if (!isQuery(name))
        throw new CountersignError('ROUTE_NOT_FOUND', `unknown query path /public/v1/query/${name}`);
      return query(name, req.body, parseStamp(req.headers));
    }
    throw new CountersignError('ROUTE_NOT_FOUND', `no route for ${req.path}`);
  }

  return async (req) => {
    const started = process.hrtime.bigint();
    let res: TransportResponse;
    try {
      res = await route(req);
    } catch (e) {
      if (isCountersignError(e)) {
        logger.info({ path: req.path, code: e.code, field: e.field }, 'request refused');
        res = json(e.httpStatus, toRpcStatus(e));
      } else {
        const id = randomUUID();
        logger.error({ err: e, errorId: id, path: req.path }, 'internal error');
        res = json(500, { code: 13, message: `internal server error (${id})`, details: [] });
      }
    }
    metrics.request(req.path, res.status, Number(process.hrtime.bigint() - started) / 1e9);
    return res;
  };
}
