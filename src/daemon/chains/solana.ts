/**
 * `Signer.SignTransaction` for Solana: the daemon compiles the structured fields (or strictly
 * parses `solana.unsigned`, the whole wire transaction), has `sign_with`'s slot signed by the
 * public API on the requested path, and returns the wire transaction only after chains/solana
 * verified it: the message is the one sent, every other signer's slot is untouched, and the slot
 * of `sign_with` holds a valid ed25519 signature by that key over the message.
 */
import { base58 } from '@scure/base';
import {
  assemble,
  messageFromFields,
  parsePublicKey,
  parseWireTransaction,
  requiredSignerIndex,
  serializeWireTransaction,
  unsignedTransaction,
  verifySignedTransaction,
  type SolanaTransaction,
  type SolanaTransactionFields,
} from '../../../chains/solana/index.js';
import { bytesToHex, concatBytes } from '../../shared/encoding.js';
import { CountersignError, invalid, isCountersignError, missing } from '../../shared/errors.js';
import { rawSignaturesOf, signedTransactionOf } from '../activity-result.js';
import type { CallContext, DaemonContext } from '../context.js';
import type {
  SignatureMessage,
  SignTransactionRequest,
  SignTransactionResponse,
  SolanaTransactionMessage,
} from '../proto.js';
import { submitActivity } from '../submit-activity.js';
import { awaitingResponse, resolveMode, verifying } from './common.js';

/** Handles one SignTransaction call whose transaction is `solana`. */
export async function signSolanaTransaction(
  ctx: DaemonContext,
  call: CallContext,
  req: SignTransactionRequest,
): Promise<SignTransactionResponse> {
  const organizationId = req.organizationId || ctx.defaultOrganizationId;
  if (req.signWith === '') throw missing('sign_with');
  // A Solana signer is named by its address, the base58 ed25519 public key (canonical spelling).
  const signerKey = parsePublicKey(req.signWith, 'sign_with');
  const mode = resolveMode(req.mode);
  const { tx, unsigned } = solanaInput(req);
  // Refused before anything is submitted: a key outside the required signers has no slot to fill.
  const slot = requiredSignerIndex(tx, signerKey, 'sign_with');
  const unsignedHex = bytesToHex(unsigned);
  const log = call.log.child({
    mode,
    version: tx.message.version,
    signerSlot: slot,
    signers: tx.message.header.numRequiredSignatures,
  });

  const common = {
    method: 'SignTransaction',
    organizationId,
    idempotencyKey: req.idempotencyKey,
    request: { organizationId, signWith: req.signWith, mode, chain: 'solana', unsigned: unsignedHex },
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
              type: 'TRANSACTION_TYPE_SOLANA',
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
            // ed25519 signs the message itself (RFC 8032), so there is no digest to send.
            parameters: {
              signWith: req.signWith,
              payloads: [bytesToHex(tx.messageBytes)],
              encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
              hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE',
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
    signed = verifying(() => assemble(tx, signerKey, concatBytes(sig.r, sig.s)));
  }
  // The one gate: same message, other slots as sent, and our slot verifies for sign_with.
  const verified = verifying(() => verifySignedTransaction(signed, unsigned, req.signWith));
  const ours = verified.signature;
  const signature: SignatureMessage = { r: ours.slice(0, 32), s: ours.slice(32, 64), v: 0 };
  // Solana's transaction id is the fee payer's signature (slot 0). When sign_with is another
  // required signer and the fee payer has not signed yet, the transaction has no id: ''.
  const transactionHash = verified.hash.some((b) => b !== 0) ? base58.encode(verified.hash) : '';
  log.info(
    { activityId: activity.id, transactionHash, missingSigners: verified.missingSigners.length },
    'transaction signed and verified',
  );
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

function solanaInput(req: SignTransactionRequest): { tx: SolanaTransaction; unsigned: Uint8Array } {
  const m = req.solana;
  if (m === undefined) throw missing('solana');
  if (m.unsigned.length > 0) {
    if (hasStructuredFields(m)) {
      throw invalid('solana', 'set either unsigned or the structured fields, not both');
    }
    const unsigned = new Uint8Array(m.unsigned);
    let tx: SolanaTransaction;
    try {
      tx = parseWireTransaction(unsigned);
    } catch (e) {
      if (!isCountersignError(e)) throw e;
      throw new CountersignError(e.code, `solana.unsigned: ${e.message}`, {
        field: 'solana.unsigned',
        cause: e,
        meta: e.meta,
      });
    }
    return { tx, unsigned };
  }
  const tx = unsignedTransaction(messageFromFields(fieldsOf(m)));
  return { tx, unsigned: serializeWireTransaction(tx) };
}

function hasStructuredFields(m: SolanaTransactionMessage): boolean {
  return (
    m.feePayer !== '' ||
    m.recentBlockhash !== '' ||
    m.instructions.length > 0 ||
    m.addressLookupTables.length > 0 ||
    (m.version !== '' && m.version !== 'SOLANA_MESSAGE_VERSION_UNSPECIFIED')
  );
}

const VERSION = {
  SOLANA_MESSAGE_VERSION_UNSPECIFIED: 'UNSPECIFIED',
  SOLANA_MESSAGE_VERSION_LEGACY: 'LEGACY',
  SOLANA_MESSAGE_VERSION_V0: 'V0',
} as const satisfies Record<string, NonNullable<SolanaTransactionFields['version']>>;

function fieldsOf(m: SolanaTransactionMessage): SolanaTransactionFields {
  const version = m.version === '' ? 'SOLANA_MESSAGE_VERSION_UNSPECIFIED' : m.version;
  if (!Object.hasOwn(VERSION, version))
    throw invalid('solana.version', `unknown Solana message version ${version}`);
  return {
    feePayer: m.feePayer,
    recentBlockhash: m.recentBlockhash,
    instructions: m.instructions.map((ix) => ({
      programId: ix.programId,
      accounts: ix.accounts.map((a) => ({
        pubkey: a.pubkey,
        isSigner: a.isSigner,
        isWritable: a.isWritable,
      })),
      data: new Uint8Array(ix.data),
    })),
    addressLookupTables: m.addressLookupTables.map((t) => ({
      address: t.address,
      addresses: [...t.addresses],
    })),
    version: VERSION[version as keyof typeof VERSION],
  };
}
