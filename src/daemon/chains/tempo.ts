/**
 * SignTransaction's `tempo` member (type 0x76): the structured fields serialized (or
 * `tempo.unsigned` parsed strictly); the sender is `sign_with` and, for a sponsored transaction
 * with `fee_payer_sign_with`, the fee payer signs its 0x78 digest in a second activity, after the
 * sender's completed.
 */
import {
  serializeUnsignedTransaction,
  tempoAdapter,
  transactionFromFields,
  type TempoSigner,
  type TempoTransaction,
  type TempoTransactionFields,
} from '../../../chains/tempo/index.js';
import { bytesTo0x, bytesToHex } from '../../shared/encoding.js';
import { CountersignError, invalid, isCountersignError } from '../../shared/errors.js';
import type { DaemonContext } from '../context.js';
import type { TempoTransactionMessage } from '../proto.js';
import { unsignedOrFields, type DaemonChain, type SigningGroup } from './chain.js';

const FEE_PAYER_FIELD = 'fee_payer_sign_with';

export const tempoChain: DaemonChain<
  TempoTransaction,
  TempoTransactionFields,
  TempoSigner,
  TempoTransactionMessage
> = {
  member: 'tempo',
  transactionType: 'TRANSACTION_TYPE_TEMPO',
  adapter: tempoAdapter,
  takesFeePayer: true,
  sequential: true,
  answeredBy: 'last',
  input: (m) => unsignedOrFields('tempo', m, tempoAdapter, { hasFields, fields: fieldsOf, build }),
  signer: async (ctx, organizationId, req, { tx }) => {
    const withFeePayer = req.feePayerSignWith !== '';
    if (withFeePayer && !tx.sponsored) {
      throw invalid(
        FEE_PAYER_FIELD,
        'the transaction is not sponsored (set tempo.sponsored); it has no fee payer',
      );
    }
    const sender = await ctx.signers.resolve(organizationId, req.signWith);
    if (!withFeePayer) return { sender };
    const feePayer = await resolveFeePayer(ctx, organizationId, req.feePayerSignWith);
    if (feePayer.toLowerCase() === sender.toLowerCase()) {
      throw invalid(
        FEE_PAYER_FIELD,
        'names the sender; a sponsored transaction is paid for by another account',
      );
    }
    return { sender, feePayer };
  },
  groups: (_ctx, _org, req, mode, signer) => {
    const groups: SigningGroup[] = [
      {
        kind: mode === 'SIGNING_MODE_SIGN_TRANSACTION' ? 'transaction' : 'raw',
        signWith: req.signWith,
        digests: [0],
        method: 'SignTransaction',
      },
    ];
    if (signer.feePayer !== undefined) {
      groups.push({
        kind: 'raw',
        signWith: req.feePayerSignWith,
        digests: [1],
        method: 'SignTransaction:tempo:fee-payer',
      });
    }
    return Promise.resolve(groups);
  },
  transactionSigner: (signer) => ({ sender: signer.sender }),
  // A sponsored sender does not commit to the fee token; the fee payer's digest does.
  requestFields: ({ tx }, req) => ({
    feeToken: tx.feeToken === null ? '' : bytesToHex(tx.feeToken),
    feePayerSignWith: req.feePayerSignWith,
  }),
  logFields: ({ tx }, signer) => ({ sponsored: tx.sponsored, withFeePayer: signer.feePayer !== undefined }),
  hash: (v) => bytesTo0x(v.hash),
};

/** A sponsored sender's bytes leave the fee token out (the fee payer commits to it), so keep the built transaction. */
function build(fields: TempoTransactionFields): { tx: TempoTransaction; unsigned: Uint8Array } {
  const tx = transactionFromFields(fields);
  return { tx, unsigned: serializeUnsignedTransaction(tx) };
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

function hasFields(m: TempoTransactionMessage): boolean {
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
