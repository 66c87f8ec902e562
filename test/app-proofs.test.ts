/**
 * App proofs: with `generateAppProofs`, activities that create or reveal key material or sign return
 * `appProofs` that @turnkey/crypto's `verifyAppProofSignature` accepts unmodified; an altered payload
 * fails it; the proof key is the one the discovery endpoint publishes and the build attestation names.
 */
import { randomUUID } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { generateP256KeyPair, verifyAppProofSignature } from '@turnkey/crypto';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { Turnkey } from '@turnkey/sdk-server';
import { serializeTransaction } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newApiKey, type ApiKeyPair } from './helpers/api-key.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';

type Json = Record<string, any>;
type Proof = { scheme: string; publicKey: string; proofPayload: string; signature: string };
const ts = () => String(Date.now());

const ETH_ACCOUNT = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
} as const;

describe('app proofs', () => {
  let h: EmbeddedHarness;
  let org: string;
  let http: TurnkeyClient;
  let published: Json;
  const client = (k: ApiKeyPair) => new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(k));

  beforeAll(async () => {
    h = await startEmbedded();
    org = h.service.credentials.organizationId;
    http = client({
      apiPublicKey: h.service.credentials.apiPublicKey,
      apiPrivateKey: h.service.credentials.apiPrivateKey,
    });
    published = (await (await fetch(`${h.baseUrl}/public/v1/discovery/keys`)).json()) as Json;
  });
  afterAll(() => h?.close());

  /** Every proof verifies, carries the published key, and names this activity and organization. */
  function checkProofs(activity: Json, expected: number): Json[] {
    const proofs = activity.appProofs as Proof[];
    expect(proofs).toHaveLength(expected);
    return proofs.map((p) => {
      expect(p.scheme).toBe('SIGNATURE_SCHEME_EPHEMERAL_KEY_P256');
      expect(p.publicKey).toBe(published.appProofPublicKey);
      expect(() => verifyAppProofSignature(p as never)).not.toThrow();
      const payload = JSON.parse(p.proofPayload) as Json;
      expect(payload).toMatchObject({ activityId: activity.id, organizationId: activity.organizationId });
      expect(payload.activityType).toBe(activity.type);
      expect(Number(payload.timestampMs)).toBeGreaterThan(0);
      return payload;
    });
  }

  it('publishes a 130-byte proof key (encryption ‖ signing) with the discovery keys', () => {
    expect(published.appProofPublicKey).toMatch(/^04[0-9a-f]{128}04[0-9a-f]{128}$/);
  });

  it('create_wallet proves each derived address; an altered payload or signature fails verification', async () => {
    const res = await http.createWallet({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: ts(),
      organizationId: org,
      parameters: {
        walletName: 'proven',
        accounts: [ETH_ACCOUNT, { ...ETH_ACCOUNT, path: "m/44'/60'/0'/0/1" }],
      },
      generateAppProofs: true,
    });
    const result = (res.activity.result as Json).createWalletResult as Json;
    const payloads = checkProofs(res.activity, 2);
    expect(payloads.map((p) => p.address)).toEqual(result.addresses);
    expect(payloads[1]).toMatchObject({
      type: 'APP_PROOF_TYPE_ADDRESS_DERIVATION',
      walletId: result.walletId,
      path: "m/44'/60'/0'/0/1",
      addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
    });

    const proof = (res.activity.appProofs as Proof[])[0]!;
    const other = (res.activity.appProofs as Proof[])[1]!;
    const altered = {
      ...proof,
      proofPayload: proof.proofPayload.replace(result.addresses[0], result.addresses[1]),
    };
    expect(altered.proofPayload).not.toBe(proof.proofPayload);
    expect(() => verifyAppProofSignature(altered as never)).toThrow(/verification failed/);
    expect(() => verifyAppProofSignature({ ...proof, signature: other.signature } as never)).toThrow();

    // list_app_proofs returns the same proofs later.
    const listed = await fetchQuery('list_app_proofs', { organizationId: org, activityId: res.activity.id });
    expect(listed.appProofs).toEqual(res.activity.appProofs);
  });

  /** A stamped query through @turnkey/http's own request path. */
  async function fetchQuery(name: string, body: Json): Promise<Json> {
    const stamper = new ApiKeyStamper({
      apiPublicKey: h.service.credentials.apiPublicKey,
      apiPrivateKey: h.service.credentials.apiPrivateKey,
    });
    const text = JSON.stringify(body);
    const stamp = await stamper.stamp(text);
    const res = await fetch(`${h.baseUrl}/public/v1/query/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [stamp.stampHeaderName]: stamp.stampHeaderValue },
      body: text,
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Json;
  }

  it('signing, key creation and exports each carry proofs of what they did', async () => {
    const signWith = ethAddressOf(h);
    const raw = await http.signRawPayload({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      timestampMs: ts(),
      organizationId: org,
      parameters: {
        signWith,
        payload: 'ab'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      generateAppProofs: true,
    });
    const sig = (raw.activity.result as Json).signRawPayloadResult as Json;
    const [rawProof] = checkProofs(raw.activity, 1);
    expect(rawProof).toMatchObject({
      type: 'APP_PROOF_TYPE_SIGNATURE',
      signWith,
      r: sig.r,
      s: sig.s,
      v: sig.v,
    });
    expect(rawProof!.payloadSha256).toBe(Buffer.from(sha256(Buffer.from('ab'.repeat(32)))).toString('hex'));

    const many = await http.signRawPayloads({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
      timestampMs: ts(),
      organizationId: org,
      parameters: {
        signWith,
        payloads: ['01'.repeat(32), '02'.repeat(32), '03'.repeat(32)],
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      generateAppProofs: true,
    });
    checkProofs(many.activity, 3);

    const unsignedTransaction = serializeTransaction({
      chainId: 1,
      type: 'eip1559',
      nonce: 0,
      to: '0x000000000000000000000000000000000000dEaD',
      value: 1n,
      gas: 21000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    }).slice(2);
    const tx = await http.signTransaction({
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      timestampMs: ts(),
      organizationId: org,
      parameters: { signWith, unsignedTransaction, type: 'TRANSACTION_TYPE_ETHEREUM' },
      generateAppProofs: true,
    });
    const [txProof] = checkProofs(tx.activity, 1);
    expect(txProof).toMatchObject({
      type: 'APP_PROOF_TYPE_SIGNATURE',
      transactionType: 'TRANSACTION_TYPE_ETHEREUM',
    });

    const keys = await http.createPrivateKeys({
      type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2',
      timestampMs: ts(),
      organizationId: org,
      parameters: {
        privateKeys: [
          {
            privateKeyName: `proven key ${randomUUID()}`,
            curve: 'CURVE_SECP256K1',
            addressFormats: ['ADDRESS_FORMAT_ETHEREUM', 'ADDRESS_FORMAT_TRON'],
            privateKeyTags: [],
          },
        ],
      },
      generateAppProofs: true,
    });
    const created = ((keys.activity.result as Json).createPrivateKeysResultV2 as Json).privateKeys[0] as Json;
    const keyProofs = checkProofs(keys.activity, 2);
    expect(keyProofs.map((p) => p.address)).toEqual(created.addresses.map((a: Json) => a.address));

    const { publicKeyUncompressed: target } = generateP256KeyPair();
    const exported = await http.exportPrivateKey({
      type: 'ACTIVITY_TYPE_EXPORT_PRIVATE_KEY',
      timestampMs: ts(),
      organizationId: org,
      parameters: { privateKeyId: created.privateKeyId, targetPublicKey: target },
      generateAppProofs: true,
    });
    const bundle = ((exported.activity.result as Json).exportPrivateKeyResult as Json).exportBundle as string;
    const [exportProof] = checkProofs(exported.activity, 1);
    expect(exportProof).toMatchObject({ type: 'APP_PROOF_TYPE_EXPORT', privateKeyId: created.privateKeyId });
    expect(exportProof!.exportBundleSha256).toBe(Buffer.from(sha256(Buffer.from(bundle))).toString('hex'));
  });

  it('sdk-server puts the flag inside parameters: it is honoured there too', async () => {
    const sdk = new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: h.service.credentials.apiPublicKey,
      apiPrivateKey: h.service.credentials.apiPrivateKey,
      defaultOrganizationId: org,
    }).apiClient();
    const res = await sdk.createWallet({
      walletName: 'sdk proven',
      accounts: [ETH_ACCOUNT],
      generateAppProofs: true,
    });
    const activity = (await sdk.getActivity({ activityId: res.activity.id })).activity as Json;
    checkProofs(activity, 1);
  });

  it('without the flag there are no proofs; a flag that is not a boolean is refused', async () => {
    const res = await http.createWallet({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: ts(),
      organizationId: org,
      parameters: { walletName: 'unproven', accounts: [ETH_ACCOUNT] },
    });
    expect(res.activity.appProofs).toBeUndefined();
    const bad = http.createWallet({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: ts(),
      organizationId: org,
      parameters: { walletName: 'bad flag', accounts: [ETH_ACCOUNT] },
      generateAppProofs: 'yes' as never,
    });
    await expect(bad).rejects.toThrow(TurnkeyRequestError);
    await expect(bad).rejects.toThrow(/generateAppProofs: must be a boolean/);
    const names = (await http.getWallets({ organizationId: org })).wallets.map((w) => w.walletName);
    expect(names).not.toContain('bad flag');
  });

  it('an activity that waits for consensus gets its proofs when the approval completes it', async () => {
    const alice = newApiKey();
    const bob = newApiKey();
    const rootUser = (name: string, k: ApiKeyPair) => ({
      userName: name,
      apiKeys: [
        { apiKeyName: `${name} key`, publicKey: k.apiPublicKey, curveType: 'API_KEY_CURVE_P256' as const },
      ],
      authenticators: [],
      oauthProviders: [],
    });
    const made = await http.createSubOrganization({
      type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
      timestampMs: ts(),
      organizationId: org,
      parameters: {
        subOrganizationName: 'two roots with proofs',
        rootUsers: [rootUser('alice', alice), rootUser('bob', bob)],
        rootQuorumThreshold: 2,
        wallet: { walletName: 'w', accounts: [ETH_ACCOUNT] },
      },
      generateAppProofs: true,
    });
    const subResult = (made.activity.result as Json).createSubOrganizationResultV8 as Json;
    const [derived] = checkProofs(made.activity, 1);
    expect(derived!.address).toBe(subResult.wallet.addresses[0]);
    const sub = subResult.subOrganizationId as string;

    const first = await client(alice).signRawPayload({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      timestampMs: ts(),
      organizationId: sub,
      parameters: {
        signWith: subResult.wallet.addresses[0],
        payload: 'cd'.repeat(32),
        encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
        hashFunction: 'HASH_FUNCTION_NO_OP',
      },
      generateAppProofs: true,
    });
    expect(first.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect(first.activity.appProofs).toEqual([]);
    const approved = await client(bob).approveActivity({
      type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
      timestampMs: ts(),
      organizationId: sub,
      parameters: { fingerprint: first.activity.fingerprint },
    });
    expect(approved.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const [proof] = checkProofs(approved.activity, 1);
    const sig = (approved.activity.result as Json).signRawPayloadResult as Json;
    expect(proof).toMatchObject({ r: sig.r, s: sig.s, activityId: first.activity.id });
  });

  it('get_build_attestation names the build and the proof key, signed by the published signer key', async () => {
    const { buildAttestation } = await fetchQuery('get_build_attestation', { organizationId: org });
    expect(buildAttestation.signerPublicKey).toBe(published.signerPublicKey);
    const statement = JSON.parse(buildAttestation.statement) as Json;
    expect(statement).toMatchObject({
      type: 'COUNTERSIGN_BUILD_STATEMENT',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      appProofPublicKey: published.appProofPublicKey,
    });
    expect(statement.packageLockSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(statement.sourceCommit).toMatch(/^([0-9a-f]{40,64}|unknown)$/);
    const ok = p256.verify(
      Buffer.from(buildAttestation.signature, 'hex'),
      sha256(Buffer.from(buildAttestation.statement)),
      Buffer.from(published.signerPublicKey, 'hex'),
      { prehash: false },
    );
    expect(ok).toBe(true);
    const forged = buildAttestation.statement.replace(statement.version, '9.9.9');
    expect(
      p256.verify(
        Buffer.from(buildAttestation.signature, 'hex'),
        sha256(Buffer.from(forged)),
        Buffer.from(published.signerPublicKey, 'hex'),
        { prehash: false },
      ),
    ).toBe(false);
  });
});
