/**
 * eth_send_transaction (V1 flat fields, V2 `calls`): validates at the edge, fills what is missing,
 * lets the policy gate see every call as `eth.tx`, then — in the transaction that records the
 * activity — takes the nonces from the durable allocator, signs and records the send (INITIALIZED)
 * with its signed bytes. The tracker broadcasts it once committed. A request refused before that
 * write takes no nonce.
 *
 * One call without `sponsor` is a plain EIP-1559 transaction from the account (DIRECT). With
 * `sponsor`, or more than one call, the calls run as a batch through the gas station
 * (send/batch.ts): SPONSORED when the service's sponsor submits and pays, BATCH when the account
 * submits its own batch.
 */
import { uuidv7 } from '../ids.js';
import { keccak_256 } from '../../shared/keccak.js';
import { addressFromPublicKey, describeTransaction, parseAddress } from '../../../chains/ethereum/index.js';
import { MAX_TX_NONCE, type EthTransaction } from '../../../chains/ethereum/types.js';
import {
  bytesTo0x,
  hexToBytes,
  parseDecimal,
  UINT256_MAX,
  UINT64_MAX,
  zeroize,
} from '../../shared/encoding.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import {
  batchGasFloor,
  batchGasLimit,
  batchTransaction,
  intrinsicGas,
  signAuthorization,
  signBatch,
} from '../send/batch.js';
import { isDelegatedTo, type BatchCall } from '../send/batchExecutor.js';
import { eip155ChainId, type EthChain } from '../send/chains.js';
import { PreparedCache, sendContextOf } from '../send/context.js';
import {
  estimateCallGas,
  fillTransaction,
  pendingNonce,
  suggestFees,
  type FilledTransaction,
} from '../send/fillTransaction.js';
import {
  accountCode,
  chainGasStationNonce,
  gasStationNonceKey,
  type GasStation,
} from '../send/gasStation.js';
import { signEthTransaction } from '../send/signEthTransaction.js';
import { openSponsorKey } from '../send/sponsorKey.js';
import { signerFacts, withContractCallFacts } from '../signing-facts.js';
import type { TransactionFacts } from '../policy/index.js';
import type { SendKind, SendTransactionRecord, SigningKeyRecord, StoreTx } from '../store/types.js';
import { asObject, optBool, optString, reqArray, reqString, type Params } from './params.js';
import { resolveSigner, withKey } from './signing.js';
import type { ActivityContext, ActivityDefinition, ActivityFacts, ActivityOutcome } from './types.js';

const P = 'parameters';
/** A batch holds at most this many calls (the executor refuses more). */
const MAX_CALLS = 50;
/** A batch without a caller's deadline may run this long after it was signed. */
const DEFAULT_DEADLINE_S = 3_600n;

interface Call extends BatchCall {
  /** Field prefix of the call for errors (`parameters` or `parameters.calls.0`). */
  readonly prefix: string;
}

interface ParsedSend {
  readonly kind: SendKind;
  readonly caip2: string;
  readonly chain: EthChain;
  readonly from: `0x${string}`;
  readonly calls: readonly Call[];
  readonly nonce: bigint | undefined;
  readonly gasLimit: bigint | undefined;
  readonly maxFeePerGas: bigint | undefined;
  readonly maxPriorityFeePerGas: bigint | undefined;
  /** Batches only: unix seconds after which the executor refuses the batch. */
  readonly deadline: bigint;
  readonly gasStationNonce: bigint | undefined;
}

function optDecimal(p: Params, key: string, prefix: string, max: bigint): bigint | undefined {
  const v = optString(p, key, prefix);
  return v === undefined || v === '' ? undefined : parseDecimal(v, `${prefix}.${key}`, max);
}

function parseCall(p: Params, prefix: string): Call {
  const to = parseAddress(reqString(p, 'to', prefix), `${prefix}.to`);
  const value = optDecimal(p, 'value', prefix, UINT256_MAX) ?? 0n;
  const dataHex = optString(p, 'data', prefix) ?? '';
  if (dataHex !== '' && !dataHex.startsWith('0x'))
    throw invalid(`${prefix}.data`, 'must be 0x-prefixed hex calldata');
  return { to, value, data: hexToBytes(dataHex, `${prefix}.data`), prefix };
}

/** Validates everything but the signer: fields in the order a reader checks them. */
function parseSend(ctx: ActivityContext, p: Params, version: 1 | 2): ParsedSend {
  const sponsor = optBool(p, 'sponsor', P) === true;
  const caip2 = reqString(p, 'caip2', P);
  const chain = sendContextOf(ctx.store).chains.get(caip2);
  if (chain === undefined)
    throw invalid(
      `${P}.caip2`,
      eip155ChainId(caip2) === undefined
        ? `'${caip2}' is not an EVM chain (eip155:<chain id>)`
        : `no RPC endpoint is configured for '${caip2}' (--chain-rpc ${caip2}=URL)`,
    );
  const fromRaw = reqString(p, 'from', P);
  parseAddress(fromRaw, `${P}.from`);
  const from = fromRaw.toLowerCase() as `0x${string}`;
  let calls: Call[];
  if (version === 1) {
    calls = [parseCall(p, P)];
  } else {
    const raw = reqArray(p, 'calls', P);
    if (raw.length === 0 || raw.length > MAX_CALLS)
      throw invalid(`${P}.calls`, `holds ${raw.length} calls; a send holds 1 to ${MAX_CALLS}`);
    calls = raw.map((c, i) => parseCall(asObject(c, `${P}.calls.${i}`), `${P}.calls.${i}`));
  }
  const kind: SendKind = sponsor ? 'SPONSORED' : calls.length > 1 ? 'BATCH' : 'DIRECT';
  const nowS = BigInt(Math.floor(ctx.nowMs / 1000));
  const givenDeadline = optDecimal(p, 'deadline', P, UINT256_MAX);
  const gasStationNonce = optDecimal(p, 'gasStationNonce', P, UINT256_MAX);
  if (kind === 'DIRECT') {
    for (const [key, v] of [
      ['deadline', givenDeadline],
      ['gasStationNonce', gasStationNonce],
    ] as const)
      if (v !== undefined)
        throw invalid(
          `${P}.${key}`,
          'belongs to batches through the gas station (sponsor true, or more than one call); a single unsponsored call is a plain transaction',
        );
  }
  if (givenDeadline !== undefined && givenDeadline <= nowS)
    throw invalid(`${P}.deadline`, `${givenDeadline} (unix seconds) has passed; it is now ${nowS}`);
  const nonce = optDecimal(p, 'nonce', P, MAX_TX_NONCE);
  if (kind === 'SPONSORED' && nonce !== undefined)
    throw invalid(
      `${P}.nonce`,
      "a sponsored send is submitted with the sponsor's own nonce; order sponsored batches with gasStationNonce",
    );
  const gasLimit = optDecimal(p, 'gasLimit', P, UINT64_MAX);
  const only = calls[0];
  if (kind === 'DIRECT' && only !== undefined && gasLimit !== undefined && gasLimit < intrinsicGas(only.data))
    throw invalid(
      `${P}.gasLimit`,
      `${gasLimit} is below the intrinsic gas of this call (${intrinsicGas(only.data)}: 21000 + calldata, EIP-2028)`,
    );
  const maxFeePerGas = optDecimal(p, 'maxFeePerGas', P, UINT256_MAX);
  const maxPriorityFeePerGas = optDecimal(p, 'maxPriorityFeePerGas', P, UINT256_MAX);
  if (maxFeePerGas !== undefined && maxPriorityFeePerGas !== undefined && maxPriorityFeePerGas > maxFeePerGas)
    throw invalid(`${P}.maxPriorityFeePerGas`, 'must not exceed maxFeePerGas (EIP-1559)');
  return {
    kind,
    caip2,
    chain,
    from,
    calls,
    nonce,
    gasLimit,
    maxFeePerGas,
    maxPriorityFeePerGas,
    deadline: givenDeadline ?? nowS + DEFAULT_DEADLINE_S,
    gasStationNonce,
  };
}

/** The organization's secp256k1 key whose Ethereum address is `from`. */
async function resolveFrom(ctx: ActivityContext, from: string): Promise<SigningKeyRecord> {
  const field = `${P}.from`;
  const rec = await resolveSigner(ctx, from, field);
  const own =
    rec.curve === 'CURVE_SECP256K1' &&
    addressFromPublicKey(hexToBytes(rec.publicKey, field)).toLowerCase() === from;
  if (!own)
    throw new CountersignError(
      'SIGN_WITH_NOT_FOUND',
      `${field}: '${from}' is not an Ethereum account or key of organization ${ctx.organization.id}`,
      { field },
    );
  return rec;
}

/** What a batch needs from the chain, read before the policy gate and used unchanged after it. */
interface BatchPlan {
  readonly gasStation: GasStation;
  /** Who signs and pays for the transaction: the sponsor, or the account itself. */
  readonly submitter: `0x${string}`;
  /** True while the account does not delegate to the executor: the transaction carries its authorization. */
  readonly delegating: boolean;
  readonly chainGasStationNonce: bigint;
  readonly submitterPending: bigint;
  /** The account's own pending nonce (its authorization's nonce, when sponsored). */
  readonly accountPending: bigint;
  readonly gasLimit: bigint;
  readonly maxFeePerGas: bigint;
  readonly maxPriorityFeePerGas: bigint;
}

interface PreparedSend {
  readonly parsed: ParsedSend;
  readonly signer: SigningKeyRecord;
  /** DIRECT sends. */
  readonly filled?: FilledTransaction;
  /** SPONSORED and BATCH sends. */
  readonly plan?: BatchPlan;
}

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** Filled once per activity: the facts hook fills, run signs the same transaction. */
const PREPARED = new PreparedCache<PreparedSend>(5 * 60_000);

async function planBatch(ctx: ActivityContext, parsed: ParsedSend): Promise<BatchPlan> {
  const gasStation = sendContextOf(ctx.store).gasStation;
  if (gasStation === undefined)
    throw new CountersignError('GAS_STATION_UNAVAILABLE', `${P}.sponsor: this service has no gas station`, {
      field: `${P}.sponsor`,
    });
  const { chain, from } = parsed;
  // Nothing here needs the executor deployed (its nonce is read with a state override); it is
  // deployed in run, after the policy gate, so a dry run or a denied request never spends gas.
  const submitter = parsed.kind === 'SPONSORED' ? gasStation.sponsor.address : from;
  const [code, chainGsNonce, submitterPending, accountPending, fees, estimates] = await Promise.all([
    accountCode(chain, from),
    chainGasStationNonce(chain, from),
    parsed.nonce === undefined ? pendingNonce(chain, submitter) : Promise.resolve(0n),
    parsed.kind === 'SPONSORED' ? pendingNonce(chain, from) : Promise.resolve(0n),
    suggestFees(chain, parsed),
    parsed.gasLimit === undefined
      ? Promise.all(
          parsed.calls.map((c) =>
            estimateCallGas(chain, { from, ...c }, c.prefix === P ? `${P}.to` : c.prefix),
          ),
        )
      : Promise.resolve([]),
  ]);
  const delegating = !isDelegatedTo(code, gasStation.executor);
  const shape = {
    calls: parsed.calls,
    nonce: parsed.gasStationNonce ?? chainGsNonce,
    deadline: parsed.deadline,
    delegating,
  };
  if (parsed.gasLimit !== undefined && parsed.gasLimit < batchGasFloor(shape))
    throw invalid(
      `${P}.gasLimit`,
      `${parsed.gasLimit} is below the intrinsic gas of this batch (${batchGasFloor(shape)}: 21000 + calldata${delegating ? ' + 25000 for the EIP-7702 authorization' : ''})`,
    );
  return {
    gasStation,
    submitter,
    delegating,
    chainGasStationNonce: chainGsNonce,
    submitterPending,
    accountPending,
    gasLimit: parsed.gasLimit ?? batchGasLimit({ ...shape, callEstimates: estimates }),
    ...fees,
  };
}

async function prepare(ctx: ActivityContext, p: Params, version: 1 | 2): Promise<PreparedSend> {
  const parsed = parseSend(ctx, p, version);
  const signer = await resolveFrom(ctx, parsed.from);
  const call = parsed.calls[0];
  if (parsed.kind !== 'DIRECT' || call === undefined)
    return { parsed, signer, plan: await planBatch(ctx, parsed) };
  const filled = await fillTransaction(
    { ...parsed, to: call.to, value: call.value, data: call.data },
    await ctx.store.getNextNonce(parsed.caip2, parsed.from),
  );
  return { parsed, signer, filled };
}

/**
 * What the policy gate reads: each call as the `eth.tx` the account would send on its own, with the
 * batch's gas limit; a sponsored call shows zero fees, since the account pays none.
 */
async function sendFacts(ctx: ActivityContext, p: Params, version: 1 | 2): Promise<ActivityFacts> {
  const prepared = await prepare(ctx, p, version);
  PREPARED.put(ctx.activityId, prepared, Date.now());
  const { parsed, plan, filled } = prepared;
  const describe = (tx: EthTransaction) =>
    withContractCallFacts(ctx, {
      chain: 'eth',
      tx: describeTransaction(tx, parsed.from),
    }) as Promise<TransactionFacts>;
  const signer = await signerFacts(ctx, prepared.signer);
  if (filled !== undefined) return { ...signer, transaction: await describe(filled.tx) };
  if (plan === undefined)
    throw new CountersignError('INTERNAL', 'a prepared send holds neither a transaction nor a batch plan');
  const sponsored = parsed.kind === 'SPONSORED';
  // The account's nonce as the allocator would take it now (a prediction, as for a single call).
  const stored = (await ctx.store.getNextNonce(parsed.caip2, parsed.from)) ?? 0n;
  const pending = sponsored ? plan.accountPending : plan.submitterPending;
  const nonce = parsed.nonce ?? maxBig(pending, stored);
  const calls = await Promise.all(
    parsed.calls.map((c) =>
      describe({
        type: 'eip1559',
        chainId: parsed.chain.chainId,
        nonce,
        gasLimit: plan.gasLimit,
        maxFeePerGas: sponsored ? 0n : plan.maxFeePerGas,
        maxPriorityFeePerGas: sponsored ? 0n : plan.maxPriorityFeePerGas,
        to: c.to,
        value: c.value,
        data: c.data,
        accessList: [],
      }),
    ),
  );
  return calls.length === 1 ? { ...signer, transaction: calls[0] } : { ...signer, batch: calls };
}

type SendRow = Omit<
  SendTransactionRecord,
  | 'revertChainJson'
  | 'id'
  | 'organizationId'
  | 'activityId'
  | 'caip2'
  | 'status'
  | 'blockNumber'
  | 'errorMessage'
  | 'createdAtMs'
  | 'updatedAtMs'
  | 'txHash'
>;

/** Inside the recording write: takes the nonce, signs the plain transaction. */
async function writeDirect(
  ctx: ActivityContext,
  tx: StoreTx,
  prepared: PreparedSend,
  filled: FilledTransaction,
): Promise<SendRow> {
  const { parsed } = prepared;
  const nonce = await tx.allocateNonce(parsed.caip2, parsed.from, filled.chainPending, parsed.nonce);
  const signed = withKey(ctx.vault, prepared.signer, (privateKey) =>
    signEthTransaction({ privateKey, tx: { ...filled.tx, nonce }, expectedFrom: parsed.from }),
  );
  return {
    kind: 'DIRECT',
    fromAddress: parsed.from,
    accountAddress: parsed.from,
    nonce,
    gasStationNonce: null,
    signedTransaction: signed,
  };
}

/**
 * Inside the recording write: takes the gas-station nonce, the submitter's nonce and (while the
 * account still has to delegate) the authorization's nonce in one step, so batches of one account
 * run on chain in the order they were recorded; then the account signs the batch (and its
 * authorization) and the submitter signs the transaction.
 */
async function writeBatch(
  ctx: ActivityContext,
  tx: StoreTx,
  prepared: PreparedSend,
  plan: BatchPlan,
): Promise<SendRow> {
  const { parsed } = prepared;
  const { chain } = parsed;
  const sponsored = parsed.kind === 'SPONSORED';
  const gasStationNonce = await tx.allocateNonce(
    parsed.caip2,
    gasStationNonceKey(parsed.from),
    plan.chainGasStationNonce,
    parsed.gasStationNonce,
  );
  const nonce = await tx.allocateNonce(
    parsed.caip2,
    plan.submitter,
    plan.submitterPending,
    sponsored ? undefined : parsed.nonce,
  );
  // The account's own transaction bumps its nonce before authorizations are applied (EIP-7702), so a
  // self-submitted batch authorizes with the nonce after the transaction's. A sponsored batch
  // authorizes with the account's next nonce but does not take it from the allocator: a sponsor
  // that never broadcasts must not leave a gap in the account's own nonces (which an account with
  // no ETH could never fill). If that nonce moves before inclusion the authorization is skipped and
  // the tracker reports the batch FAILED (no BatchExecuted event), never INCLUDED.
  const authorizationNonce = !plan.delegating
    ? undefined
    : sponsored
      ? maxBig(plan.accountPending, (await tx.nextNonce(parsed.caip2, parsed.from)) ?? 0n)
      : await tx.allocateNonce(parsed.caip2, parsed.from, 0n, nonce + 1n);
  return withKey(ctx.vault, prepared.signer, (accountKey) => {
    const signature = signBatch({
      privateKey: accountKey,
      account: parsed.from,
      chainId: chain.chainId,
      calls: parsed.calls,
      nonce: gasStationNonce,
      deadline: parsed.deadline,
    });
    const authorization =
      authorizationNonce === undefined
        ? undefined
        : signAuthorization({
            privateKey: accountKey,
            account: parsed.from,
            chainId: chain.chainId,
            executor: plan.gasStation.executor,
            nonce: authorizationNonce,
          });
    const unsigned = batchTransaction({
      chainId: chain.chainId,
      nonce,
      account: parsed.from,
      gasLimit: plan.gasLimit,
      maxFeePerGas: plan.maxFeePerGas,
      maxPriorityFeePerGas: plan.maxPriorityFeePerGas,
      calls: parsed.calls,
      gasStationNonce,
      deadline: parsed.deadline,
      signature,
      authorization,
    });
    const submitterKey = sponsored ? openSponsorKey(ctx.vault, plan.gasStation.sponsor) : accountKey;
    try {
      const signed = signEthTransaction({
        privateKey: submitterKey,
        tx: unsigned,
        expectedFrom: plan.submitter,
      });
      return {
        kind: parsed.kind,
        fromAddress: plan.submitter,
        accountAddress: parsed.from,
        nonce,
        gasStationNonce,
        signedTransaction: signed,
      };
    } finally {
      if (sponsored) zeroize(submitterKey);
    }
  });
}

async function runSend(ctx: ActivityContext, p: Params, version: 1 | 2): Promise<ActivityOutcome> {
  const prepared = PREPARED.take(ctx.activityId, Date.now()) ?? (await prepare(ctx, p, version));
  if (prepared.plan !== undefined) await prepared.plan.gasStation.ensureExecutor(prepared.parsed.chain);
  const id = uuidv7(ctx.nowMs); // time-ordered: the sends' primary key grows at its end
  const send = sendContextOf(ctx.store);
  return {
    result: { sendTransactionStatusId: id },
    write: async (tx) => {
      // Read-and-increment inside the write: the store runs writes one at a time, so concurrent
      // sends from one address get consecutive nonces, and a refused request never reaches here.
      const { plan, filled } = prepared;
      let row: SendRow;
      if (filled !== undefined) row = await writeDirect(ctx, tx, prepared, filled);
      else if (plan !== undefined) row = await writeBatch(ctx, tx, prepared, plan);
      else
        throw new CountersignError(
          'INTERNAL',
          'a prepared send holds neither a transaction nor a batch plan',
        );
      await tx.insertSendTransaction({
        ...row,
        id,
        organizationId: ctx.organization.id,
        activityId: ctx.activityId,
        caip2: prepared.parsed.caip2,
        txHash: bytesTo0x(keccak_256(row.signedTransaction)),
        status: 'INITIALIZED',
        blockNumber: null,
        errorMessage: null,
        revertChainJson: null,
        createdAtMs: ctx.nowMs,
        updatedAtMs: ctx.nowMs,
      });
      // Runs after this batch's COMMIT (the store commits synchronously within one turn); if the
      // write was rolled back the tracker finds no row and does nothing.
      setImmediate(() => send.kick(id));
    },
  };
}

export const SEND_TRANSACTION_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
    path: 'eth_send_transaction',
    intentKey: 'ethSendTransactionIntentV2',
    resultKey: 'ethSendTransactionResultV2',
    facts: (ctx, p) => sendFacts(ctx, p, 2),
    run: (ctx, p) => runSend(ctx, p, 2),
  },
  {
    type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION',
    path: 'eth_send_transaction',
    intentKey: 'ethSendTransactionIntent',
    resultKey: 'ethSendTransactionResult',
    facts: (ctx, p) => sendFacts(ctx, p, 1),
    run: (ctx, p) => runSend(ctx, p, 1),
  },
];
