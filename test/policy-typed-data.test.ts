/**
 * `eth.eip_712` and `eth.eip_7702_authorization` facts (turnkey-api.md 8.3) for raw-payload
 * signing, decided by the policy gate of the real service over HTTP for a non-root user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { insertUserWithApiKey } from './helpers/users.js';

const CONTRACT = '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC';
const DELEGATE = '0x00000000000000000000000000000000000b0b00';

let h: EmbeddedHarness;
let org: string;
let alice: { apiPublicKey: string; apiPrivateKey: string };

const typedData = (verifyingContract: string) =>
  JSON.stringify({
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
      Mail: [
        { name: 'to', type: 'address' },
        { name: 'contents', type: 'string' },
      ],
    },
    primaryType: 'Mail',
    domain: { name: 'Ether Mail', version: '1', chainId: 1, verifyingContract },
    message: { to: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB', contents: 'hi' },
  });

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  // A non-root user, inserted through the store so that the policies (not the root quorum) decide.
  const { userId, key } = await insertUserWithApiKey(h.service.store, { organizationId: org, name: 'alice' });
  alice = key;
  const created = await post(
    h.baseUrl,
    h.service.credentials,
    '/public/v1/submit/create_policies',
    envelope('ACTIVITY_TYPE_CREATE_POLICIES', org, {
      policies: [
        {
          policyName: 'mail to the known contract',
          effect: 'EFFECT_ALLOW',
          condition: `eth.eip_712.primary_type == 'Mail' && eth.eip_712.domain.verifying_contract == '${CONTRACT.toLowerCase()}' && eth.eip_712.domain.chain_id == 1`,
          consensus: `approvers.any(user, user.id == '${userId}')`,
          notes: '',
        },
        {
          policyName: 'delegate to the known contract',
          effect: 'EFFECT_ALLOW',
          condition: `eth.eip_7702_authorization.address == '${DELEGATE}' && eth.eip_7702_authorization.chain_id == 31337`,
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

const signAsAlice = (encoding: string, payload: string) =>
  post(
    h.baseUrl,
    h.service.credentials,
    '/public/v1/submit/sign_raw_payload',
    envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', org, {
      signWith: ethAddressOf(h),
      payload,
      encoding,
      hashFunction: 'HASH_FUNCTION_NO_OP',
    }),
    { keys: alice },
  );

describe('typed-data and authorization facts', () => {
  it('allows EIP-712 for the named verifying contract and denies another', async () => {
    const ok = await signAsAlice('PAYLOAD_ENCODING_EIP712', typedData(CONTRACT));
    expect(ok.status).toBe(200);
    expect((ok.json.activity as { status: string }).status).toBe('ACTIVITY_STATUS_COMPLETED');
    const denied = await signAsAlice(
      'PAYLOAD_ENCODING_EIP712',
      typedData('0x1111111111111111111111111111111111111111'),
    );
    expect(denied.status).toBe(403);
    expect(denied.json.code).toBe(7);
  });

  it('allows an EIP-7702 authorization for the named delegate and chain, denies others', async () => {
    const auth = (address: string, chainId: number) => JSON.stringify({ address, chainId, nonce: 0 });
    expect((await signAsAlice('PAYLOAD_ENCODING_EIP7702_AUTHORIZATION', auth(DELEGATE, 31337))).status).toBe(
      200,
    );
    expect((await signAsAlice('PAYLOAD_ENCODING_EIP7702_AUTHORIZATION', auth(DELEGATE, 1))).status).toBe(403);
    expect(
      (
        await signAsAlice(
          'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION',
          auth('0x2222222222222222222222222222222222222222', 31337),
        )
      ).status,
    ).toBe(403);
  });

  it('denies typed data whose domain type leaves out the facts the policy reads, though the domain holds them', async () => {
    // Without verifyingContract and chainId in EIP712Domain, the signature binds neither: a
    // contract elsewhere, on any chain, would accept it. The values in the JSON are not facts.
    const doc = JSON.parse(typedData(CONTRACT)) as { types: { EIP712Domain: { name: string }[] } };
    doc.types.EIP712Domain = doc.types.EIP712Domain.filter((f) => f.name === 'name' || f.name === 'version');
    const res = await signAsAlice('PAYLOAD_ENCODING_EIP712', JSON.stringify(doc));
    expect(res.status).toBe(403);
    expect(res.json.code).toBe(7);
  });

  it('denies a plain digest, which carries neither fact', async () => {
    const res = await signAsAlice('PAYLOAD_ENCODING_HEXADECIMAL', '11'.repeat(32));
    expect(res.status).toBe(403);
  });
});
