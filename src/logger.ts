/** The one root logger: JSON (pino) to stderr; modules take children. Never log keys, stamps or payloads. */
import pino, { type Logger } from 'pino';
import { NO_TRACE_FIELDS, traceLogFields } from './observability/tracing.js';

/** Field names that must never reach a log line, whatever object they travel in. */
export const REDACT_PATHS = [
  'apiPrivateKey',
  '*.apiPrivateKey',
  'privateKey',
  '*.privateKey',
  'mnemonic',
  '*.mnemonic',
  'stamp',
  '*.stamp',
  'headers["x-stamp"]',
  'headers["x-stamp-webauthn"]',
  'body',
  '*.body',
  'payload',
  '*.payload',
  'payloads',
  '*.payloads',
  'unsignedTransaction',
  '*.unsignedTransaction',
  'signedTransaction',
  '*.signedTransaction',
];

export function createLogger(
  level: string,
  destination: pino.DestinationStream = pino.destination(2),
): Logger {
  return pino(
    {
      level,
      base: { service: 'countersign' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // trace_id/span_id of the active span when tracing is on (observability/tracing.ts); else nothing.
      mixin: traceLogFields,
      // pino merges into the mixin's object; the shared empty one (tracing off) is left untouched.
      mixinMergeStrategy: (merge: object, mixin: object) =>
        mixin === NO_TRACE_FIELDS ? merge : Object.assign(mixin, merge),
    },
    destination,
  );
}
