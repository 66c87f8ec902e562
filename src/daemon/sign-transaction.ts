/**
 * `Signer.SignTransaction`, one flow for every chain in chains/registry.ts: build the unsigned
 * transaction (structured fields or bytes) and the signer, plan the activities for the mode,
 * submit, and answer with nothing the chain's adapter did not verify against the unsigned bytes
 * and the signer. `prepareSignTransaction` is the build step alone: the dry run (EvaluatePolicies)
 * stops there, with the activity it would submit.
 */
import type { DigestToSign, RawSignature } from '../../chains/types.js';
import type { Activity } from '../client/client.js';
import { bytesToHex } from '../shared/encoding.js';
import { CountersignError, invalid, isCountersignError, missing } from '../shared/errors.js';
import { rawSignaturesOf, signedTransactionOf } from './activity-result.js';
import type { AnyDaemonChain, ChainInput, SigningGroup } from './chains/chain.js';
import { awaitingResponse, resolveMode, verifying, type ResolvedMode } from './chains/common.js';
import { chainOfMember, chainOfType } from './chains/registry.js';
import { organizationOf, type CallContext, type DaemonContext } from './context.js';
import type { SignTransactionRequest, SignTransactionResponse, VerifiedTransactionMessage } from './proto.js';
import { submitActivity, type SubmitActivityOptions } from './submit-activity.js';
import { inSpanSync } from '../observability/tracing.js';

/** A request built and planned: what would be submitted, and what checks the answer. */
export interface PreparedSignTransaction {
  readonly chain: AnyDaemonChain;
  readonly organizationId: string;
  readonly mode: ResolvedMode;
  readonly input: ChainInput<unknown>;
  readonly signer: unknown;
  readonly groups: readonly SigningGroup[];
  /** One per group, in order. */
  readonly activities: readonly SubmitActivityOptions[];
  /** What the call's log lines about the transaction carry (never secrets). */
  readonly logFields: Readonly<Record<string, unknown>>;
}

/** Validates and builds the request and plans its activities; submits nothing. */
export async function prepareSignTransaction(
  ctx: DaemonContext,
  req: SignTransactionRequest,
): Promise<PreparedSignTransaction> {
  const chain = chainOfMember(req.transaction);
  if (req.feePayerSignWith !== '' && chain.takesFeePayer !== true)
    throw invalid('fee_payer_sign_with', 'only Tempo sponsored transactions take a fee payer');
  const organizationId = organizationOf(ctx, req.organizationId);
  if (req.signWith === '') throw missing('sign_with');
  const mode = resolveMode(req.mode);
  const message = (req as unknown as Readonly<Record<string, unknown>>)[chain.member];
  const input = chain.input(message);
  const signer: unknown = await chain.signer(ctx, organizationId, req, input);
  const inRequest = chain.inRequest ?? (<T>(step: () => T): T => step());
  let digests: readonly DigestToSign[] = [];
  let groups: SigningGroup[];
  if (
    mode === 'SIGNING_MODE_SIGN_TRANSACTION' &&
    chain.groups === undefined &&
    chain.digestCount !== undefined
  ) {
    // One sign_transaction activity signs them all; nothing here needs the digests themselves.
    groups = defaultGroups(req, mode, chain.digestCount);
  } else {
    digests = inRequest(() => chain.adapter.digests(input.tx, signer));
    groups = await (chain.groups?.(ctx, organizationId, req, mode, signer, digests) ??
      Promise.resolve(defaultGroups(req, mode, digests.length)));
  }
  const unsignedHex = bytesToHex(input.unsigned);
  // Everything that decides what is signed, so a retry with the same key but another request conflicts.
  const request = {
    organizationId,
    signWith: req.signWith,
    mode,
    chain: chain.member,
    unsigned: unsignedHex,
    ...chain.requestFields?.(input, req),
  };
  // The shared fields written into each literal, not spread: a spread followed by properties its
  // source lacks costs this V8 (Node 20) a new hidden class on every call.
  const { idempotencyKey } = req;
  const activities = groups.map((g): SubmitActivityOptions => {
    if (g.kind === 'transaction') {
      return {
        organizationId,
        idempotencyKey,
        request,
        method: g.method,
        activityName: 'sign_transaction',
        activityType: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
        parameters: { signWith: g.signWith, unsignedTransaction: unsignedHex, type: chain.transactionType },
      };
    }
    const these = g.digests.map((i) => digests[i]!);
    return {
      organizationId,
      idempotencyKey,
      request,
      method: g.method,
      activityName: 'sign_raw_payloads',
      activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
      parameters: {
        signWith: g.signWith,
        payloads: these.map((d) => bytesToHex(d.payload)),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        // The digests are ours, never a caller's, and signed as they are; ed25519 signs the message itself.
        hashFunction: these.some((d) => d.scheme === 'ED25519')
          ? 'HASH_FUNCTION_NOT_APPLICABLE'
          : 'HASH_FUNCTION_NO_OP',
      },
    };
  });
  // Fields on the lines that are written, not a child logger: a pino child serializes (and censors)
  // its bindings when it is made, on every call, whether or not a line is written.
  const logFields = { mode, chain: chain.member, ...chain.logFields?.(input, signer) };
  return { chain, organizationId, mode, input, signer, groups, activities, logFields };
}

/** One activity of every digest with sign_with: sign_transaction, or sign_raw_payloads in raw mode. */
function defaultGroups(req: SignTransactionRequest, mode: ResolvedMode, count: number): SigningGroup[] {
  return [
    {
      kind: mode === 'SIGNING_MODE_SIGN_TRANSACTION' ? 'transaction' : 'raw',
      signWith: req.signWith,
      digests: Array.from({ length: count }, (_, i) => i),
      method: 'SignTransaction',
    },
  ];
}

/** Handles one SignTransaction call. */
export async function signTransaction(
  ctx: DaemonContext,
  call: CallContext,
  req: SignTransactionRequest,
): Promise<SignTransactionResponse> {
  const p = await prepareSignTransaction(ctx, req);
  const { chain, mode, input, signer, groups, logFields } = p;
  const { log } = call;
  const adapter = chain.adapter;
  const signatures: (RawSignature | undefined)[] = [];
  let fromService: Uint8Array | undefined;
  const collect = (activity: Activity, g: SigningGroup): void => {
    if (g.kind === 'raw') {
      const raw = rawSignaturesOf(activity, g.digests.length);
      g.digests.forEach((d, j) => (signatures[d] = raw[j]));
      return;
    }
    fromService = signedTransactionOf(activity);
    if (groups.length === 1) return;
    // Others sign too: the service's transaction passes the gate for its own signer first.
    const own = chain.transactionSigner?.(signer) ?? signer;
    const service = fromService;
    const v = verifying(() => adapter.verify(service, input.unsigned, own));
    g.digests.forEach((d, j) => (signatures[d] = v.signatures[j]));
  };

  const submitted: Activity[] = [];
  for (const [k, options] of p.activities.entries()) {
    const activity = await submitActivity(ctx, call, options);
    submitted.push(activity);
    if (chain.sequential !== true) continue;
    const pending = awaitingResponse(activity, mode, log, logFields);
    if (pending !== undefined) return pending;
    collect(activity, groups[k]!);
  }
  if (chain.sequential !== true) {
    // All are submitted before any is waited on, so approvers see them together.
    for (const activity of submitted) {
      const pending = awaitingResponse(activity, mode, log, logFields);
      if (pending !== undefined) return pending;
    }
    submitted.forEach((a, k) => collect(a, groups[k]!));
  }

  const signed =
    fromService !== undefined && groups.length === 1
      ? fromService
      : verifying(() => adapter.assemble(input.tx, signatures as RawSignature[], signer));
  // The one gate: nothing leaves that does not match `unsigned` and verify for the signer.
  const verified = inSpanSync('verify', () =>
    verifying(() => adapter.verify(signed, input.unsigned, signer)),
  );
  const out = chain.finish?.(signed, verified, input) ?? { signed, hash: chain.hash(verified) };
  const answered = (chain.answeredBy === 'last' ? submitted[submitted.length - 1] : submitted[0])!;
  if (log.isLevelEnabled('info')) {
    // Added to a copy rather than spread with them (a hidden class per call on this V8).
    const fields: Record<string, unknown> = Object.assign({}, logFields);
    fields['activityId'] = answered.id;
    fields['transactionHash'] = out.hash;
    log.info(fields, 'transaction signed and verified');
  }
  return {
    signedTransaction: out.signed,
    transactionHash: out.hash,
    signatures: verified.signatures.map((s) => ({ r: s.r, s: s.s, v: s.v })),
    signer: verified.signer,
    activityId: answered.id,
    state: 'ACTIVITY_STATE_COMPLETED',
    fingerprint: answered.fingerprint,
    mode,
  };
}

/**
 * GetActivity: a completed sign_transaction's result, verified as SignTransaction verifies its own
 * against the activity's intent (its unsigned transaction and the key it names). A key that cannot
 * be resolved to a signer, or a result that fails, is SIGNATURE_VERIFICATION_FAILED.
 */
export async function verifyActivityTransaction(
  ctx: DaemonContext,
  o: {
    readonly organizationId: string;
    readonly transactionType: string;
    readonly signWith: string;
    readonly unsigned: Uint8Array;
    readonly signed: Uint8Array;
  },
): Promise<Omit<VerifiedTransactionMessage, 'transactionType' | 'signedTransaction'>> {
  const chain = chainOfType(o.transactionType);
  if (chain === undefined) {
    throw new CountersignError(
      'UPSTREAM_ERROR',
      `public API activity is malformed: signTransactionIntent.type ${JSON.stringify(o.transactionType)} is not known`,
    );
  }
  const input = verifying(
    () => chain.inputOf?.(o.unsigned) ?? { tx: chain.adapter.parse(o.unsigned), unsigned: o.unsigned },
  );
  let signer: unknown;
  try {
    signer = await chain.signer(ctx, o.organizationId, { signWith: o.signWith, feePayerSignWith: '' }, input);
  } catch (e) {
    if (isCountersignError(e) && e.field !== undefined) {
      throw new CountersignError(
        'SIGNATURE_VERIFICATION_FAILED',
        `cannot verify the result: the activity's key ${o.signWith} has no expected signer (${e.message})`,
        { cause: e },
      );
    }
    throw e;
  }
  const verified = verifying(() => chain.adapter.verify(o.signed, o.unsigned, signer));
  return {
    transactionHash: chain.hash(verified),
    signatures: verified.signatures.map((s) => ({ r: s.r, s: s.s, v: s.v })),
    signer: verified.signer,
  };
}
