/**
 * `Signer.SignRawPayloads`: passes the payloads through to `sign_raw_payloads`, with every digest
 * computed locally first and every returned signature checked against it and the expected signer.
 */
import { bytesToHex } from '../shared/encoding.js';
import { CountersignError, invalid, missing } from '../shared/errors.js';
import { openState, rawSignaturesOf } from './activity-result.js';
import { organizationOf, type CallContext, type DaemonContext } from './context.js';
import { payloadDigest, type KnownEncoding, type KnownHashFunction } from './payload-digest.js';
import {
  HASH_FUNCTIONS,
  PAYLOAD_ENCODINGS,
  type SignRawPayloadsRequest,
  type SignRawPayloadsResponse,
} from './proto.js';
import { submitActivity } from './submit-activity.js';
import { signatureSchemeOf, verifyDigestSignature } from './verify-signature.js';
import { inSpanSync } from '../observability/tracing.js';

/** The public API takes at most this many payloads in one activity. */
const MAX_PAYLOADS = 100;

/** Handles one SignRawPayloads call. */
export async function signRawPayloads(
  ctx: DaemonContext,
  call: CallContext,
  req: SignRawPayloadsRequest,
): Promise<SignRawPayloadsResponse> {
  const organizationId = organizationOf(ctx, req.organizationId);
  if (req.signWith === '') throw missing('sign_with');
  if (req.payloads.length === 0) throw missing('payloads');
  if (req.payloads.length > MAX_PAYLOADS)
    throw invalid('payloads', `at most ${MAX_PAYLOADS} payloads per call`);
  const encoding = knownEncoding(req.encoding);
  const hashFunction = knownHashFunction(req.hashFunction);
  // A Solana address names an ed25519 key: its "digest" is the payload itself, checked with ed25519.
  const scheme = signatureSchemeOf(req.signWith);
  const digests = req.payloads.map((p, i) =>
    payloadDigest(p, encoding, hashFunction, `payloads[${i}]`, scheme),
  );
  const expectedSigner =
    scheme === 'ED25519' ? req.signWith : await ctx.signers.resolve(organizationId, req.signWith);
  const log = call.log.child({ digests: digests.map(bytesToHex) });

  const parameters = { signWith: req.signWith, payloads: [...req.payloads], encoding, hashFunction };
  const activity = await submitActivity(
    ctx,
    { log },
    {
      method: 'SignRawPayloads',
      organizationId,
      idempotencyKey: req.idempotencyKey,
      request: { organizationId, ...parameters },
      activityName: 'sign_raw_payloads',
      activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
      parameters,
    },
  );

  const open = openState(activity);
  if (open !== undefined) {
    return {
      signatures: [],
      digests,
      signer: '',
      activityId: activity.id,
      state: open.state,
      fingerprint: activity.fingerprint,
    };
  }
  const signatures = rawSignaturesOf(activity, digests.length);
  inSpanSync('verify', () =>
    signatures.forEach((sig, i) => {
      const digest = digests[i];
      if (digest === undefined) throw new CountersignError('INTERNAL', 'digest count mismatch');
      verifyDigestSignature(digest, sig, expectedSigner, `payloads[${i}]`);
    }),
  );
  log.info({ activityId: activity.id }, 'payloads signed and verified');
  return {
    signatures: signatures.map((s) => ({ r: s.r, s: s.s, v: s.v })),
    digests,
    signer: expectedSigner,
    activityId: activity.id,
    state: 'ACTIVITY_STATE_COMPLETED',
    fingerprint: activity.fingerprint,
  };
}

function knownEncoding(value: string): KnownEncoding {
  if (value === 'PAYLOAD_ENCODING_UNSPECIFIED') throw missing('encoding');
  if (!(PAYLOAD_ENCODINGS as readonly string[]).includes(value))
    throw invalid('encoding', `unknown encoding ${value}`);
  return value as KnownEncoding;
}

function knownHashFunction(value: string): KnownHashFunction {
  if (value === 'HASH_FUNCTION_UNSPECIFIED') throw missing('hash_function');
  if (!(HASH_FUNCTIONS as readonly string[]).includes(value)) {
    throw invalid('hash_function', `unknown hash function ${value}`, 'HASH_FUNCTION_INVALID');
  }
  return value as KnownHashFunction;
}
