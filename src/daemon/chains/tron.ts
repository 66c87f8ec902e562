/**
 * `Signer.SignTransaction` for Tron: the daemon builds `raw_data` from the structured fields (or
 * strictly parses the caller's), computes the txID itself, has it signed by the public API on the
 * requested path, and returns the signed `protocol.Transaction` only after chains/tron verified it
 * against the unsigned raw_data and `sign_with`, which must be the owner of the transaction.
 */
import {
  assembleSignedTransaction,
  encodeTronAddress,
  expectedTxIdCheck,
  parseRawData,
  parseSignedTransaction,
  parseTronAddress,
  rawDataFromFields,
  txId,
  verifySignedTransaction,
  type TronTransaction,
  type TronTransactionFields,
} from '../../../chains/tron/index.js';
import { bytesToHex, equalBytes } from '../../shared/encoding.js';
import { CountersignError, invalid, missing } from '../../shared/errors.js';
import { rawSignaturesOf, signedTransactionOf } from '../activity-result.js';
import type { CallContext, DaemonContext } from '../context.js';
import type {
  SignatureMessage,
  SignTransactionRequest,
  SignTransactionResponse,
  TronTransactionMessage,
} from '../proto.js';
import { submitActivity } from '../submit-activity.js';
import { awaitingResponse, resolveMode, verifying } from './common.js';

/** Handles one SignTransaction call whose transaction is `tron`. */
export async function signTronTransaction(
  ctx: DaemonContext,
  call: CallContext,
  req: SignTransactionRequest,
): Promise<SignTransactionResponse> {
  const organizationId = req.organizationId || ctx.defaultOrganizationId;
  const signWith = tronSignWith(req.signWith);
  const mode = resolveMode(req.mode);
  const { tx, unsigned } = tronInput(req);
  // Refused here, before anything is submitted: the service would refuse it too, and the node
  // would reject a signature that is not the owner's.
  tx.contract.forEach((c, i) => {
    if (!equalBytes(c.parameter.ownerAddress, signWith.bytes)) {
      throw invalid(
        'sign_with',
        `${signWith.address} is not the owner of the transaction (contract[${i}].owner_address is ${encodeTronAddress(c.parameter.ownerAddress)})`,
      );
    }
  });
  const unsignedHex = bytesToHex(unsigned);
  // The txID is always sha256 of the raw_data bytes sent; a caller's is only compared (tronInput).
  const id = txId(unsigned);
  const idHex = bytesToHex(id);
  const log = call.log.child({ mode, txId: idHex });

  const common = {
    method: 'SignTransaction',
    organizationId,
    idempotencyKey: req.idempotencyKey,
    request: { organizationId, signWith: signWith.address, mode, chain: 'tron', unsigned: unsignedHex },
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
              signWith: signWith.address,
              unsignedTransaction: unsignedHex,
              type: 'TRANSACTION_TYPE_TRON',
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
              signWith: signWith.address,
              payloads: [idHex],
              encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
              hashFunction: 'HASH_FUNCTION_NO_OP',
            },
          },
        );

  const pending = awaitingResponse(activity, mode, log);
  if (pending !== undefined) return pending;

  let signed: Uint8Array;
  if (mode === 'SIGNING_MODE_SIGN_TRANSACTION') {
    signed = signedTransactionOf(activity);
  } else {
    const [sig] = rawSignaturesOf(activity, 1);
    if (sig === undefined) throw new CountersignError('UPSTREAM_ERROR', 'no signature in the result');
    signed = verifying(() => assembleSignedTransaction(tx, { r: sig.r, s: sig.s, yParity: sig.v }));
  }
  // The one gate: raw_data byte-identical, one low-s signature recovering to sign_with == owner.
  const verified = verifying(() => verifySignedTransaction(signed, unsigned, signWith.address));
  const signature = verifying(() => signatureOf(signed));
  log.info({ activityId: activity.id, transactionHash: idHex }, 'transaction signed and verified');
  return {
    signedTransaction: signed,
    transactionHash: bytesToHex(verified.hash),
    signatures: [signature],
    signer: verified.signer,
    activityId: activity.id,
    state: 'ACTIVITY_STATE_COMPLETED',
    fingerprint: activity.fingerprint,
    mode,
  };
}

/** `sign_with` must be the signer's base58check Tron address (`T…`), as the wallet account lists it. */
function tronSignWith(value: string): { address: string; bytes: Uint8Array } {
  if (value === '') throw missing('sign_with');
  if (!value.startsWith('T')) {
    throw invalid('sign_with', 'must be the base58check Tron address (T…) of the key that signs');
  }
  return { address: value, bytes: parseTronAddress(value, 'sign_with') };
}

/** r, s and the y-parity of the one signature in a verified signed transaction (v is 27/28 or 0/1). */
function signatureOf(signed: Uint8Array): SignatureMessage {
  const [sig] = parseSignedTransaction(signed).signatures;
  if (sig === undefined) throw new Error('the signed transaction carries no signature');
  const v = sig[64] as number;
  return { r: sig.slice(0, 32), s: sig.slice(32, 64), v: v >= 27 ? v - 27 : v };
}

function tronInput(req: SignTransactionRequest): { tx: TronTransaction; unsigned: Uint8Array } {
  const t = req.tron;
  if (t === undefined) throw missing('tron');
  const structured = hasStructuredFields(t);
  if (t.unsigned.length > 0) {
    if (structured) throw invalid('tron', 'set either unsigned or the structured fields, not both');
    const unsigned = new Uint8Array(t.unsigned);
    let tx: TronTransaction;
    try {
      tx = parseRawData(unsigned);
    } catch (e) {
      // Name the request field; the parser's message says which part of raw_data is wrong.
      if (e instanceof CountersignError)
        throw new CountersignError(e.code, `tron.unsigned: ${e.message}`, {
          field: 'tron.unsigned',
          cause: e,
          meta: e.meta,
        });
      throw e;
    }
    if (t.expectedTxId !== '') expectedTxIdCheck(unsigned, t.expectedTxId, 'tron.expected_tx_id');
    return { tx, unsigned };
  }
  if (!structured) {
    throw new CountersignError(
      'FIELD_MISSING',
      'tron: set unsigned (raw_data bytes) or the structured fields of a transfer',
      { field: 'tron' },
    );
  }
  // rawDataFromFields checks expected_tx_id against what it built.
  const unsigned = rawDataFromFields(fieldsOf(t));
  return { tx: parseRawData(unsigned), unsigned };
}

function hasStructuredFields(t: TronTransactionMessage): boolean {
  return (
    t.kind !== 'TRON_TRANSACTION_KIND_UNSPECIFIED' ||
    t.ownerAddress !== '' ||
    t.toAddress !== '' ||
    t.amount !== '' ||
    t.tokenContract !== '' ||
    t.feeLimit !== '' ||
    t.refBlockBytes !== '' ||
    t.refBlockHash !== '' ||
    t.expiration !== '' ||
    t.timestamp !== '' ||
    t.memo.length > 0 ||
    t.permissionId !== 0
  );
}

const KIND = {
  TRON_TRANSACTION_KIND_UNSPECIFIED: 'UNSPECIFIED',
  TRON_TRANSACTION_KIND_TRX_TRANSFER: 'TRX_TRANSFER',
  TRON_TRANSACTION_KIND_TRC20_TRANSFER: 'TRC20_TRANSFER',
} as const satisfies Record<string, TronTransactionFields['kind']>;

function fieldsOf(t: TronTransactionMessage): TronTransactionFields {
  if (!Object.hasOwn(KIND, t.kind)) throw invalid('tron.kind', `unknown transaction kind ${t.kind}`);
  return {
    kind: KIND[t.kind as keyof typeof KIND],
    ownerAddress: t.ownerAddress,
    toAddress: t.toAddress,
    amount: t.amount,
    tokenContract: t.tokenContract,
    feeLimit: t.feeLimit,
    refBlockBytes: t.refBlockBytes,
    refBlockHash: t.refBlockHash,
    expiration: t.expiration,
    timestamp: t.timestamp,
    memo: new Uint8Array(t.memo),
    permissionId: t.permissionId,
    expectedTxId: t.expectedTxId,
  };
}
