/**
 * A root quorum above one (turnkey-api.md 8.2): in a sub-organization with two root users and a
 * threshold of 2, one root user's signing request waits (CONSENSUS_NEEDED) instead of being denied;
 * the second root user's approval completes it; a non-root user's approval does not count.
 */
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { TurnkeyClient } from '@turnkey/http';
import { Turnkey } from '@turnkey/sdk-server';
import { recoverMessageAddress, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newApiKey, type ApiKeyPair } from './helpers/api-key.js';
import { startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { insertUserWithApiKey } from './helpers/users.js';

type Json = Record<string, any>;
const ts = () => String(Date.now());

describe('root quorum 2 of 2', () => {
  let h: EmbeddedHarness;
  const alice = newApiKey();
  const bob = newApiKey();
  let sub: string;
  let address: string;
  const client = (k: ApiKeyPair) => new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(k));

  beforeAll(async () => {
    h = await startEmbedded();
    const sdk = new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: h.service.credentials.apiPublicKey,
      apiPrivateKey: h.service.credentials.apiPrivateKey,
      defaultOrganizationId: h.service.credentials.organizationId,
    }).apiClient();
    const rootUser = (name: string, k: ApiKeyPair) => ({
      userName: name,
      apiKeys: [
        { apiKeyName: `${name} key`, publicKey: k.apiPublicKey, curveType: 'API_KEY_CURVE_P256' as const },
      ],
      authenticators: [],
      oauthProviders: [],
    });
    const res = await sdk.createSubOrganization({
      subOrganizationName: 'two roots',
      rootUsers: [rootUser('alice', alice), rootUser('bob', bob)],
      rootQuorumThreshold: 2,
      wallet: {
        walletName: 'w',
        accounts: [
          {
            curve: 'CURVE_SECP256K1',
            pathFormat: 'PATH_FORMAT_BIP32',
            path: "m/44'/60'/0'/0/0",
            addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
          },
        ],
      },
    });
    sub = res.subOrganizationId;
    address = String(res.wallet?.addresses[0]);
  });
  afterAll(() => h?.close());

  const signBody = (payload: string) => ({
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' as const,
    timestampMs: ts(),
    organizationId: sub,
    parameters: {
      signWith: address,
      payload,
      encoding: 'PAYLOAD_ENCODING_TEXT_UTF8' as const,
      hashFunction: 'HASH_FUNCTION_KECCAK256' as const,
    },
  });

  it('waits for the second root user, who completes it with a valid signature; a non-root approval does not count', async () => {
    const first = await client(alice).signRawPayload(signBody('\x19Ethereum Signed Message:\n5hello'));
    expect(first.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect((first.activity.result as Json).signRawPayloadResult).toBeUndefined();

    // A non-root user of the sub-organization approves: it does not count toward the root quorum.
    const carol = await insertUserWithApiKey(h.service.store, { organizationId: sub, name: 'carol' });
    const byCarol = await client(carol.key)
      .approveActivity({
        type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
        timestampMs: ts(),
        organizationId: sub,
        parameters: { fingerprint: first.activity.fingerprint },
      })
      .then(
        (r) => r.activity.status as string,
        () => 'refused',
      );
    expect(['ACTIVITY_STATUS_CONSENSUS_NEEDED', 'refused']).toContain(byCarol);
    const still = await client(alice).getActivity({ organizationId: sub, activityId: first.activity.id });
    expect(still.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');

    const approved = await client(bob).approveActivity({
      type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
      timestampMs: ts(),
      organizationId: sub,
      parameters: { fingerprint: first.activity.fingerprint },
    });
    expect(approved.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const r = (approved.activity.result as Json).signRawPayloadResult as { r: string; s: string; v: string };
    const signature = `0x${r.r}${r.s}${(Number.parseInt(r.v, 16) + 27).toString(16)}` as Hex;
    expect((await recoverMessageAddress({ message: 'hello', signature })).toLowerCase()).toBe(
      address.toLowerCase(),
    );
  });

  it('still denies outright what no root user approved and no policy allows', async () => {
    const carol = await insertUserWithApiKey(h.service.store, { organizationId: sub, name: 'carol 2' });
    await expect(client(carol.key).signRawPayload(signBody('x'))).rejects.toThrow();
  });
});
