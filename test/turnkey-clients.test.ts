/**
 * Turnkey's own, unmodified clients against the embedded service's base URL: @turnkey/http with
 * @turnkey/api-key-stamper, @turnkey/sdk-server, and @turnkey/viem's createAccount. viem verifies
 * every signature they return.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { Turnkey } from '@turnkey/sdk-server';
import { createAccount } from '@turnkey/viem';
import {
  parseTransaction,
  recoverTransactionAddress,
  verifyMessage,
  verifyTypedData,
  type LocalAccount,
} from 'viem';
import { recoverAuthorizationAddress } from 'viem/utils';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';

let h: EmbeddedHarness;

const typedData = {
  domain: {
    name: 'Ether Mail',
    version: '1',
    chainId: 1,
    verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
  },
  // viem's wallet-client action adds EIP712Domain before it reaches the account; the service needs it.
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
    Person: [
      { name: 'name', type: 'string' },
      { name: 'wallet', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'Person' },
      { name: 'to', type: 'Person' },
      { name: 'contents', type: 'string' },
    ],
  },
  primaryType: 'Mail',
  message: {
    from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
    to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
    contents: 'Hello, Bob!',
  },
} as const;

beforeAll(async () => {
  h = await startEmbedded();
});
afterAll(async () => {
  await h.close();
});

async function exercise(account: LocalAccount, expected: `0x${string}`) {
  expect(account.address.toLowerCase()).toBe(expected.toLowerCase());

  const tx = {
    type: 'eip1559' as const,
    chainId: 31337,
    nonce: 7,
    to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const,
    value: 1234567890123456789n,
    gas: 21000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  };
  const signedTx = await account.signTransaction(tx);
  expect(await recoverTransactionAddress({ serializedTransaction: signedTx as never })).toBe(expected);
  const parsed = parseTransaction(signedTx);
  expect(parsed.value).toBe(tx.value);
  expect(parsed.nonce).toBe(7);

  const message = 'countersign says hello';
  const sig = await account.signMessage({ message });
  expect(await verifyMessage({ address: expected, message, signature: sig })).toBe(true);

  const tdSig = await account.signTypedData(typedData as never);
  expect(
    await verifyTypedData({
      address: expected,
      ...(typedData as never as Record<string, never>),
      signature: tdSig,
    } as never),
  ).toBe(true);

  if (account.signAuthorization === undefined) throw new Error('account cannot sign authorizations');
  const auth = await account.signAuthorization({
    address: '0x00000000000000000000000000000000000b0b00',
    chainId: 31337,
    nonce: 3,
  });
  expect(await recoverAuthorizationAddress({ authorization: auth })).toBe(expected);
}

describe('Turnkey clients against the embedded service', () => {
  it('@turnkey/http TurnkeyClient with @turnkey/api-key-stamper signs through @turnkey/viem', async () => {
    const c = h.service.credentials;
    const client = new TurnkeyClient(
      { baseUrl: h.baseUrl },
      new ApiKeyStamper({ apiPublicKey: c.apiPublicKey, apiPrivateKey: c.apiPrivateKey }),
    );
    const whoami = await client.getWhoami({ organizationId: c.organizationId });
    expect(whoami.userId).toBe(c.userId);
    // @turnkey/viem pins its own @turnkey/http; the class is the same at run time.
    const account = await createAccount({
      client: client as never,
      organizationId: c.organizationId,
      signWith: ethAddressOf(h),
    });
    await exercise(account, ethAddressOf(h));
  });

  it('@turnkey/sdk-server apiClient signs through @turnkey/viem, also by private key id', async () => {
    const c = h.service.credentials;
    const turnkey = new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: c.apiPublicKey,
      apiPrivateKey: c.apiPrivateKey,
      defaultOrganizationId: c.organizationId,
    });
    const api = turnkey.apiClient();
    const account = await createAccount({
      client: api,
      organizationId: c.organizationId,
      signWith: ethAddressOf(h),
    });
    await exercise(account, ethAddressOf(h));

    const created = await api.createPrivateKeys({
      privateKeys: [
        {
          privateKeyName: 'sdk-server key',
          curve: 'CURVE_SECP256K1',
          privateKeyTags: [],
          addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
        },
      ],
    });
    const pk = created.privateKeys[0];
    if (pk === undefined) throw new Error('no private key created');
    const address = pk.addresses?.[0]?.address as `0x${string}`;
    const byId = await createAccount({
      client: api,
      organizationId: c.organizationId,
      signWith: pk.privateKeyId as string,
    });
    await exercise(byId, address);
  });
});
