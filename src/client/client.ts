/**
 * The public-API client the daemon (and the auth proxy) use: builds activity bodies, stamps the
 * exact bytes it sends, and turns the API's answers into precise types or CountersignErrors.
 */
import { CountersignError, ERROR_TABLE, type ErrorCode } from '../shared/errors.js';
import type { ApiKeyStamper } from './stamper.js';
import { ANSWER_HEADER } from '../shared/request-handler.js';
import type { Transport } from './transport.js';
import { inSpan, SpanKind, traceparentHeader, tracingEnabled } from '../observability/tracing.js';

export const ACTIVITY_STATUSES = [
  'ACTIVITY_STATUS_CREATED',
  'ACTIVITY_STATUS_PENDING',
  'ACTIVITY_STATUS_COMPLETED',
  'ACTIVITY_STATUS_FAILED',
  'ACTIVITY_STATUS_CONSENSUS_NEEDED',
  'ACTIVITY_STATUS_REJECTED',
  'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
] as const;
export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number];

/** A failed activity's `failure` (an rpcStatus). */
export interface ActivityFailure {
  readonly code: number;
  readonly message: string;
  readonly details: readonly unknown[];
}

/** The fields of a public-API activity the daemon reads (reference/turnkey-api.md 3.2). */
export interface Activity {
  readonly id: string;
  readonly organizationId: string;
  readonly status: ActivityStatus;
  readonly type: string;
  /** `sha256:<hex of the body>`; approvals name the activity by it. */
  readonly fingerprint: string;
  /** `{<resultKey>: …}` once completed, `{}` before; read through the per-activity parsers. */
  readonly result: Readonly<Record<string, unknown>>;
  readonly failure: ActivityFailure | undefined;
  /** The service's app proofs, when the request asked for them (passed on unverified). */
  readonly appProofs?: readonly unknown[];
}

export interface PublicApiClientOptions {
  readonly transport: Transport;
  readonly stamper: ApiKeyStamper;
  readonly organizationId: string;
  /**
   * Ask for activity summaries (`X-Countersign-Answer: summary`): the answer carries what
   * {@link Activity} holds and not the intent, votes or nested copy. A service that does not know the
   * header answers the whole activity, which parses the same.
   */
  readonly summaries?: boolean;
}

export interface BuildActivityBodyOptions {
  readonly type: string;
  /** Defaults to the client's organization. */
  readonly organizationId?: string;
  readonly parameters: Record<string, unknown>;
  /** Defaults to now. */
  readonly timestampMs?: bigint;
}

const NAME_RE = /^[a-z0-9_]+$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A stamped client of one organization's public API. */
export class PublicApiClient {
  readonly organizationId: string;
  readonly #transport: Transport;
  readonly #stamper: ApiKeyStamper;
  readonly #submitHeaders: Readonly<Record<string, string>>;

  constructor(opts: PublicApiClientOptions) {
    this.#transport = opts.transport;
    this.#stamper = opts.stamper;
    this.organizationId = opts.organizationId;
    this.#submitHeaders = opts.summaries === true ? { [ANSWER_HEADER]: 'summary' } : {};
  }

  /** The activity envelope as sent: `{type, timestampMs, organizationId, parameters}` in that order. */
  buildActivityBody(opts: BuildActivityBodyOptions): Uint8Array {
    const timestampMs = opts.timestampMs ?? BigInt(Date.now());
    return encoder.encode(
      JSON.stringify({
        type: opts.type,
        timestampMs: timestampMs.toString(),
        organizationId: opts.organizationId ?? this.organizationId,
        parameters: opts.parameters,
      }),
    );
  }

  /** POSTs an activity body to `/public/v1/submit/<name>` and returns the activity. */
  async submit(name: string, body: Uint8Array): Promise<Activity> {
    const json = await this.#post(`/public/v1/submit/${checkName(name)}`, body, this.#submitHeaders);
    return parseActivityResponse(json);
  }

  /** POSTs a query to `/public/v1/query/<name>`; `organizationId` defaults to the client's. */
  async query<T>(name: string, body: Record<string, unknown>): Promise<T> {
    const bytes = encoder.encode(JSON.stringify({ organizationId: this.organizationId, ...body }));
    return (await this.#post(`/public/v1/query/${checkName(name)}`, bytes)) as T;
  }

  async #post(
    path: string,
    body: Uint8Array,
    extra: Readonly<Record<string, string>> = {},
  ): Promise<unknown> {
    const send = () => {
      // Built by assignment, not by spreads around the fixed headers: this V8 (Node 20) makes a new
      // hidden class for every spread that is followed by properties its source lacks.
      const headers: Record<string, string> = {};
      for (const k of Object.keys(extra)) headers[k] = extra[k] as string;
      headers['content-type'] = 'application/json';
      headers['x-stamp'] = this.#stamper.stamp(body);
      // The caller's trace continues in the service (W3C trace context), when tracing is on.
      const { traceparent } = traceparentHeader();
      if (traceparent !== undefined) headers['traceparent'] = traceparent;
      return this.#transport.send({ path, headers, body });
    };
    const res = await (tracingEnabled()
      ? inSpan('public_api.call', send, { kind: SpanKind.CLIENT, attributes: { 'url.path': path } })
      : send());
    const json = parseJson(res.body);
    if (res.status >= 200 && res.status < 300) {
      if (json === undefined) {
        throw new CountersignError(
          'UPSTREAM_ERROR',
          `public API answered HTTP ${res.status} without a JSON body`,
        );
      }
      return json;
    }
    throw upstreamError(res.status, json);
  }
}

function checkName(name: string): string {
  if (!NAME_RE.test(name)) throw new CountersignError('INTERNAL', `not a public API endpoint name: ${name}`);
  return name;
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(bytes)) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isErrorCode(v: unknown): v is ErrorCode {
  return typeof v === 'string' && Object.hasOwn(ERROR_TABLE, v);
}

/** gRPC codes a public API answers with, mapped to the code that keeps their meaning. */
const UPSTREAM_BY_GRPC: Readonly<Record<number, ErrorCode>> = {
  3: 'UPSTREAM_INVALID_ARGUMENT',
  5: 'UPSTREAM_NOT_FOUND',
  7: 'UPSTREAM_PERMISSION_DENIED',
  16: 'UPSTREAM_UNAUTHENTICATED',
};

/**
 * The CountersignError for a public-API error body `{code, message, details}` (an HTTP error
 * answer, or a failed activity's `failure`): our own code when the service put one in the details,
 * else one chosen by the gRPC code.
 */
export function upstreamError(httpStatus: number, body: unknown): CountersignError {
  if (!isRecord(body)) {
    // No rpcStatus: a proxy or load balancer answered, not the API.
    const code: ErrorCode =
      httpStatus === 502 || httpStatus === 503 || httpStatus === 504
        ? 'UPSTREAM_UNAVAILABLE'
        : 'UPSTREAM_ERROR';
    return new CountersignError(code, `public API answered HTTP ${httpStatus}`, { meta: { httpStatus } });
  }
  const message =
    typeof body['message'] === 'string' && body['message'] !== ''
      ? body['message']
      : `public API answered HTTP ${httpStatus}`;
  const details = Array.isArray(body['details']) ? (body['details'] as unknown[]) : [];
  // A policy deny carries the decision too: keep it, so the daemon can hand it to its caller.
  const decision = details.find((d) => isRecord(d) && typeof d['outcome'] === 'string');
  const policy = isRecord(decision)
    ? { outcome: decision['outcome'], policyEvaluations: decision['policyEvaluations'] ?? [] }
    : {};
  for (const d of details) {
    if (isRecord(d) && isErrorCode(d['countersignErrorCode'])) {
      return new CountersignError(d['countersignErrorCode'], message, { meta: { httpStatus, ...policy } });
    }
  }
  const grpcCode = typeof body['code'] === 'number' ? body['code'] : undefined;
  const code = (grpcCode === undefined ? undefined : UPSTREAM_BY_GRPC[grpcCode]) ?? 'UPSTREAM_ERROR';
  return new CountersignError(code, message, { meta: { httpStatus, ...policy } });
}

function malformed(what: string): CountersignError {
  return new CountersignError('UPSTREAM_ERROR', `public API response is malformed: ${what}`);
}

function requireString(obj: Record<string, unknown>, key: string, path: string): string {
  const v = obj[key];
  if (typeof v !== 'string') throw malformed(`${path}.${key} is not a string`);
  return v;
}

/** Validates `{activity: {…}}` into an Activity. */
export function parseActivityResponse(json: unknown): Activity {
  if (!isRecord(json) || !isRecord(json['activity'])) throw malformed('no activity object');
  const a = json['activity'];
  const status = requireString(a, 'status', 'activity');
  if (!(ACTIVITY_STATUSES as readonly string[]).includes(status)) {
    throw malformed(`activity.status ${JSON.stringify(status)} is not a known status`);
  }
  const result = a['result'] ?? {};
  if (!isRecord(result)) throw malformed('activity.result is not an object');
  return {
    id: requireString(a, 'id', 'activity'),
    organizationId: requireString(a, 'organizationId', 'activity'),
    status: status as ActivityStatus,
    type: requireString(a, 'type', 'activity'),
    fingerprint: requireString(a, 'fingerprint', 'activity'),
    result,
    failure: parseFailure(a['failure']),
    ...(Array.isArray(a['appProofs']) ? { appProofs: a['appProofs'] as unknown[] } : {}),
  };
}

function parseFailure(v: unknown): ActivityFailure | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) throw malformed('activity.failure is not an object');
  return {
    code: typeof v['code'] === 'number' ? v['code'] : 2,
    message: typeof v['message'] === 'string' ? v['message'] : '',
    details: Array.isArray(v['details']) ? (v['details'] as unknown[]) : [],
  };
}
