/**
 * eth_send_transaction (V1 flat fields, V2 `calls`), non-sponsored: validates at the edge, fills
 * what is missing (send/fillTransaction.ts), lets the policy gate see the filled `eth.tx`, then —
 * in the transaction that records the activity — takes the nonce from the durable allocator, signs
 * with the account key and records the send (INITIALIZED) with its signed bytes. The tracker
 * broadcasts it once committed. A request refused before that write takes no nonce.
 */
import { randomUUID } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import {
  addressFromPublicKey,
  assembleSignedTransaction,
  describeTransaction,
  parseAddress,
  serializeUnsignedTransaction,
  signingDigest,
} from '../../../chains/ethereum/index.js';
import { MAX_TX_NONCE, type EthTransaction } from '../../../chains/ethereum/types.js';
import { bytesTo0x, hexToBytes, parseDecimal, UINT256_MAX, zeroize } from '../../shared/encoding.js';
import { CountersignError, invalid } from '../../shared/errors.js';
import { signEcdsaSecp256k1 } from '../keys/index.js';
import { eip155ChainId, type EthChain } from '../send/chains.js';
import { PreparedCache, sendContextOf } from '../send/context.js';
import { fillTransaction, type FilledTransaction, type SendRequest } from '../send/fillTransaction.js';
import { signerFacts, withContractCallFacts } from '../signing-facts.js';
import type { TransactionFacts } from '../policy/index.js';
import type { SigningKeyRecord } from '../store/types.js';
import { asObject, optBool, optString, reqArray, reqString, type Params } from './params.js';
import { resolveSigner } from './signing.js';
import type { ActivityContext, ActivityDefinition, ActivityFacts, ActivityOutcome } from './types.js';

const P = 'parameters';
const SPONSORED_REFUSAL =
  'sponsored sends are not supported yet; send with sponsor false (the account pays its gas)';

/** Intrinsic gas of a call (not a creation): 21000 + 4 per zero and 16 per non-zero data byte (EIP-2028). */
export function intrinsicGas(data: Uint8Array): bigint {
  let gas = 21_000n;
  for (const b of data) gas += b === 0 ? 4n : 16n;
  return gas;
}

interface Call {
  readonly to: Uint8Array;
  readonly value: bigint;
  readonly data: Uint8Array;
  /** Field prefix of the call for errors (`parameters` or `parameters.calls.0`). */
  readonly prefix: string;
}

interface ParsedSend {
  readonly caip2: string;
  readonly chain: EthChain;
  readonly from: `0x${string}`;
  readonly call: Call;
  readonly nonce: bigint | undefined;
  readonly gasLimit: bigint | undefined;
  readonly maxFeePerGas: bigint | undefined;
  readonly maxPriorityFeePerGas: bigint | undefined;
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
  if (optBool(p, 'sponsor', P) === true)
    throw new CountersignError('FIELD_INVALID', `${P}.sponsor: ${SPONSORED_REFUSAL}`, {
      field: `${P}.sponsor`,
    });
  for (const key of ['deadline', 'gasStationNonce'])
    if (p[key] !== undefined && p[key] !== null && p[key] !== '')
      throw invalid(`${P}.${key}`, 'is only used by sponsored sends, which are not supported yet');
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
  let call: Call;
  if (version === 1) {
    call = parseCall(p, P);
  } else {
    const calls = reqArray(p, 'calls', P);
    if (calls.length === 0) throw invalid(`${P}.calls`, 'must hold one call');
    if (calls.length > 1)
      throw invalid(
        `${P}.calls`,
        `holds ${calls.length} calls; a batch needs the EIP-7702 gas-station path, and sponsored sends are not supported yet: send exactly one call`,
      );
    call = parseCall(asObject(calls[0], `${P}.calls.0`), `${P}.calls.0`);
  }
  const gasLimit = optDecimal(p, 'gasLimit', P, UINT256_MAX);
  if (gasLimit !== undefined && gasLimit < intrinsicGas(call.data))
    throw invalid(
      `${P}.gasLimit`,
      `${gasLimit} is below the intrinsic gas of this call (${intrinsicGas(call.data)}: 21000 + calldata, EIP-2028)`,
    );
  const maxFeePerGas = optDecimal(p, 'maxFeePerGas', P, UINT256_MAX);
  const maxPriorityFeePerGas = optDecimal(p, 'maxPriorityFeePerGas', P, UINT256_MAX);
  if (maxFeePerGas !== undefined && maxPriorityFeePerGas !== undefined && maxPriorityFeePerGas > maxFeePerGas)
    throw invalid(`${P}.maxPriorityFeePerGas`, 'must not exceed maxFeePerGas (EIP-1559)');
  return {
    caip2,
    chain,
    from,
    call,
    nonce: optDecimal(p, 'nonce', P, MAX_TX_NONCE),
    gasLimit,
    maxFeePerGas,
    maxPriorityFeePerGas,
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

interface PreparedSend {
  readonly parsed: ParsedSend;
  readonly signer: SigningKeyRecord;
  readonly filled: FilledTransaction;
}

/** Filled once per activity: the facts hook fills, run signs the same transaction. */
const PREPARED = new PreparedCache<PreparedSend>(5 * 60_000);

async function prepare(ctx: ActivityContext, p: Params, version: 1 | 2): Promise<PreparedSend> {
  const parsed = parseSend(ctx, p, version);
  const signer = await resolveFrom(ctx, parsed.from);
  const req: SendRequest = {
    chain: parsed.chain,
    from: parsed.from,
    to: parsed.call.to,
    value: parsed.call.value,
    data: parsed.call.data,
    nonce: parsed.nonce,
    gasLimit: parsed.gasLimit,
    maxFeePerGas: parsed.maxFeePerGas,
    maxPriorityFeePerGas: parsed.maxPriorityFeePerGas,
  };
  const filled = await fillTransaction(req, await ctx.store.getNextNonce(parsed.caip2, parsed.from));
  return { parsed, signer, filled };
}

async function sendFacts(ctx: ActivityContext, p: Params, version: 1 | 2): Promise<ActivityFacts> {
  const prepared = await prepare(ctx, p, version);
  PREPARED.put(ctx.activityId, prepared, Date.now());
  return {
    ...(await signerFacts(ctx, prepared.signer)),
    transaction: (await withContractCallFacts(ctx, {
      chain: 'eth',
      tx: describeTransaction(prepared.filled.tx, prepared.parsed.from),
    })) as TransactionFacts,
  };
}

function sign(ctx: ActivityContext, signer: SigningKeyRecord, tx: EthTransaction): Uint8Array {
  const priv = ctx.vault.open(signer.sealedKey, signer.recordId);
  try {
    const sig = signEcdsaSecp256k1(priv, signingDigest(serializeUnsignedTransaction(tx)));
    return assembleSignedTransaction(tx, { r: sig.r, s: sig.s, yParity: sig.v });
  } finally {
    zeroize(priv);
  }
}

async function runSend(ctx: ActivityContext, p: Params, version: 1 | 2): Promise<ActivityOutcome> {
  const { parsed, signer, filled } =
    PREPARED.take(ctx.activityId, Date.now()) ?? (await prepare(ctx, p, version));
  const id = randomUUID();
  const send = sendContextOf(ctx.store);
  return {
    result: { sendTransactionStatusId: id },
    write: (tx) => {
      // Read-and-increment inside the write: the store runs writes one at a time, so concurrent
      // sends from one address get consecutive nonces, and a refused request never reaches here.
      const nonce = tx.allocateNonce(parsed.caip2, parsed.from, filled.chainPending, parsed.nonce);
      const signed = sign(ctx, signer, { ...filled.tx, nonce });
      tx.insertSendTransaction({
        id,
        organizationId: ctx.organization.id,
        activityId: ctx.activityId,
        caip2: parsed.caip2,
        fromAddress: parsed.from,
        nonce,
        signedTransaction: signed,
        txHash: bytesTo0x(keccak_256(signed)),
        status: 'INITIALIZED',
        blockNumber: null,
        errorMessage: null,
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
