/** The one root logger: JSON (pino) to stderr; modules take children. Never log keys, stamps or payloads. */
import pino, { type Logger } from 'pino';
import { NO_TRACE_FIELDS, traceLogFields } from './observability/tracing.js';

/** What a redacted value is written as. */
export const CENSOR = '[redacted]';

/**
 * Field names that must never reach a log line, whatever object they travel in: censored at the top
 * of a line, of a child's bindings and of a serialized error, and one level inside any of their
 * values (`{ req: { body } }`, an error's own `payload`).
 */
const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'apiPrivateKey',
  'privateKey',
  'mnemonic',
  'stamp',
  'body',
  'payload',
  'payloads',
  'unsignedTransaction',
  'signedTransaction',
]);

/** Header names censored one level inside a line's values (a `headers` object), in any case. */
const SECRET_HEADERS: ReadonlySet<string> = new Set(['x-stamp', 'x-stamp-webauthn']);

const hasOwn = Object.prototype.hasOwnProperty;

function isSecretInner(key: string): boolean {
  if (SECRET_FIELDS.has(key)) return true;
  const c = key.charCodeAt(0);
  return (c === 0x78 || c === 0x58) && SECRET_HEADERS.has(key.toLowerCase()); // 'x' or 'X'
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object';
}

/**
 * `value` with its own secret fields censored: the same object when it has none (the common case,
 * nothing copied), else a copy; the caller's object is never changed. An array's elements are
 * indices, never secret names, so an array comes back as it is.
 */
function censorInner<T>(value: T): T {
  if (!isRecord(value) || Array.isArray(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    if (!hasOwn.call(value, key) || !isSecretInner(key)) continue;
    if (out === undefined) {
      // An error keeps its prototype and the message and stack its own properties hide from `in`
      // (an error in a child's bindings reaches the error serializer after this copy).
      out = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
      Object.assign(out, value);
      if (value instanceof Error) {
        out['message'] = value.message;
        out['stack'] = value.stack;
      }
    }
    out[key] = CENSOR;
  }
  return (out ?? value) as T;
}

/**
 * A line's fields (or a child's bindings) with every secret field censored, at the top and one
 * level inside each value; `skip` is a key left to its serializer (the error key), which censors
 * its own output. The same object when nothing is secret.
 */
function censorFields<T extends object>(fields: T, skip?: string): T {
  const record = fields as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key in record) {
    if (!hasOwn.call(record, key) || key === skip) continue;
    const value = record[key];
    const censored = SECRET_FIELDS.has(key) ? CENSOR : censorInner(value);
    if (censored === value) continue;
    out ??= Object.assign({}, record);
    out[key] = censored;
  }
  return (out ?? fields) as T;
}

/** pino's error serializer, then the error's own secret fields censored. */
function serializeError(e: unknown): unknown {
  return censorInner(pino.stdSerializers.err(e as Error));
}

export function createLogger(
  level: string,
  destination: pino.DestinationStream = pino.destination(2),
): Logger {
  // Redaction is ours rather than pino's `redact` option: with wildcard paths ('*.body') pino runs
  // its path redactor over every field of every line and of every child's bindings (~4 µs a child
  // and ~9 µs a four-field line against under 1 µs each, and the largest allocator of the gRPC
  // thread's calls: bench/PROFILE.md, stop 34). The fields and depth it covers are the same.
  const root = pino(
    {
      level,
      base: { service: 'countersign' },
      serializers: { err: serializeError },
      formatters: { log: (fields: Record<string, unknown>) => censorFields(fields, 'err') },
      // trace_id/span_id of the active span when tracing is on (observability/tracing.ts); else nothing.
      mixin: traceLogFields,
      // pino merges into the mixin's object; the shared empty one (tracing off) is left untouched.
      mixinMergeStrategy: (merge: object, mixin: object) =>
        mixin === NO_TRACE_FIELDS ? merge : Object.assign(mixin, merge),
    },
    destination,
  );
  // A child's bindings are written once, when it is made, and pino's formatters do not see them:
  // censored here. Children inherit this `child` from the root (pino makes them with Object.create).
  type Child = (this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => Logger;
  const pinoChild = root.child as unknown as Child;
  const child: Child = function (bindings, options) {
    return pinoChild.call(this, censorFields(bindings), options);
  };
  root.child = child as unknown as Logger['child'];
  return root;
}
