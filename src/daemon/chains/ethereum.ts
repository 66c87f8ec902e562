/**
 * `Signer.SignTransaction` for Ethereum: the daemon serializes (or strictly parses) the unsigned
 * transaction, has it signed by the public API on the requested path, and returns the signed
 * transaction only after chains/ethereum verified it against the unsigned bytes and the signer.
 */
import {
  assembleSignedTransaction,
  parseSignedTransaction,
  parseUnsignedTransaction,
  serializeUnsignedTransaction,
  signingDigest,
  transactionFromFields,
  verifySignedTransaction,
  type EthTransaction,
  type EthTransactionFields,
} from '../../../chains/ethereum/index.js';
import { bytesTo0x, bytesToHex } from '../../shared/encoding.js';
import { CountersignError, invalid, missing } from '../../shared/errors.js';
import { rawSignaturesOf, signedTransactionOf } from '../activity-result.js';
import type { CallContext, DaemonContext } from '../context.js';
import {
  ETHEREUM_TRANSACTION_TYPES,
  type EthereumTransactionMessage,
  type SignatureMessage,
  type SignTransactionRequest,
  type SignTransactionResponse,
} from '../proto.js';
import { submitActivity } from '../submit-activity.js';
import { awaitingResponse, resolveMode, verifying } from './common.js';

/** Handles one SignTransaction call whose transaction is `ethereum`. */
export async function signEthereumTransaction(
  ctx: DaemonContext,
  call: CallContext,
  req: SignTransactionRequest,
): Promise<SignTransactionResponse> {
  const organizationId = req.organizationId || ctx.defaultOrganizationId;
  if (req.signWith === '') throw missing('sign_with');
  const mode = resolveMode(req.mode);
  const { tx, unsigned } = ethereumInput(req);
  const expectedSigner = await ctx.signers.resolve(organizationId, req.signWith);
  const unsignedHex = bytesToHex(unsigned);
  const digest = signingDigest(unsigned);
  const log = call.log.child({ mode, txType: tx.type, digest: bytesToHex(digest) });

  const common = {
    method: 'SignTransaction',
    organizationId,
    idempotencyKey: req.idempotencyKey,
    request: { organizationId, signWith: req.signWith, mode, chain: 'ethereum', unsigned: unsignedHex },
  };
  const activity =
    mode === 'SIGNING_MODE_SIGN_TRANSACTION'
      ? await submitActivity(
          ctx,
          { log },
          {
            ...common,
            activityName: 'sign_transaction',
            activityType: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
            parameters: {
              signWith: req.signWith,
              unsignedTransaction: unsignedHex,
              type: 'TRANSACTION_TYPE_ETHEREUM',
            },
          },
        )
      : await submitActivity(
          ctx,
          { log },
          {
            ...common,
            activityName: 'sign_raw_payloads',
            activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
            parameters: {
              signWith: req.signWith,
              payloads: [bytesToHex(digest)],
              encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
              hashFunction: 'HASH_FUNCTION_NO_OP',
            },
          },
        );

  const pending = awaitingResponse(activity, mode, log);
  if (pending !== undefined) return pending;

  let signed: Uint8Array;
  let signature: SignatureMessage | undefined;
  if (mode === 'SIGNING_MODE_SIGN_TRANSACTION') {
    signed = signedTransactionOf(activity);
  } else {
    const [sig] = rawSignaturesOf(activity, 1);
    if (sig === undefined) throw new CountersignError('UPSTREAM_ERROR', 'no signature in the result');
    signature = { r: sig.r, s: sig.s, v: sig.v };
    signed = verifying(() => assembleSignedTransaction(tx, { r: sig.r, s: sig.s, yParity: sig.v }));
  }
  // The one gate: nothing leaves that does not re-serialize to `unsigned` and recover to the signer.
  const verified = verifying(() => verifySignedTransaction(signed, unsigned, expectedSigner));
  if (signature === undefined) {
    const parsed = parseSignedTransaction(signed);
    signature = { r: parsed.r, s: parsed.s, v: parsed.yParity };
  }
  const transactionHash = bytesTo0x(verified.hash);
  log.info({ activityId: activity.id, transactionHash }, 'transaction signed and verified');
  return {
    signedTransaction: signed,
    transactionHash,
    signatures: [signature],
    signer: verified.signer,
    activityId: activity.id,
    state: 'ACTIVITY_STATE_COMPLETED',
    fingerprint: activity.fingerprint,
    mode,
  };
}

function ethereumInput(req: SignTransactionRequest): { tx: EthTransaction; unsigned: Uint8Array } {
  switch (req.transaction) {
    case undefined:
      throw new CountersignError('FIELD_MISSING', 'transaction: one of ethereum is required', {
        field: 'transaction',
      });
    case 'ethereum':
      break;
    default:
      throw invalid(
        req.transaction,
        'this chain is not supported by the daemon yet',
        'TRANSACTION_TYPE_UNSUPPORTED',
      );
  }
  const e = req.ethereum;
  if (e === undefined) throw missing('ethereum');
  if (e.unsigned.length > 0) {
    if (hasStructuredFields(e)) {
      throw invalid('ethereum', 'set either unsigned or the structured fields, not both');
    }
    const unsigned = new Uint8Array(e.unsigned);
    return { tx: parseUnsignedTransaction(unsigned), unsigned };
  }
  const tx = transactionFromFields(fieldsOf(e));
  return { tx, unsigned: serializeUnsignedTransaction(tx) };
}

function hasStructuredFields(e: EthereumTransactionMessage): boolean {
  return (
    e.type !== 'ETHEREUM_TRANSACTION_TYPE_UNSPECIFIED' ||
    e.chainId !== '' ||
    e.nonce !== '' ||
    e.to !== '' ||
    e.value !== '' ||
    e.data.length > 0 ||
    e.gasLimit !== '' ||
    e.gasPrice !== '' ||
    e.maxFeePerGas !== '' ||
    e.maxPriorityFeePerGas !== '' ||
    e.accessList.length > 0 ||
    e.maxFeePerBlobGas !== '' ||
    e.blobVersionedHashes.length > 0 ||
    e.authorizationList.length > 0 ||
    e.legacyWithoutChainId
  );
}

const FIELD_TYPE = {
  ETHEREUM_TRANSACTION_TYPE_UNSPECIFIED: 'UNSPECIFIED',
  ETHEREUM_TRANSACTION_TYPE_LEGACY: 'LEGACY',
  ETHEREUM_TRANSACTION_TYPE_EIP2930: 'EIP2930',
  ETHEREUM_TRANSACTION_TYPE_EIP1559: 'EIP1559',
  ETHEREUM_TRANSACTION_TYPE_EIP4844: 'EIP4844',
  ETHEREUM_TRANSACTION_TYPE_EIP7702: 'EIP7702',
} as const satisfies Record<(typeof ETHEREUM_TRANSACTION_TYPES)[number], EthTransactionFields['type']>;

function fieldsOf(e: EthereumTransactionMessage): EthTransactionFields {
  if (!Object.hasOwn(FIELD_TYPE, e.type))
    throw invalid('ethereum.type', `unknown transaction type ${e.type}`);
  return {
    type: FIELD_TYPE[e.type as keyof typeof FIELD_TYPE],
    chainId: e.chainId,
    nonce: e.nonce,
    to: e.to,
    value: e.value,
    data: new Uint8Array(e.data),
    gasLimit: e.gasLimit,
    gasPrice: e.gasPrice,
    maxFeePerGas: e.maxFeePerGas,
    maxPriorityFeePerGas: e.maxPriorityFeePerGas,
    accessList: e.accessList.map((a) => ({
      address: a.address,
      storageKeys: a.storageKeys.map((k) => new Uint8Array(k)),
    })),
    maxFeePerBlobGas: e.maxFeePerBlobGas,
    blobVersionedHashes: e.blobVersionedHashes.map((h) => new Uint8Array(h)),
    authorizationList: e.authorizationList.map((a) => ({
      chainId: a.chainId,
      address: a.address,
      nonce: a.nonce,
      yParity: a.yParity,
      r: new Uint8Array(a.r),
      s: new Uint8Array(a.s),
    })),
    legacyWithoutChainId: e.legacyWithoutChainId,
  };
}
