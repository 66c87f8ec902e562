/**
 * TEST DOUBLE — NOT THE WALLET SERVICE. A minimal `RequestHandler` that answers the three
 * public-API calls the daemon makes (`submit/sign_transaction`, `submit/sign_raw_payloads`,
 * `query/get_private_key`) in Turnkey's wire shapes, signing with one fixed anvil dev key through
 * src/shared/secp256k1 and chains/ethereum. It exists so the daemon's unit tests can run before the
 * real service (src/service) lands; it checks no stamps against keys, evaluates no policies and
 * stores nothing durably. End-to-end tests must use the real service.
 */
import { createHash, randomUUID } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import {
  assembleSignedTransaction,
  hashAuthorization,
  hashTypedDataJson,
  parseAuthorizationJson,
  parseUnsignedTransaction,
  signingDigest,
} from '../../chains/ethereum/index.js';
import type { RequestHandler, TransportRequest, TransportResponse } from '../../src/client/transport.js';
import { bytesToHex, hexToBytes, utf8 } from '../../src/shared/encoding.js';
import { CountersignError, isCountersignError, toRpcStatus } from '../../src/shared/errors.js';
import { signDigest } from '../../src/shared/secp256k1.js';

/** Anvil's first dev-mnemonic account (public test key, funded on every anvil chain). */
export const ANVIL_KEY_0 = {
  privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
} as const;

export const FAKE_PRIVATE_KEY_ID = '7f3c1a52-1b7e-4d4e-9a51-0c2f1f9b8e01';

export type FakeActivityStatus = 'ACTIVITY_STATUS_COMPLETED' | 'ACTIVITY_STATUS_CONSENSUS_NEEDED';

export interface FakeSigningService {
  readonly handler: RequestHandler;
  /** Every request received, in order (path and exact body bytes). */
  readonly requests: { path: string; body: Uint8Array }[];
  /** How many digests the double has signed (a deduplicated resubmission signs none). */
  signatureCount(): number;
  /** Status the next new activities get; COMPLETED by default. */
  setStatus(status: FakeActivityStatus): void;
  /** Makes every submit answer with this error body instead (undefined: back to normal). */
  setError(err: CountersignError | undefined): void;
}

interface StoredActivity {
  readonly status: number;
  readonly body: Uint8Array;
}

const encoder = new TextEncoder();

function json(status: number, value: unknown): TransportResponse {
  return { status, body: encoder.encode(JSON.stringify(value)) };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown, field: string): string {
  if (typeof v !== 'string') throw new CountersignError('FIELD_MISSING', `${field}: is required`, { field });
  return v;
}

/** TEST DOUBLE: see the file comment. */
export function createFakeSigningService(opts: { organizationId: string }): FakeSigningService {
  const seckey = hexToBytes(ANVIL_KEY_0.privateKey, 'privateKey');
  const byFingerprint = new Map<string, StoredActivity>();
  const requests: { path: string; body: Uint8Array }[] = [];
  let signatures = 0;
  let status: FakeActivityStatus = 'ACTIVITY_STATUS_COMPLETED';
  let forcedError: CountersignError | undefined;

  function sign(digest: Uint8Array): { r: string; s: string; v: string } {
    signatures++;
    const sig = signDigest(digest, seckey);
    return {
      r: bytesToHex(sig.compact.subarray(0, 32)),
      s: bytesToHex(sig.compact.subarray(32, 64)),
      v: sig.recovery === 1 ? '01' : '00',
    };
  }

  function checkSignWith(signWith: string): void {
    if (signWith.toLowerCase() !== ANVIL_KEY_0.address.toLowerCase() && signWith !== FAKE_PRIVATE_KEY_ID) {
      throw new CountersignError('SIGN_WITH_NOT_FOUND', 'Could not find any resource to sign with', {
        field: 'parameters.signWith',
      });
    }
  }

  function payloadDigest(payload: string, encoding: string, hashFunction: string, field: string): Uint8Array {
    if (encoding === 'PAYLOAD_ENCODING_EIP712') return hashTypedDataJson(payload, field);
    if (encoding === 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION') {
      return hashAuthorization(parseAuthorizationJson(payload, field));
    }
    const bytes = encoding === 'PAYLOAD_ENCODING_TEXT_UTF8' ? utf8(payload) : hexToBytes(payload, field);
    if (hashFunction === 'HASH_FUNCTION_KECCAK256') return keccak_256(bytes);
    if (hashFunction === 'HASH_FUNCTION_SHA256')
      return new Uint8Array(createHash('sha256').update(bytes).digest());
    if (bytes.length !== 32)
      throw new CountersignError('PAYLOAD_INVALID', `${field}: must be 32 bytes`, { field });
    return bytes;
  }

  function result(type: string, p: Record<string, unknown>): Record<string, unknown> {
    checkSignWith(str(p['signWith'], 'parameters.signWith'));
    if (type === 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2') {
      const unsigned = hexToBytes(
        str(p['unsignedTransaction'], 'parameters.unsignedTransaction'),
        'unsignedTransaction',
      );
      const tx = parseUnsignedTransaction(unsigned);
      const sig = sign(signingDigest(unsigned));
      const signed = assembleSignedTransaction(tx, {
        r: hexToBytes(sig.r, 'r'),
        s: hexToBytes(sig.s, 's'),
        yParity: sig.v === '01' ? 1 : 0,
      });
      return { signTransactionResult: { signedTransaction: bytesToHex(signed) } };
    }
    if (type === 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS') {
      const payloads = p['payloads'];
      if (!Array.isArray(payloads))
        throw new CountersignError('FIELD_MISSING', 'parameters.payloads: is required');
      const encoding = str(p['encoding'], 'parameters.encoding');
      const hashFunction = str(p['hashFunction'], 'parameters.hashFunction');
      const digests = payloads.map((x, i) =>
        payloadDigest(str(x, `payloads.${i}`), encoding, hashFunction, `payloads.${i}`),
      );
      return { signRawPayloadsResult: { signatures: digests.map(sign) } };
    }
    throw new CountersignError('ACTIVITY_TYPE_UNSUPPORTED', `the test double does not implement ${type}`);
  }

  function submit(req: TransportRequest): TransportResponse {
    const fingerprint = `sha256:${bytesToHex(createHash('sha256').update(req.body).digest())}`;
    // Fingerprint idempotency, as the real API does it: the same body is the same activity.
    const seen = byFingerprint.get(fingerprint);
    if (seen !== undefined) return { status: seen.status, body: seen.body };
    const envelope = JSON.parse(new TextDecoder().decode(req.body)) as unknown;
    if (!isRecord(envelope) || !isRecord(envelope['parameters'])) {
      throw new CountersignError('REQUEST_MALFORMED', 'body is not an activity envelope');
    }
    const type = str(envelope['type'], 'type');
    const orgId = str(envelope['organizationId'], 'organizationId');
    if (orgId !== opts.organizationId)
      throw new CountersignError('ORGANIZATION_NOT_FOUND', 'no organization found with the given ID');
    const consensus = status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED';
    const activity = {
      id: randomUUID(),
      organizationId: orgId,
      status,
      type,
      intent: {},
      result: consensus ? {} : result(type, envelope['parameters']),
      votes: [],
      fingerprint,
      canApprove: false,
      canReject: !consensus,
      createdAt: { seconds: String(Math.floor(Date.now() / 1000)), nanos: '0' },
      updatedAt: { seconds: String(Math.floor(Date.now() / 1000)), nanos: '0' },
      failure: null,
    };
    const stored = json(200, { activity });
    byFingerprint.set(fingerprint, stored);
    return stored;
  }

  function query(name: string, req: TransportRequest): TransportResponse {
    const body = JSON.parse(new TextDecoder().decode(req.body)) as Record<string, unknown>;
    if (name === 'get_private_key' && body['privateKeyId'] === FAKE_PRIVATE_KEY_ID) {
      return json(200, {
        privateKey: {
          privateKeyId: FAKE_PRIVATE_KEY_ID,
          privateKeyName: 'anvil-0',
          curve: 'CURVE_SECP256K1',
          addresses: [
            { format: 'ADDRESS_FORMAT_COMPRESSED', address: '02ignored' },
            { format: 'ADDRESS_FORMAT_ETHEREUM', address: ANVIL_KEY_0.address },
          ],
        },
      });
    }
    throw new CountersignError('RESOURCE_NOT_FOUND', `${name}: not found`);
  }

  const handler: RequestHandler = async (req) => {
    requests.push({ path: req.path, body: Uint8Array.from(req.body) });
    try {
      if (req.headers['x-stamp'] === undefined) throw new CountersignError('STAMP_MISSING', 'missing stamp');
      const submitPrefix = '/public/v1/submit/';
      const queryPrefix = '/public/v1/query/';
      if (req.path.startsWith(submitPrefix)) {
        if (forcedError !== undefined) throw forcedError;
        return submit(req);
      }
      if (req.path.startsWith(queryPrefix)) return query(req.path.slice(queryPrefix.length), req);
      throw new CountersignError('ROUTE_NOT_FOUND', `no route ${req.path}`);
    } catch (e) {
      const err = isCountersignError(e) ? e : new CountersignError('INTERNAL', 'internal server error');
      return json(err.httpStatus, toRpcStatus(err));
    }
  };

  return {
    handler,
    requests,
    signatureCount: () => signatures,
    setStatus: (s) => {
      status = s;
    },
    setError: (e) => {
      forcedError = e;
    },
  };
}
