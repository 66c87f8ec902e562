/**
 * Typed data without `types.EIP712Domain` (issue 10): a domain sent without its type is hashed under
 * the type its fields imply, as viem does; a domain lost on the way (@turnkey/viem → viem's
 * serializeTypedData drops it when the type is absent) is refused with the cause and the fix.
 */
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { createAccount } from '@turnkey/viem';
import { Turnkey } from '@turnkey/sdk-server';
import { verifyTypedData, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';

const types = {
  Mail: [
    { name: 'to', type: 'address' },
    { name: 'contents', type: 'string' },
  ],
} as const;
const message = { to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', contents: 'hello' } as const;

describe('EIP-712 without the EIP712Domain type', () => {
  let h: EmbeddedHarness;
  let http: TurnkeyClient;
  let org: string;
  let address: `0x${string}`;

  beforeAll(async () => {
    h = await startEmbedded();
    org = h.service.credentials.organizationId;
    address = ethAddressOf(h);
    http = new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(h.service.credentials));
  });
  afterAll(() => h?.close());

  async function signJson(json: string): Promise<Hex> {
    const res = await http.signRawPayload({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: {
        signWith: address,
        payload: json,
        encoding: 'PAYLOAD_ENCODING_EIP712',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
    });
    const r = res.activity.result.signRawPayloadResult!;
    const v = Number.parseInt(r.v, 16) + 27;
    return `0x${r.r}${r.s}${v.toString(16)}`;
  }

  it.each([
    [
      'a full domain',
      {
        name: 'Mail',
        version: '1',
        chainId: 1,
        verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
      },
    ],
    ['a partial domain', { name: 'Mail', chainId: 10 }],
    ['a domain with only a salt', { salt: `0x${'ab'.repeat(32)}` }],
  ] as const)(
    'signs %s under the type its fields imply; viem verifies against that domain',
    async (_, domain) => {
      const json = JSON.stringify({ types, primaryType: 'Mail', domain, message });
      const signature = await signJson(json);
      expect(
        await verifyTypedData({
          address,
          types,
          primaryType: 'Mail',
          domain: domain as never,
          message,
          signature,
        }),
      ).toBe(true);
    },
  );

  it('refuses what @turnkey/viem sends without the type (the domain dropped), naming the cause and the fix', async () => {
    const api = new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: h.service.credentials.apiPublicKey,
      apiPrivateKey: h.service.credentials.apiPrivateKey,
      defaultOrganizationId: org,
    }).apiClient();
    const account = await createAccount({ client: api, organizationId: org, signWith: address });
    const domain = { name: 'Mail', version: '1', chainId: 1n };
    await expect(account.signTypedData({ types, primaryType: 'Mail', domain, message })).rejects.toThrow(
      /EIP712Domain: is missing and the domain is empty: the domain was most likely dropped/,
    );
    const withType = {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
      ],
      ...types,
    } as const;
    const signature = await account.signTypedData({ types: withType, primaryType: 'Mail', domain, message });
    expect(
      await verifyTypedData({ address, types: withType, primaryType: 'Mail', domain, message, signature }),
    ).toBe(true);
  });
});
