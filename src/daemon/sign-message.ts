/**
 * `Signer.SignMessage`: an EIP-191 personal message, EIP-712 typed data, an EIP-7702
 * authorization or a raw digest, signed through `sign_raw_payloads` the way @turnkey/viem sends
 * them (reference 2.3), and verified against the locally computed digest before it is returned.
 */
import {
  hashPersonalMessage,
  hashTypedDataJson,
  parseAddress,
  toChecksumAddress,
} from '../../chains/ethereum/index.js';
import { bytesToHex, concatBytes, parseDecimal, UINT256_MAX, UINT64_MAX } from '../shared/encoding.js';
import { CountersignError, invalid, missing } from '../shared/errors.js';
import { openState, rawSignaturesOf } from './activity-result.js';
import { organizationOf, type CallContext, type DaemonContext } from './context.js';
import { payloadDigest, type KnownEncoding } from './payload-digest.js';
import type {
  EthereumAuthorizationRequestMessage,
  SignMessageRequest,
  SignMessageResponse,
} from './proto.js';
import { submitActivity } from './submit-activity.js';
import { verifyDigestSignature } from './verify-signature.js';
import { inSpanSync } from '../observability/tracing.js';

interface PreparedMessage {
  readonly kind: string;
  readonly payload: string;
  readonly encoding: KnownEncoding;
  readonly digest: Uint8Array;
}

/** Handles one SignMessage call. */
export async function signMessage(
  ctx: DaemonContext,
  call: CallContext,
  req: SignMessageRequest,
): Promise<SignMessageResponse> {
  const organizationId = organizationOf(ctx, req.organizationId);
  if (req.signWith === '') throw missing('sign_with');
  const m = prepare(req);
  const expectedSigner = await ctx.signers.resolve(organizationId, req.signWith);
  const log = call.log.child({ messageKind: m.kind, digest: bytesToHex(m.digest) });

  const parameters = {
    signWith: req.signWith,
    payloads: [m.payload],
    encoding: m.encoding,
    hashFunction: 'HASH_FUNCTION_NO_OP',
  };
  const activity = await submitActivity(
    ctx,
    { log },
    {
      method: 'SignMessage',
      organizationId,
      idempotencyKey: req.idempotencyKey,
      request: { organizationId, kind: m.kind, ...parameters },
      activityName: 'sign_raw_payloads',
      activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
      parameters,
    },
  );

  const open = openState(activity);
  if (open !== undefined) {
    return {
      serialized: new Uint8Array(0),
      digest: m.digest,
      signer: '',
      activityId: activity.id,
      state: open.state,
      fingerprint: activity.fingerprint,
    };
  }
  const [sig] = rawSignaturesOf(activity, 1);
  if (sig === undefined) throw new CountersignError('UPSTREAM_ERROR', 'no signature in the result');
  const signer = inSpanSync('verify', () => verifyDigestSignature(m.digest, sig, expectedSigner, m.kind));
  log.info({ activityId: activity.id }, 'message signed and verified');
  return {
    signature: { r: sig.r, s: sig.s, v: sig.v },
    // personal_sign / eth_signTypedData form: r ‖ s ‖ (27 + y-parity).
    serialized: concatBytes(sig.r, sig.s, Uint8Array.of(27 + sig.v)),
    digest: m.digest,
    signer,
    activityId: activity.id,
    state: 'ACTIVITY_STATE_COMPLETED',
    fingerprint: activity.fingerprint,
  };
}

function prepare(req: SignMessageRequest): PreparedMessage {
  switch (req.message) {
    case 'personalMessage': {
      const digest = hashPersonalMessage(new Uint8Array(req.personalMessage ?? new Uint8Array(0)));
      return {
        kind: 'personal_message',
        payload: bytesToHex(digest),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        digest,
      };
    }
    case 'typedDataJson': {
      const json = req.typedDataJson ?? '';
      return {
        kind: 'typed_data_json',
        payload: json,
        encoding: 'PAYLOAD_ENCODING_EIP712',
        digest: hashTypedDataJson(json, 'typed_data_json'),
      };
    }
    case 'authorization': {
      if (req.authorization === undefined) throw missing('authorization');
      const payload = authorizationJson(req.authorization);
      return {
        kind: 'authorization',
        payload,
        encoding: 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
        // The same parser the service runs, over the exact JSON that is sent.
        digest: payloadDigest(
          payload,
          'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
          'HASH_FUNCTION_NO_OP',
          'authorization',
        ),
      };
    }
    case 'digest': {
      const digest = new Uint8Array(req.digest ?? new Uint8Array(0));
      if (digest.length !== 32) throw invalid('digest', `must be 32 bytes, got ${digest.length}`);
      return {
        kind: 'digest',
        payload: bytesToHex(digest),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        digest,
      };
    }
    case undefined:
      throw new CountersignError(
        'FIELD_MISSING',
        'message: one of personal_message, typed_data_json, authorization, digest is required',
        { field: 'message' },
      );
    default:
      throw invalid(req.message, 'is not a supported message kind');
  }
}

/** `{address, chainId, nonce}` as viem's signAuthorization sends it: numbers while they are safe. */
function authorizationJson(a: EthereumAuthorizationRequestMessage): string {
  if (a.chainId === '') throw missing('authorization.chain_id');
  if (a.address === '') throw missing('authorization.address');
  if (a.nonce === '') throw missing('authorization.nonce');
  const chainId = parseDecimal(a.chainId, 'authorization.chain_id', UINT256_MAX);
  const nonce = parseDecimal(a.nonce, 'authorization.nonce', UINT64_MAX);
  const address = toChecksumAddress(parseAddress(a.address, 'authorization.address'));
  return `{"address":${JSON.stringify(address)},"chainId":${jsonInteger(chainId)},"nonce":${jsonInteger(nonce)}}`;
}

function jsonInteger(n: bigint): string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? n.toString() : JSON.stringify(n.toString());
}
