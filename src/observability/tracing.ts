/**
 * OpenTelemetry tracing, off unless `--otlp-endpoint` is set. When it is, each thread that does
 * work (the gRPC daemon's, the service worker's) starts its own provider exporting OTLP/HTTP JSON,
 * and the W3C `traceparent` travels from the caller's gRPC metadata into the public-API request's
 * headers, so one SignTransaction is one trace across both threads and every hop is a span:
 * the gRPC handler, the public-API call and request, the stamp check, the policy, the signature,
 * the store write, the verification, and a send's broadcast.
 *
 * When tracing is off, `inSpan` and `inSpanSync` call the function and nothing else: no tracer, no
 * span object, no context switch (the hot path stays as it was), and the SDK (provider, exporter,
 * propagator) is not even loaded: a process without `--otlp-endpoint` starts without it.
 */
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { isCountersignError } from '../shared/errors.js';

/** The hops a span is made for: a closed set, so span names never carry an id or an address. */
export const SPAN_NAMES = [
  'grpc.server',
  'public_api.call',
  'public_api.request',
  'stamp.check',
  'policy.evaluate',
  'sign',
  'store.write',
  'verify',
  'broadcast',
] as const;
export type SpanName = (typeof SPAN_NAMES)[number];

export interface TracingOptions {
  /** The OTLP/HTTP traces URL (`--otlp-endpoint`, with `/v1/traces`). */
  readonly endpoint: string;
  /** `--service-name`: the resource's `service.name`. */
  readonly serviceName: string;
}

export interface Tracing {
  /**
   * Exports what is buffered and stops; false when the collector did not take it (within the export
   * timeout). Never rejects: an unreachable collector must not stop a drain.
   */
  shutdown(): Promise<boolean>;
}

const EXPORT_TIMEOUT_MS = 5_000;

let tracer: Tracer | undefined;
let started = false;

/** Whether this thread records spans. */
export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/** Starts tracing on this thread (once; a second call is refused). */
export async function startTracing(opts: TracingOptions): Promise<Tracing> {
  if (started) throw new Error('tracing already started on this thread');
  started = true;
  const [{ AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, otlp, resources, sdk] =
    await Promise.all([
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-base'),
    ]);
  // A collector that does not answer costs at most this per batch, and delays shutdown no longer.
  const exporter = new otlp.OTLPTraceExporter({ url: opts.endpoint, timeoutMillis: EXPORT_TIMEOUT_MS });
  const provider = new sdk.BasicTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': opts.serviceName }),
    // Spans leave in batches, off the request path; shutdown() flushes the rest.
    spanProcessors: [
      new sdk.BatchSpanProcessor(exporter, {
        scheduledDelayMillis: 1000,
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // W3C traceparent in and out: parentOf and traceparentHeader use this global propagator.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer('countersign');
  return {
    async shutdown() {
      tracer = undefined;
      try {
        await provider.shutdown();
        return true;
      } catch {
        return false;
      }
    },
  };
}

const getter = {
  keys: (carrier: Readonly<Record<string, string>>) => Object.keys(carrier),
  get: (carrier: Readonly<Record<string, string>>, key: string) => carrier[key],
};

/** The context a `traceparent` names (its span as the remote parent), or the root context. */
function parentOf(traceparent: string | undefined): Context {
  if (traceparent === undefined) return context.active();
  return propagation.extract(ROOT_CONTEXT, { traceparent }, getter);
}

function settle(span: Span, error: unknown): void {
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: isCountersignError(error) ? error.code : error instanceof Error ? error.name : 'error',
  });
  if (isCountersignError(error)) span.setAttribute('countersign.error_code', error.code);
}

interface SpanOptions {
  readonly kind?: SpanKind;
  readonly attributes?: Readonly<Record<string, string | number | boolean>>;
  /** A W3C traceparent from outside (gRPC metadata, a request header): the span's remote parent. */
  readonly traceparent?: string | undefined;
}

/** Runs `fn` inside a span named `name` (child of the active one), ending it when `fn` settles. */
export function inSpan<T>(name: SpanName, fn: () => Promise<T>, opts?: SpanOptions): Promise<T> {
  const t = tracer;
  if (t === undefined) return fn();
  const parent = parentOf(opts?.traceparent);
  const span = t.startSpan(
    name,
    { kind: opts?.kind ?? SpanKind.INTERNAL, ...(opts?.attributes ? { attributes: opts.attributes } : {}) },
    parent,
  );
  return context.with(trace.setSpan(parent, span), fn).then(
    (v) => {
      span.end();
      return v;
    },
    (e: unknown) => {
      settle(span, e);
      span.end();
      throw e;
    },
  );
}

/** `inSpan` for synchronous work (a signature check). */
export function inSpanSync<T>(name: SpanName, fn: () => T, opts?: SpanOptions): T {
  const t = tracer;
  if (t === undefined) return fn();
  const parent = parentOf(opts?.traceparent);
  const span = t.startSpan(name, { kind: opts?.kind ?? SpanKind.INTERNAL }, parent);
  try {
    return context.with(trace.setSpan(parent, span), fn);
  } catch (e) {
    settle(span, e);
    throw e;
  } finally {
    span.end();
  }
}

const NO_HEADER: { readonly traceparent?: string } = Object.freeze({});

/** The active span's `traceparent` to send on (empty when tracing is off or no span is active). */
export function traceparentHeader(): { readonly traceparent?: string } {
  if (tracer === undefined) return NO_HEADER;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier, { set: (c, k, v) => (c[k] = v) });
  return carrier.traceparent === undefined ? {} : { traceparent: carrier.traceparent };
}

/** What `traceLogFields` answers outside a span: one shared object, never merged into. */
export const NO_TRACE_FIELDS: Readonly<Record<string, never>> = Object.freeze({});

/** pino `mixin`: `trace_id` and `span_id` of the active span on every line logged inside one. */
export function traceLogFields(): Readonly<Record<string, string>> {
  if (tracer === undefined) return NO_TRACE_FIELDS;
  const sc = trace.getSpan(context.active())?.spanContext();
  return sc === undefined ? NO_TRACE_FIELDS : { trace_id: sc.traceId, span_id: sc.spanId };
}

export { SpanKind };
