/**
 * `Signer.SignTransaction` for Tempo (type 0x76): the daemon serializes the structured fields (or
 * strictly parses `tempo.unsigned`), has the sender's digest signed by the public API on the
 * requested path and, for a sponsored transaction with `fee_payer_sign_with`, the fee payer's 0x78
 * digest too; it returns the envelope only after chains/tempo verified every signature.
 */
import {
  assemble,
  feePayerDigest,
  parseSignedTransaction,
  parseUnsignedTransaction,
  senderDigest,
  serializeUnsignedTransaction,
  transactionFromFields,
  verifySignedTransaction,
  type TempoSignature,
  type TempoTransaction,
  type TempoTransactionFields,
} from '../../../chains/tempo/index.js';
import type { Activity } from '../../client/client.js';
import { bytesTo0x, bytesToHex } from '../../shared/encoding.js';
import { CountersignError, invalid, isCountersignError, missing } from '../../shared/errors.js';
import { rawSignaturesOf, signedTransactionOf } from '../activity-result.js';
import type { CallContext, DaemonContext } from '../context.js';
import type {
  SignatureMessage,
  SignTransactionRequest,
  SignTransactionResponse,
  TempoTransactionMessage,
} from '../proto.js';
import { submitActivity, type SubmitActivityOptions } from '../submit-activity.js';
import { awaitingResponse, resolveMode, verifying } from './common.js';

const FEE_PAYER_FIELD = 'fee_payer_sign_with';

/** Handles one SignTransaction call whose transaction is `tempo`. */
export async function signTempoTransaction(
  ctx: DaemonContext,
  call: CallContext,
  req: SignTransactionRequest,
): Promise<SignTransactionResponse> {
  const organizationId = req.organizationId || ctx.defaultOrganizationId;
  if (req.signWith === '') throw missing('sign_with');
  const mode = resolveMode(req.mode);
  const { tx, unsigned } = tempoInput(req);
  const withFeePayer = req.feePayerSignWith !== '';
  if (withFeePayer && !tx.sponsored) {
    throw invalid(
      FEE_PAYER_FIELD,
      'the transaction is not sponsored (set tempo.sponsored); it has no fee payer',
    );
  }
  const sender = await ctx.signers.resolve(organizationId, req.signWith);
  const feePayer = withFeePayer
    ? await resolveFeePayer(ctx, organizationId, req.feePayerSignWith)
    : undefined;
  if (feePayer !== undefined && feePayer.toLowerCase() === sender.toLowerCase()) {
    throw invalid(
      FEE_PAYER_FIELD,
      'names the sender; a sponsored transaction is paid for by another account',
    );
  }
  const unsignedHex = bytesToHex(unsigned);
  const digest = senderDigest(tx);
  const log = call.log.child({ mode, sponsored: tx.sponsored, withFeePayer, digest: bytesToHex(digest) });

  // Everything that decides what is signed, so a retry with the same key but another request conflicts.
  const request = {
    organizationId,
    signWith: req.signWith,
    mode,
    chain: 'tempo',
    unsigned: unsignedHex,
    // A sponsored sender does not commit to the fee token; the fee payer's digest does.
    feeToken: tx.feeToken === null ? '' : bytesToHex(tx.feeToken),
    feePayerSignWith: req.feePayerSignWith,
  };
  const common = { method: 'SignTransaction', organizationId, idempotencyKey: req.idempotencyKey, request };
  const senderActivity = await submitActivity(
    ctx,
    { log },
    mode === 'SIGNING_MODE_SIGN_TRANSACTION'
      ? {
          ...common,
          activityName: 'sign_transaction',
          activityType: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
          parameters: {
            signWith: req.signWith,
            unsignedTransaction: unsignedHex,
            type: 'TRANSACTION_TYPE_TEMPO',
          },
        }
      : rawPayloadActivity(common, req.signWith, digest),
  );
  const senderOpen = awaitingResponse(senderActivity, mode, log);
  if (senderOpen !== undefined) return senderOpen;

  let senderSigned: Uint8Array;
  let senderSig: TempoSignature;
  if (mode === 'SIGNING_MODE_SIGN_TRANSACTION') {
    senderSigned = signedTransactionOf(senderActivity);
  } else {
    senderSig = rawSignature(senderActivity);
    senderSigned = verifying(() => assemble(tx, senderSig));
  }
  // The sender-signed envelope (for a sponsored transaction: the hand-off) passes the gate first.
  let verified = verifying(() => verifySignedTransaction(senderSigned, unsigned, sender));
  senderSig = parseSignedTransaction(senderSigned).senderSignature;
  const signatures: SignatureMessage[] = [toMessage(senderSig)];
  let signed = senderSigned;
  let activity = senderActivity;

  if (feePayer !== undefined) {
    // The fee payer commits to the fee token and to the sender the service just signed for.
    const payerDigest = feePayerDigest(tx, sender);
    activity = await submitActivity(
      ctx,
      { log },
      rawPayloadActivity(
        { ...common, method: 'SignTransaction:tempo:fee-payer' },
        req.feePayerSignWith,
        payerDigest,
      ),
    );
    const payerOpen = awaitingResponse(activity, mode, log);
    if (payerOpen !== undefined) return payerOpen;
    const payerSig = rawSignature(activity);
    signed = verifying(() => assemble(tx, senderSig, payerSig));
    verified = verifying(() =>
      verifySignedTransaction(signed, unsigned, sender, { expectedFeePayer: feePayer }),
    );
    signatures.push(toMessage(payerSig));
  }

  const transactionHash = bytesTo0x(verified.hash);
  log.info(
    { activityId: activity.id, transactionHash, feePayer: verified.feePayer },
    'transaction signed and verified',
  );
  return {
    signedTransaction: signed,
    transactionHash,
    signatures,
    signer: verified.signer,
    activityId: activity.id,
    state: 'ACTIVITY_STATE_COMPLETED',
    fingerprint: activity.fingerprint,
    mode,
  };
}

type Common = Pick<SubmitActivityOptions, 'method' | 'organizationId' | 'idempotencyKey' | 'request'>;

/** sign_raw_payloads of one 32-byte digest, signed as is (the digest is ours, never a caller's). */
function rawPayloadActivity(common: Common, signWith: string, digest: Uint8Array): SubmitActivityOptions {
  return {
    ...common,
    activityName: 'sign_raw_payloads',
    activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
    parameters: {
      signWith,
      payloads: [bytesToHex(digest)],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    },
  };
}

function rawSignature(activity: Activity): TempoSignature {
  const [sig] = rawSignaturesOf(activity, 1);
  if (sig === undefined) throw new CountersignError('UPSTREAM_ERROR', 'no signature in the result');
  return { r: sig.r, s: sig.s, yParity: sig.v };
}

function toMessage(sig: TempoSignature): SignatureMessage {
  const pad = (b: Uint8Array) => {
    const out = new Uint8Array(32);
    out.set(b, 32 - b.length);
    return out;
  };
  return { r: pad(sig.r), s: pad(sig.s), v: sig.yParity };
}

/** The fee payer's address, with errors naming `fee_payer_sign_with` rather than `sign_with`. */
async function resolveFeePayer(
  ctx: DaemonContext,
  organizationId: string,
  signWith: string,
): Promise<string> {
  try {
    return await ctx.signers.resolve(organizationId, signWith);
  } catch (e) {
    if (!isCountersignError(e) || e.field !== 'sign_with') throw e;
    throw new CountersignError(e.code, e.message.replace(/^sign_with/, FEE_PAYER_FIELD), {
      field: FEE_PAYER_FIELD,
      cause: e,
    });
  }
}

function tempoInput(req: SignTransactionRequest): { tx: TempoTransaction; unsigned: Uint8Array } {
  const m = req.tempo;
  if (m === undefined) throw missing('tempo');
  if (m.unsigned.length > 0) {
    if (hasStructuredFields(m))
      throw invalid('tempo', 'set either unsigned or the structured fields, not both');
    const unsigned = new Uint8Array(m.unsigned);
    let tx: TempoTransaction;
    try {
      tx = parseUnsignedTransaction(unsigned);
    } catch (e) {
      if (!isCountersignError(e)) throw e;
      throw new CountersignError(e.code, `tempo.unsigned: ${e.message}`, {
        field: 'tempo.unsigned',
        cause: e,
        meta: e.meta,
      });
    }
    return { tx, unsigned };
  }
  const tx = transactionFromFields(fieldsOf(m));
  return { tx, unsigned: serializeUnsignedTransaction(tx) };
}

function hasStructuredFields(m: TempoTransactionMessage): boolean {
  return (
    m.chainId !== '' ||
    m.nonce !== '' ||
    m.nonceKey !== '' ||
    m.gasLimit !== '' ||
    m.maxFeePerGas !== '' ||
    m.maxPriorityFeePerGas !== '' ||
    m.calls.length > 0 ||
    m.accessList.length > 0 ||
    m.validBefore !== '' ||
    m.validAfter !== '' ||
    m.feeToken !== '' ||
    m.sponsored
  );
}

function fieldsOf(m: TempoTransactionMessage): TempoTransactionFields {
  return {
    chainId: m.chainId,
    nonce: m.nonce,
    nonceKey: m.nonceKey,
    gasLimit: m.gasLimit,
    maxFeePerGas: m.maxFeePerGas,
    maxPriorityFeePerGas: m.maxPriorityFeePerGas,
    calls: m.calls.map((c) => ({ to: c.to, value: c.value, data: new Uint8Array(c.data) })),
    accessList: m.accessList.map((a) => ({
      address: a.address,
      storageKeys: a.storageKeys.map((k) => new Uint8Array(k)),
    })),
    validBefore: m.validBefore,
    validAfter: m.validAfter,
    feeToken: m.feeToken,
    sponsored: m.sponsored,
  };
}
