/**
 * `bitcoin.tx.fee` as the policy gate of the real service reads it over HTTP, for a non-root
 * user: the real fee when the amounts it sums are proven, else the most any transaction can pay,
 * so that two requests lying each about the other segwit v0 input cannot pass a fee limit
 * (chains/bitcoin/fee.test.ts shows the signatures of such a pair make a valid transaction).
 */
import * as bitcoin from 'bitcoinjs-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { insertUserWithApiKey } from './helpers/users.js';

const mainnet = bitcoin.networks.bitcoin;

let h: EmbeddedHarness;
let org: string;
let alice: { apiPublicKey: string; apiPrivateKey: string };
let address: string;
let script: Uint8Array;

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  const account = h.service.credentials.accounts.find(
    (a) => a.addressFormat === 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH',
  );
  if (account === undefined) throw new Error('the default wallet has no P2WPKH account');
  address = account.address;
  script = bitcoin.address.toOutputScript(address, mainnet);
  const { userId, key } = await insertUserWithApiKey(h.service.store, { organizationId: org, name: 'alice' });
  alice = key;
  const created = await post(
    h.baseUrl,
    h.service.credentials,
    '/public/v1/submit/create_policies',
    envelope('ACTIVITY_TYPE_CREATE_POLICIES', org, {
      policies: [
        {
          policyName: 'cheap bitcoin transactions',
          effect: 'EFFECT_ALLOW',
          condition: 'bitcoin.tx.fee <= 10000',
          consensus: `approvers.any(user, user.id == '${userId}')`,
          notes: '',
        },
      ],
    }),
  );
  expect(created.status).toBe(200);
});
afterAll(async () => {
  await h.close();
});

/** Spends one output of the account per entry of `stated` (the amount witness_utxo states). */
function psbt(stated: bigint[], pay: bigint): string {
  const p = new bitcoin.Psbt({ network: mainnet });
  stated.forEach((value, index) =>
    p.addInput({ hash: new Uint8Array(32).fill(3), index, witnessUtxo: { script, value } }),
  );
  p.addOutput({ address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', value: pay });
  return Buffer.from(p.toBuffer()).toString('hex');
}

const signAsAlice = (unsignedTransaction: string) =>
  post(
    h.baseUrl,
    h.service.credentials,
    '/public/v1/submit/sign_transaction',
    envelope('ACTIVITY_TYPE_SIGN_TRANSACTION_V2', org, {
      signWith: address,
      unsignedTransaction,
      type: 'TRANSACTION_TYPE_BITCOIN',
    }),
    { keys: alice },
  );

describe('bitcoin.tx.fee', () => {
  it('allows one segwit v0 input whose signature commits to its amount, under the limit', async () => {
    const ok = await signAsAlice(psbt([250_000n], 240_000n));
    expect(ok.status).toBe(200);
    expect((ok.json.activity as { status: string }).status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await signAsAlice(psbt([250_000n], 239_999n))).status).toBe(403);
  });

  it('denies two segwit v0 inputs stated by witness_utxo alone, whatever fee they state', async () => {
    // The real amounts may be 1 000 000 each, the one not signed over being understated in each request.
    const res = await signAsAlice(psbt([1_000_000n, 10_000n], 1_000_000n));
    expect(res.status).toBe(403);
    expect(res.json.code).toBe(7);
  });
});
