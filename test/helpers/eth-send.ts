/**
 * eth_send_transaction over the public HTTP API, as the send tests drive it: submit a send, read
 * its status id, follow it to its end, and read the nonces the service would hand out next. Each
 * call is stamped with the harness's root credentials unless told otherwise.
 */
import type { Hex } from 'viem';
import { expect } from 'vitest';
import type { EmbeddedHarness } from './embedded.js';
import { envelope, post, type PostOptions, type RawResponse } from './http.js';

type Harness = Pick<EmbeddedHarness, 'baseUrl' | 'service'>;

/** get_send_transaction_status's answer, with the fields the tests read. */
export interface SendStatusJson {
  readonly txStatus: string;
  readonly eth?: { readonly txHash: Hex };
  readonly error?: { readonly message: string; readonly eth?: { readonly revertChain: unknown[] } };
}

/** Submits an eth_send_transaction activity of `type` (V1 or V2) in the harness's organization. */
export function submitEthSend(
  h: Harness,
  type: string,
  parameters: Record<string, unknown>,
  opts: PostOptions = {},
): Promise<RawResponse> {
  const c = h.service.credentials;
  return post(
    h.baseUrl,
    c,
    '/public/v1/submit/eth_send_transaction',
    envelope(type, c.organizationId, parameters),
    opts,
  );
}

/** A public API query in the harness's organization; it must answer 200. */
async function query(
  h: Harness,
  path: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const c = h.service.credentials;
  const res = await post(
    h.baseUrl,
    c,
    `/public/v1/query/${path}`,
    JSON.stringify({ organizationId: c.organizationId, ...body }),
  );
  expect(res.status).toBe(200);
  return res.json;
}

/** The send's current status. */
export async function sendStatus(h: Harness, sendTransactionStatusId: string): Promise<SendStatusJson> {
  return (await query(h, 'get_send_transaction_status', {
    sendTransactionStatusId,
  })) as unknown as SendStatusJson;
}

/** Polls until the send is terminal (INCLUDED or FAILED). */
export async function settled(h: Harness, id: string, timeoutMs = 30_000): Promise<SendStatusJson> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await sendStatus(h, id);
    if (s.txStatus === 'INCLUDED' || s.txStatus === 'FAILED') return s;
    if (Date.now() > deadline) throw new Error(`send ${id} still ${s.txStatus} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls every `intervalMs` until the send has `txStatus`; the test fails after `polls` more tries. */
export async function reachedStatus(
  h: Harness,
  id: string,
  txStatus: string,
  opts: { readonly polls: number; readonly intervalMs: number },
): Promise<void> {
  for (let i = 0; (await sendStatus(h, id)).txStatus !== txStatus; i++) {
    expect(i).toBeLessThan(opts.polls);
    await new Promise((r) => setTimeout(r, opts.intervalMs));
  }
}

export interface NoncesQuery {
  readonly address: Hex;
  readonly caip2: string;
}

/** The nonce the service's next send from `address` would take (get_nonces). */
export async function getNextNonce(h: Harness, q: NoncesQuery): Promise<bigint> {
  const j = await query(h, 'get_nonces', { address: q.address, caip2: q.caip2, nonce: true });
  return BigInt(j.nonce as string);
}

/** The account's next nonce and the next gas-station nonce of its sponsored batches (get_nonces). */
export async function getNonces(
  h: Harness,
  q: NoncesQuery,
): Promise<{ nonce: bigint; gasStationNonce: bigint }> {
  const j = await query(h, 'get_nonces', {
    address: q.address,
    caip2: q.caip2,
    nonce: true,
    gasStationNonce: true,
  });
  return { nonce: BigInt(j.nonce as string), gasStationNonce: BigInt(j.gasStationNonce as string) };
}

/**
 * The send status id of a completed eth_send_transaction activity, read from `resultKey` of its
 * result (`ethSendTransactionResult`, `ethSendTransactionResultV2`), or from whichever member
 * carries one when no key is given.
 */
export function statusIdOf(json: Record<string, unknown>, resultKey?: string): string {
  const activity = json.activity as {
    status: string;
    result: Record<string, { sendTransactionStatusId?: string } | undefined>;
  };
  expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  const id =
    resultKey === undefined
      ? Object.values(activity.result).find((r) => typeof r?.sendTransactionStatusId === 'string')
          ?.sendTransactionStatusId
      : activity.result[resultKey]?.sendTransactionStatusId;
  expect(id).toBeTypeOf('string');
  return id as string;
}
