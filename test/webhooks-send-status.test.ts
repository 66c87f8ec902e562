/**
 * SEND_TRANSACTION_STATUS_UPDATES (issue 14, turnkey-api.md 11.1): every transition of an
 * eth_send_transaction reaches a parent-organization endpoint as a signed `transaction:status`
 * message, against a real anvil.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, parseEther, toHex, type Hex } from 'viem';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { settled, statusIdOf, submitEthSend } from './helpers/eth-send.js';
import {
  fetchWebhookKeys,
  startWebhookReceiver,
  verifies,
  waitFor,
  type WebhookReceiver,
} from './helpers/webhook-receiver.js';

const CAIP2 = 'eip155:31337';
let anvil: RunningAnvil;
let h: EmbeddedHarness;
let receiver: WebhookReceiver;

beforeAll(async () => {
  anvil = await startAnvil();
  h = await startEmbedded({
    chainRpc: new Map([[CAIP2, anvil.rpcUrl]]),
    allowPrivateNetwork: true,
    webhooks: { pollMs: 100 },
  });
  receiver = await startWebhookReceiver();
  const chain = createPublicClient({ transport: http(anvil.rpcUrl) });
  await chain.request({
    method: 'anvil_setBalance' as never,
    params: [ethAddressOf(h), toHex(parseEther('10'))] as never,
  });
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
  await anvil?.stop();
});

describe('send-status webhooks', () => {
  it('sends BROADCASTING then INCLUDED of an eth_send_transaction, signed, with the hash once included', async () => {
    const org = h.service.credentials.organizationId;
    const created = await post(
      h.baseUrl,
      h.service.credentials,
      '/public/v1/submit/create_webhook_endpoint',
      envelope('ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', org, {
        url: `${receiver.url}/sends`,
        name: 'sends',
        subscriptions: [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES' }],
      }),
    );
    expect(created.status).toBe(200);
    const res = await submitEthSend(h, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', {
      from: ethAddressOf(h),
      caip2: CAIP2,
      to: `0x${'22'.repeat(20)}`,
      value: '1000',
      data: '0x',
    });
    expect(res.status).toBe(200);
    const id = statusIdOf(res.json, 'ethSendTransactionResult');
    const final = await settled(h, id);
    expect(final.txStatus).toBe('INCLUDED');
    const mine = () =>
      receiver
        .delivered()
        .map((r) => ({ r, m: JSON.parse(r.body) as Record<string, any> }))
        .filter(({ m }) => m.msg?.sendTransactionStatusId === id);
    await waitFor(() => mine().some(({ m }) => m.msg.status === 'INCLUDED'), 20_000, 'the INCLUDED message');
    expect(mine().map(({ m }) => m.msg.status)).toEqual(['BROADCASTING', 'INCLUDED']);
    const keys = await fetchWebhookKeys(h.baseUrl);
    for (const { r, m } of mine()) {
      expect(verifies(r, keys)).toBe(true);
      expect(r.headers['x-turnkey-event-type']).toBe('SEND_TRANSACTION_STATUS_UPDATES');
      expect(m).toMatchObject({
        type: 'transaction:status',
        organizationId: org,
        parentOrganizationId: org,
        msg: {
          sendTransactionStatusId: id,
          activityId: (res.json.activity as { id: string }).id,
          caip2: CAIP2,
        },
      });
      expect(m.msg.timestamp).toMatch(/^[0-9]+$/);
    }
    const included = mine().find(({ m }) => m.msg.status === 'INCLUDED')!.m;
    expect(included.msg.txHash).toBe(final.eth?.txHash as Hex);
    // Only send-status events: this endpoint did not subscribe to activities.
    expect(
      receiver
        .delivered()
        .every((r) => r.headers['x-turnkey-event-type'] === 'SEND_TRANSACTION_STATUS_UPDATES'),
    ).toBe(true);
  });
});
