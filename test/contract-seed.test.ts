/**
 * Contract test for the seed's public API (seed.md 2.2 and 4.1): each activity path the service
 * serves, walked in a sensible order through @turnkey/http's unmodified TurnkeyClient with
 * @turnkey/api-key-stamper, against the real embedded service over HTTP. Every case runs through
 * the same envelope checks (status, type, intent, result, fingerprint over the exact bytes sent,
 * votes, timestamps, the seed's nested record), then reads the change back through a query.
 *
 * The client talks to a small recording proxy in front of the service, so the test sees the HTTP
 * status and the exact request bytes; the stamper is wrapped to record what it signed.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptExportBundle, generateP256KeyPair } from '@turnkey/crypto';
import { p256 } from '@noble/curves/nist.js';
import {
  createPublicClient,
  http,
  keccak256,
  parseEther,
  parseTransaction,
  recoverAddress,
  recoverTransactionAddress,
  serializeTransaction,
  toHex,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount, publicKeyToAddress } from 'viem/accounts';
import { KeyVault, loadOrCreateMasterKey } from '../src/service/keys/index.js';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';
import { serviceVerificationToken } from './helpers/verification.js';

type Json = Record<string, any>;
type Keys = { apiPublicKey: string; apiPrivateKey: string };
interface Body {
  type: string;
  timestampMs: string;
  organizationId: string;
  parameters: Json;
}

/** One HTTP exchange as seen on the wire between TurnkeyClient and the service. */
interface Exchange {
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  status: number;
  response: Buffer;
}

/** Wraps Turnkey's stamper and records every string it is asked to sign. */
class RecordingStamper {
  readonly signed: string[] = [];
  private readonly inner: ApiKeyStamper;
  constructor(keys: Keys) {
    this.inner = new ApiKeyStamper(keys);
  }
  stamp(content: string): ReturnType<ApiKeyStamper['stamp']> {
    this.signed.push(content);
    return this.inner.stamp(content);
  }
}

let anvil: RunningAnvil;
let chain: PublicClient;
let h: EmbeddedHarness;
let org: string;
let rootUserId: string;
let proxy: Server;
let proxyUrl: string;
let stamper: RecordingStamper;
let root: TurnkeyClient;
const exchanges: Exchange[] = [];

function newKey(): Keys {
  const secret = p256.utils.randomSecretKey();
  return {
    apiPublicKey: Buffer.from(p256.getPublicKey(secret, true)).toString('hex'),
    apiPrivateKey: Buffer.from(secret).toString('hex'),
  };
}

const clientFor = (keys: Keys) => new TurnkeyClient({ baseUrl: proxyUrl }, new ApiKeyStamper(keys));
const ts = () => String(Date.now());
const body = (type: string, parameters: Json): Body => ({
  type,
  timestampMs: ts(),
  organizationId: org,
  parameters,
});

async function refusal(p: Promise<unknown>): Promise<TurnkeyRequestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TurnkeyRequestError) return e;
    throw e;
  }
  throw new Error('expected the request to be refused');
}

/** A verification token signed by the service's key, as the OTP flow would issue it. */
const verificationToken = (contact: string): Promise<string> =>
  serviceVerificationToken(h, { contact, organizationId: org });

const msOf = (t: { seconds: string; nanos: string }) =>
  String(BigInt(t.seconds) * 1000n + BigInt(t.nanos) / 1_000_000n);

const ETH_ACCOUNT = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/0",
  addressFormat: 'ADDRESS_FORMAT_ETHEREUM',
} as const;
const UNCOMPRESSED_ACCOUNT = {
  curve: 'CURVE_SECP256K1',
  pathFormat: 'PATH_FORMAT_BIP32',
  path: "m/44'/60'/0'/0/1",
  addressFormat: 'ADDRESS_FORMAT_UNCOMPRESSED',
} as const;
const TO_A = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const TO_B = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
const TO_C = '0x90f79bf6eb2c4f870365e785982e1f101e93b906';
const TO_D = '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65';
const TOKEN = '0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc';
/** anvil's chain, served through `chainRpc`; the eth_send_transaction recipient starts empty. */
const CAIP2 = 'eip155:31337';
const SEND_TO = '0x2222222222222222222222222222222222220019';
const ERC20_ABI = JSON.stringify([
  {
    type: 'function',
    name: 'transfer',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'to', type: 'address' },
      { name: 'amount', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
]);

beforeAll(async () => {
  anvil = await startAnvil();
  chain = createPublicClient({ transport: http(anvil.rpcUrl) });
  // The webhook receiver (`/hook` below) is on loopback, which only --allow-private-network reaches.
  h = await startEmbedded({ chainRpc: new Map([[CAIP2, anvil.rpcUrl]]), allowPrivateNetwork: true });
  org = h.service.credentials.organizationId;
  rootUserId = h.service.credentials.userId;
  // The recording proxy: forwards every request byte-for-byte and records the exchange. `/hook`
  // stands in for the webhook receiver registered by set_organization_feature.
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const sent = Buffer.concat(chunks);
      const url = req.url ?? '';
      if (url.startsWith('/hook')) {
        res.writeHead(204).end();
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
      fetch(`${h.baseUrl}${url}`, { method: req.method ?? 'POST', headers, body: sent })
        .then(async (up) => {
          const response = Buffer.from(await up.arrayBuffer());
          exchanges.push({ url, headers: req.headers, body: sent, status: up.status, response });
          res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
          res.end(response);
        })
        .catch((e: unknown) => {
          res.writeHead(502).end(String(e));
        });
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const { apiPublicKey, apiPrivateKey } = h.service.credentials;
  stamper = new RecordingStamper({ apiPublicKey, apiPrivateKey });
  root = new TurnkeyClient({ baseUrl: proxyUrl }, stamper);
});

afterAll(async () => {
  if (proxy !== undefined) await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await h?.close();
  await anvil?.stop();
});

/** State handed from one case to the next (create before delete, export before delete_wallets …). */
const s = {
  subKey: newKey(),
  subOrgId: '',
  bobId: '',
  emailToken: '',
  privateKeyId: '',
  privateKeyAddresses: [] as { format: string; address: string }[],
  policyIds: [] as string[],
  session: newKey(),
  policyId: '',
  exportTarget: generateP256KeyPair(),
  exportWallet: { walletId: '', address: '' },
  sciId: '',
  credToDelete: '',
  credToUpdate: '',
  ivan: { id: '', key: newKey() },
  bobKey: { id: '', key: newKey() },
  invitationId: '',
  deploymentId: '',
  send: { nonce: '', balanceBefore: 0n },
  secrets: {
    secret: `sk_contract_${randomUUID()}`,
    private: `pk_contract_${randomUUID()}`,
  },
};

interface Case {
  path: string;
  type: string;
  intentKey: string;
  resultKey: string;
  /** Prerequisites, through the same client; not part of the checked exchange. */
  setup?: () => Promise<void>;
  parameters: () => Json;
  submit: (b: Body) => Promise<unknown>;
  /** Intent fields the service seals: replaced by a sealed token, never the plaintext. */
  sealed?: readonly string[];
  /** The seed's result fields. */
  result: (r: Json, p: Json) => void | Promise<void>;
  /** The resource really changed: read back through the matching query. */
  readBack: (r: Json, p: Json) => Promise<void>;
}

const cases: Case[] = [
  {
    path: 'create_sub_organization',
    type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
    intentKey: 'createSubOrganizationIntentV8',
    resultKey: 'createSubOrganizationResultV8',
    parameters: () => ({
      subOrganizationName: 'Contract customer',
      rootUsers: [
        {
          userName: 'sub root',
          userEmail: 'subroot@example.com',
          userPhoneNumber: '+14155550123',
          apiKeys: [
            {
              apiKeyName: 'sub root key',
              publicKey: s.subKey.apiPublicKey,
              curveType: 'API_KEY_CURVE_P256',
              expirationSeconds: '86400',
            },
          ],
          authenticators: [],
          oauthProviders: [],
        },
      ],
      rootQuorumThreshold: 1,
      wallet: {
        walletName: 'Contract wallet',
        accounts: [ETH_ACCOUNT, UNCOMPRESSED_ACCOUNT],
        mnemonicLength: 12,
      },
      disableEmailRecovery: false,
      disableEmailAuth: false,
      disableSmsAuth: true,
      disableOtpEmailAuth: false,
    }),
    submit: (b) => root.createSubOrganization(b as never),
    result: (r) => {
      expect(Object.keys(r).sort()).toEqual(['rootUserIds', 'subOrganizationId', 'wallet']);
      expect(r.subOrganizationId).toMatch(/^[0-9a-f-]{36}$/);
      expect(Object.keys(r.wallet).sort()).toEqual(['addresses', 'walletId']);
      expect(r.wallet.addresses).toHaveLength(2);
      expect(r.wallet.addresses[0]).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(r.wallet.addresses[1]).toMatch(/^04[0-9a-f]{128}$/);
      expect(r.rootUserIds).toHaveLength(1);
      s.subOrgId = r.subOrganizationId;
    },
    readBack: async (r) => {
      expect((await root.getSubOrgIds({ organizationId: org })).organizationIds).toContain(s.subOrgId);
      const sub = clientFor(s.subKey);
      const o = (await sub.getOrganization({ organizationId: s.subOrgId })).organizationData;
      expect(o.name).toBe('Contract customer');
      expect(o.rootQuorum).toEqual({ threshold: 1, userIds: r.rootUserIds });
      expect(o.users?.map((u) => [u.userId, u.userName, u.userEmail, u.userPhoneNumber])).toEqual([
        [r.rootUserIds[0], 'sub root', 'subroot@example.com', '+14155550123'],
      ]);
      expect(o.wallets?.map((w) => [w.walletId, w.walletName])).toEqual([
        [r.wallet.walletId, 'Contract wallet'],
      ]);
      const { accounts } = await sub.getWalletAccounts({
        organizationId: s.subOrgId,
        walletId: r.wallet.walletId,
      });
      // The query lists accounts in its own order; compare as a set.
      const byPath = (x: string[], y: string[]) => String(x[0]).localeCompare(String(y[0]));
      expect(accounts.map((a) => [a.path, a.addressFormat, a.address]).sort(byPath)).toEqual([
        [ETH_ACCOUNT.path, 'ADDRESS_FORMAT_ETHEREUM', r.wallet.addresses[0]],
        [UNCOMPRESSED_ACCOUNT.path, 'ADDRESS_FORMAT_UNCOMPRESSED', r.wallet.addresses[1]],
      ]);
    },
  },
  {
    path: 'update_user',
    type: 'ACTIVITY_TYPE_UPDATE_USER',
    intentKey: 'updateUserIntent',
    resultKey: 'updateUserResult',
    setup: async () => {
      const res = await root.createUsers({
        type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
        timestampMs: ts(),
        organizationId: org,
        parameters: {
          users: [
            { userName: 'contract bob', apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] },
          ],
        },
      } as never);
      s.bobId = (res.activity.result as Json).createUsersResult.userIds[0];
    },
    parameters: () => ({
      userId: s.bobId,
      userName: 'contract robert',
      userEmail: 'robert@example.com',
      userTagIds: [],
      userPhoneNumber: '+4915112345678',
    }),
    submit: (b) => root.updateUser(b as never),
    result: (r, p) => expect(r).toEqual({ userId: p.userId }),
    readBack: async (_r, p) => {
      const { user } = await root.getUser({ organizationId: org, userId: p.userId });
      expect(user).toMatchObject({
        userId: p.userId,
        userName: 'contract robert',
        userEmail: 'robert@example.com',
        userPhoneNumber: '+4915112345678',
        userTags: [],
      });
    },
  },
  {
    path: 'create_private_keys',
    type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2',
    intentKey: 'createPrivateKeysIntentV2',
    resultKey: 'createPrivateKeysResultV2',
    parameters: () => ({
      privateKeys: [
        {
          privateKeyName: 'contract key',
          curve: 'CURVE_SECP256K1',
          privateKeyTags: [],
          addressFormats: ['ADDRESS_FORMAT_UNCOMPRESSED', 'ADDRESS_FORMAT_ETHEREUM'],
        },
      ],
    }),
    submit: (b) => root.createPrivateKeys(b as never),
    result: (r) => {
      expect(Object.keys(r)).toEqual(['privateKeys']);
      expect(r.privateKeys).toHaveLength(1);
      const k = r.privateKeys[0];
      expect(Object.keys(k).sort()).toEqual(['addresses', 'privateKeyId']);
      expect(k.addresses.map((a: Json) => Object.keys(a).sort())).toEqual([
        ['address', 'format'],
        ['address', 'format'],
      ]);
      expect(k.addresses.map((a: Json) => a.format)).toEqual([
        'ADDRESS_FORMAT_UNCOMPRESSED',
        'ADDRESS_FORMAT_ETHEREUM',
      ]);
      const [uncompressed, eth] = k.addresses as { format: string; address: string }[];
      expect(uncompressed?.address).toMatch(/^04[0-9a-f]{128}$/);
      expect(publicKeyToAddress(`0x${uncompressed?.address}` as Hex)).toBe(eth?.address);
      s.privateKeyId = k.privateKeyId;
      s.privateKeyAddresses = k.addresses;
    },
    readBack: async (r) => {
      const { privateKey } = await root.getPrivateKey({ organizationId: org, privateKeyId: s.privateKeyId });
      expect(privateKey).toMatchObject({
        privateKeyId: s.privateKeyId,
        privateKeyName: 'contract key',
        curve: 'CURVE_SECP256K1',
        privateKeyTags: [],
        addresses: r.privateKeys[0].addresses,
      });
    },
  },
  {
    path: 'sign_raw_payloads',
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
    intentKey: 'signRawPayloadsIntent',
    resultKey: 'signRawPayloadsResult',
    parameters: () => ({
      signWith: s.privateKeyId,
      payloads: ['636f756e7465727369676e', '0x7365656420636f6e7472616374'],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_KECCAK256',
    }),
    submit: (b) => root.signRawPayloads(b as never),
    result: async (r, p) => {
      expect(Object.keys(r)).toEqual(['signatures']);
      expect(r.signatures).toHaveLength(2);
      const eth = s.privateKeyAddresses.find((a) => a.format === 'ADDRESS_FORMAT_ETHEREUM')?.address;
      for (const [i, payload] of (p.payloads as string[]).entries()) {
        const sig = r.signatures[i] as Json;
        expect(Object.keys(sig).sort()).toEqual(['r', 's', 'v']);
        const hash = keccak256(`0x${payload.replace(/^0x/, '')}`);
        const signer = await recoverAddress({
          hash,
          signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) },
        });
        expect(signer).toBe(eth);
      }
    },
    // Signing changes no resource; the activity itself is the record (checked via get_activity).
    readBack: async () => {},
  },
  {
    path: 'create_policies',
    type: 'ACTIVITY_TYPE_CREATE_POLICIES',
    intentKey: 'createPoliciesIntent',
    resultKey: 'createPoliciesResult',
    parameters: () => ({
      policies: [
        {
          policyName: 'contract: root approves transfers to A',
          effect: 'EFFECT_ALLOW',
          condition: `eth.tx.to == '${TO_A}'`,
          consensus: `approvers.any(u, u.id == '${rootUserId}')`,
          notes: 'first',
        },
        {
          policyName: 'contract: root approves transfers to B',
          effect: 'EFFECT_ALLOW',
          condition: `eth.tx.to == '${TO_B}'`,
          consensus: `approvers.any(u, u.id == '${rootUserId}')`,
          notes: 'second',
        },
      ],
    }),
    submit: (b) => root.createPolicies(b as never),
    result: (r) => {
      expect(Object.keys(r)).toEqual(['policyIds']);
      expect(r.policyIds).toHaveLength(2);
      s.policyIds = r.policyIds;
    },
    readBack: async (r, p) => {
      for (const [i, policyId] of (r.policyIds as string[]).entries()) {
        const { policy } = await root.getPolicy({ organizationId: org, policyId });
        expect(policy).toMatchObject({ policyId, ...p.policies[i] });
      }
    },
  },
  {
    path: 'stamp_login',
    type: 'ACTIVITY_TYPE_STAMP_LOGIN',
    intentKey: 'stampLoginIntent',
    resultKey: 'stampLoginResult',
    parameters: () => ({
      publicKey: s.session.apiPublicKey,
      expirationSeconds: '3600',
      invalidateExisting: false,
    }),
    submit: (b) => root.stampLogin(b as never),
    result: (r) => {
      expect(Object.keys(r)).toEqual(['session']);
      const parts = String(r.session).split('.');
      expect(parts).toHaveLength(3);
      const claims = JSON.parse(Buffer.from(String(parts[1]), 'base64url').toString()) as Json;
      expect(claims).toMatchObject({
        public_key: s.session.apiPublicKey,
        user_id: rootUserId,
        organization_id: org,
      });
      expect(Math.abs(Number(claims.exp) - (Math.floor(Date.now() / 1000) + 3600))).toBeLessThan(30);
    },
    readBack: async () => {
      const { apiKeys } = await root.getApiKeys({ organizationId: org, userId: rootUserId });
      const k = apiKeys.find((x) => x.credential.publicKey === s.session.apiPublicKey);
      expect(k?.expirationSeconds).toBe('3600');
      expect((await clientFor(s.session).getWhoami({ organizationId: org })).userId).toBe(rootUserId);
    },
  },
  {
    path: 'sign_transaction',
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    intentKey: 'signTransactionIntentV2',
    resultKey: 'signTransactionResult',
    parameters: () => ({
      signWith: ethAddressOf(h),
      unsignedTransaction: serializeTransaction({
        type: 'eip1559',
        chainId: 11155111,
        nonce: 3,
        to: TO_C,
        value: 1000n,
        gas: 21000n,
        maxFeePerGas: 2_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      }).slice(2),
      type: 'TRANSACTION_TYPE_ETHEREUM',
    }),
    submit: (b) => root.signTransaction(b as never),
    result: async (r) => {
      expect(Object.keys(r)).toEqual(['signedTransaction']);
      const signed = `0x${String(r.signedTransaction).replace(/^0x/, '')}` as Hex;
      expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(
        ethAddressOf(h),
      );
      expect(parseTransaction(signed)).toMatchObject({ to: TO_C, value: 1000n, nonce: 3, chainId: 11155111 });
    },
    readBack: async () => {},
  },
  {
    path: 'create_policy',
    type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
    intentKey: 'createPolicyIntentV3',
    resultKey: 'createPolicyResult',
    parameters: () => ({
      policyName: 'contract: root approves transfers to D',
      effect: 'EFFECT_ALLOW',
      condition: `eth.tx.to == '${TO_D}'`,
      consensus: `approvers.any(u, u.id == '${rootUserId}')`,
      notes: 'single',
    }),
    submit: (b) => root.createPolicy(b as never),
    result: (r) => {
      expect(Object.keys(r)).toEqual(['policyId']);
      s.policyId = r.policyId;
    },
    readBack: async (r, p) => {
      const { policy } = await root.getPolicy({ organizationId: org, policyId: r.policyId });
      expect(policy).toMatchObject({ policyId: r.policyId, ...p });
    },
  },
  {
    path: 'update_user_email',
    type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL',
    intentKey: 'updateUserEmailIntent',
    resultKey: 'updateUserEmailResult',
    setup: async () => {
      s.emailToken = await verificationToken('robert.new@example.com');
    },
    parameters: () => ({
      userId: s.bobId,
      userEmail: 'robert.new@example.com',
      verificationToken: s.emailToken,
    }),
    submit: (b) => root.updateUserEmail(b as never),
    result: (r, p) => expect(r).toEqual({ userId: p.userId }),
    readBack: async (_r, p) => {
      expect((await root.getUser({ organizationId: org, userId: p.userId })).user.userEmail).toBe(
        'robert.new@example.com',
      );
    },
  },
  {
    path: 'export_wallet_account',
    type: 'ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT',
    intentKey: 'exportWalletAccountIntent',
    resultKey: 'exportWalletAccountResult',
    setup: async () => {
      const res = await root.createWallet({
        type: 'ACTIVITY_TYPE_CREATE_WALLET',
        timestampMs: ts(),
        organizationId: org,
        parameters: { walletName: 'contract export', accounts: [ETH_ACCOUNT] },
      });
      const w = res.activity.result.createWalletResult;
      s.exportWallet = { walletId: String(w?.walletId), address: String(w?.addresses[0]) };
      expect(
        (await root.getWallet({ organizationId: org, walletId: s.exportWallet.walletId })).wallet.exported,
      ).toBe(false);
    },
    parameters: () => ({
      address: s.exportWallet.address,
      targetPublicKey: s.exportTarget.publicKeyUncompressed,
    }),
    submit: (b) => root.exportWalletAccount(b as never),
    result: async (r, p) => {
      expect(Object.keys(r).sort()).toEqual(['address', 'exportBundle']);
      expect(r.address).toBe(p.address);
      const privateKey = await decryptExportBundle({
        exportBundle: r.exportBundle,
        embeddedKey: s.exportTarget.privateKey,
        organizationId: org,
        dangerouslyOverrideSignerPublicKey: h.service.signerPublicKey,
        returnMnemonic: false,
        keyFormat: 'HEXADECIMAL',
      });
      expect(privateKeyToAccount(`0x${privateKey}` as Hex).address).toBe(p.address);
    },
    readBack: async () => {
      const { wallet } = await root.getWallet({ organizationId: org, walletId: s.exportWallet.walletId });
      expect(wallet.exported).toBe(true);
    },
  },
  {
    path: 'delete_smart_contract_interface',
    type: 'ACTIVITY_TYPE_DELETE_SMART_CONTRACT_INTERFACE',
    intentKey: 'deleteSmartContractInterfaceIntent',
    resultKey: 'deleteSmartContractInterfaceResult',
    setup: async () => {
      const res = await root.createSmartContractInterface({
        type: 'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE',
        timestampMs: ts(),
        organizationId: org,
        parameters: {
          smartContractAddress: TOKEN,
          smartContractInterface: ERC20_ABI,
          type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
          label: 'contract ERC-20',
        },
      });
      s.sciId = String(res.activity.result.createSmartContractInterfaceResult?.smartContractInterfaceId);
      const list = await root.getSmartContractInterfaces({ organizationId: org });
      expect(list.smartContractInterfaces.map((i) => i.smartContractInterfaceId)).toContain(s.sciId);
    },
    parameters: () => ({ smartContractInterfaceId: s.sciId }),
    submit: (b) => root.deleteSmartContractInterface(b as never),
    result: (r, p) => expect(r).toEqual({ smartContractInterfaceId: p.smartContractInterfaceId }),
    readBack: async (_r, p) => {
      const list = await root.getSmartContractInterfaces({ organizationId: org });
      expect(list.smartContractInterfaces.map((i) => i.smartContractInterfaceId)).not.toContain(s.sciId);
      const e = await refusal(
        root.getSmartContractInterface({
          organizationId: org,
          smartContractInterfaceId: p.smartContractInterfaceId,
        }),
      );
      expect(e.code).toBe(5);
    },
  },
  {
    path: 'delete_fiat_on_ramp_credential',
    type: 'ACTIVITY_TYPE_DELETE_FIAT_ON_RAMP_CREDENTIAL',
    intentKey: 'deleteFiatOnRampCredentialIntent',
    resultKey: 'deleteFiatOnRampCredentialResult',
    setup: async () => {
      const res = await root.createFiatOnRampCredential({
        type: 'ACTIVITY_TYPE_CREATE_FIAT_ON_RAMP_CREDENTIAL',
        timestampMs: ts(),
        organizationId: org,
        parameters: {
          onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE',
          projectId: 'contract-project',
          publishableApiKey: 'contract-pub',
          encryptedSecretApiKey: `sk_${randomUUID()}`,
        },
      });
      s.credToDelete = String(res.activity.result.createFiatOnRampCredentialResult?.fiatOnRampCredentialId);
      const list = await root.listFiatOnRampCredentials({ organizationId: org });
      expect(list.fiatOnRampCredentials.map((c) => c.fiatOnrampCredentialId)).toContain(s.credToDelete);
    },
    parameters: () => ({ fiatOnrampCredentialId: s.credToDelete }),
    submit: (b) => root.deleteFiatOnRampCredential(b as never),
    // The seed's result field is spelled fiatOnRampCredentialId (capital R).
    result: (r, p) => expect(r).toEqual({ fiatOnRampCredentialId: p.fiatOnrampCredentialId }),
    readBack: async () => {
      const list = await root.listFiatOnRampCredentials({ organizationId: org });
      expect(list.fiatOnRampCredentials.map((c) => c.fiatOnrampCredentialId)).not.toContain(s.credToDelete);
    },
  },
  {
    path: 'update_fiat_on_ramp_credential',
    type: 'ACTIVITY_TYPE_UPDATE_FIAT_ON_RAMP_CREDENTIAL',
    intentKey: 'updateFiatOnRampCredentialIntent',
    resultKey: 'updateFiatOnRampCredentialResult',
    setup: async () => {
      const res = await root.createFiatOnRampCredential({
        type: 'ACTIVITY_TYPE_CREATE_FIAT_ON_RAMP_CREDENTIAL',
        timestampMs: ts(),
        organizationId: org,
        parameters: {
          onrampProvider: 'FIAT_ON_RAMP_PROVIDER_MOONPAY',
          projectId: 'contract-project-1',
          publishableApiKey: 'contract-pub-1',
          encryptedSecretApiKey: `sk_old_${randomUUID()}`,
        },
      });
      s.credToUpdate = String(res.activity.result.createFiatOnRampCredentialResult?.fiatOnRampCredentialId);
    },
    parameters: () => ({
      fiatOnrampCredentialId: s.credToUpdate,
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_MOONPAY',
      projectId: 'contract-project-2',
      publishableApiKey: 'contract-pub-2',
      encryptedSecretApiKey: s.secrets.secret,
      encryptedPrivateApiKey: s.secrets.private,
    }),
    sealed: ['encryptedSecretApiKey', 'encryptedPrivateApiKey'],
    submit: (b) => root.updateFiatOnRampCredential(b as never),
    result: (r, p) => expect(r).toEqual({ fiatOnRampCredentialId: p.fiatOnrampCredentialId }),
    readBack: async (_r, p) => {
      const list = await root.listFiatOnRampCredentials({ organizationId: org });
      const c = list.fiatOnRampCredentials.find((x) => x.fiatOnrampCredentialId === p.fiatOnrampCredentialId);
      expect(c).toMatchObject({
        onrampProvider: 'FIAT_ON_RAMP_PROVIDER_MOONPAY',
        projectId: 'contract-project-2',
        publishableApiKey: 'contract-pub-2',
      });
      expect(c).not.toHaveProperty('encryptedSecretApiKey');
      expect(c).not.toHaveProperty('encryptedPrivateApiKey');
      // The sealed secrets were replaced too: the vault opens the stored ones to the new plaintext.
      const { openCredentialSecret } = await import('../src/service/activities/resources.js');
      const master = loadOrCreateMasterKey({ dataDir: h.dataDir });
      const vault = new KeyVault(master);
      master.fill(0);
      const rec = (await h.service.store.listFiatOnRampCredentials(org)).find(
        (x) => x.id === p.fiatOnrampCredentialId,
      );
      expect(rec).toBeDefined();
      expect(Buffer.from(openCredentialSecret(vault, rec!, 'encryptedSecretApiKey')!).toString()).toBe(
        s.secrets.secret,
      );
      expect(Buffer.from(openCredentialSecret(vault, rec!, 'encryptedPrivateApiKey')!).toString()).toBe(
        s.secrets.private,
      );
    },
  },
  {
    path: 'delete_users',
    type: 'ACTIVITY_TYPE_DELETE_USERS',
    intentKey: 'deleteUsersIntent',
    resultKey: 'deleteUsersResult',
    setup: async () => {
      const res = await root.createUsers({
        type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
        timestampMs: ts(),
        organizationId: org,
        parameters: {
          users: [
            {
              userName: 'contract ivan',
              apiKeys: [
                {
                  apiKeyName: 'ivan key',
                  publicKey: s.ivan.key.apiPublicKey,
                  curveType: 'API_KEY_CURVE_P256',
                },
              ],
              authenticators: [],
              oauthProviders: [],
              userTags: [],
            },
          ],
        },
      } as never);
      s.ivan.id = (res.activity.result as Json).createUsersResult.userIds[0];
      expect((await clientFor(s.ivan.key).getWhoami({ organizationId: org })).userId).toBe(s.ivan.id);
    },
    parameters: () => ({ userIds: [s.ivan.id] }),
    submit: (b) => root.deleteUsers(b as never),
    result: (r, p) => expect(r).toEqual({ userIds: p.userIds }),
    readBack: async () => {
      const { users } = await root.getUsers({ organizationId: org });
      expect(users.map((u) => u.userId)).not.toContain(s.ivan.id);
      expect((await refusal(root.getUser({ organizationId: org, userId: s.ivan.id }))).code).toBe(5);
      await expect(clientFor(s.ivan.key).getWhoami({ organizationId: org })).rejects.toThrow();
    },
  },
  {
    path: 'delete_policy',
    type: 'ACTIVITY_TYPE_DELETE_POLICY',
    intentKey: 'deletePolicyIntent',
    resultKey: 'deletePolicyResult',
    parameters: () => ({ policyId: s.policyId }),
    submit: (b) => root.deletePolicy(b as never),
    result: (r, p) => expect(r).toEqual({ policyId: p.policyId }),
    readBack: async (_r, p) => {
      const { policies } = await root.getPolicies({ organizationId: org });
      expect(policies.map((x) => x.policyId)).not.toContain(p.policyId);
      expect(policies.map((x) => x.policyId)).toEqual(expect.arrayContaining(s.policyIds));
      expect((await refusal(root.getPolicy({ organizationId: org, policyId: p.policyId }))).code).toBe(5);
    },
  },
  {
    path: 'delete_wallets',
    type: 'ACTIVITY_TYPE_DELETE_WALLETS',
    intentKey: 'deleteWalletsIntent',
    resultKey: 'deleteWalletsResult',
    // The wallet exported by export_wallet_account, so no deleteWithoutExport is needed.
    parameters: () => ({ walletIds: [s.exportWallet.walletId], deleteWithoutExport: false }),
    submit: (b) => root.deleteWallets(b as never),
    result: (r, p) => expect(r).toEqual({ walletIds: p.walletIds }),
    readBack: async () => {
      const { wallets } = await root.getWallets({ organizationId: org });
      expect(wallets.map((w) => w.walletId)).not.toContain(s.exportWallet.walletId);
      expect(wallets.map((w) => w.walletId)).toContain(h.service.credentials.walletId);
      expect(
        (await refusal(root.getWallet({ organizationId: org, walletId: s.exportWallet.walletId }))).code,
      ).toBe(5);
    },
  },
  {
    path: 'delete_api_keys',
    type: 'ACTIVITY_TYPE_DELETE_API_KEYS',
    intentKey: 'deleteApiKeysIntent',
    resultKey: 'deleteApiKeysResult',
    setup: async () => {
      const res = await root.createApiKeys({
        type: 'ACTIVITY_TYPE_CREATE_API_KEYS_V2',
        timestampMs: ts(),
        organizationId: org,
        parameters: {
          userId: s.bobId,
          apiKeys: [
            { apiKeyName: 'bob key', publicKey: s.bobKey.key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' },
          ],
        },
      });
      s.bobKey.id = String(res.activity.result.createApiKeysResult?.apiKeyIds[0]);
      expect((await clientFor(s.bobKey.key).getWhoami({ organizationId: org })).userId).toBe(s.bobId);
    },
    parameters: () => ({ userId: s.bobId, apiKeyIds: [s.bobKey.id] }),
    submit: (b) => root.deleteApiKeys(b as never),
    result: (r, p) => expect(r).toEqual({ apiKeyIds: p.apiKeyIds }),
    readBack: async () => {
      const { apiKeys } = await root.getApiKeys({ organizationId: org, userId: s.bobId });
      expect(apiKeys.map((k) => k.apiKeyId)).not.toContain(s.bobKey.id);
      await expect(clientFor(s.bobKey.key).getWhoami({ organizationId: org })).rejects.toThrow();
    },
  },
  {
    path: 'delete_invitation',
    type: 'ACTIVITY_TYPE_DELETE_INVITATION',
    intentKey: 'deleteInvitationIntent',
    resultKey: 'deleteInvitationResult',
    setup: async () => {
      const res = await root.createInvitations({
        type: 'ACTIVITY_TYPE_CREATE_INVITATIONS',
        timestampMs: ts(),
        organizationId: org,
        parameters: {
          invitations: [
            {
              receiverUserName: 'contract mallory',
              receiverUserEmail: 'mallory@example.com',
              receiverUserTags: [],
              accessType: 'ACCESS_TYPE_API',
              senderUserId: rootUserId,
            },
          ],
        },
      });
      s.invitationId = String(res.activity.result.createInvitationsResult?.invitationIds[0]);
      expect(await h.service.store.getInvitation(org, s.invitationId)).toBeDefined();
    },
    parameters: () => ({ invitationId: s.invitationId }),
    submit: (b) => root.deleteInvitation(b as never),
    result: (r, p) => expect(r).toEqual({ invitationId: p.invitationId }),
    // The service has no invitation query (src/service/api/queries.ts): read the store instead.
    readBack: async (_r, p) => {
      expect(await h.service.store.getInvitation(org, p.invitationId)).toBeUndefined();
    },
  },
  {
    path: 'eth_send_transaction',
    // V1, the seed's version (4.1.19): a non-sponsored send from the default Ethereum account.
    type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION',
    intentKey: 'ethSendTransactionIntent',
    resultKey: 'ethSendTransactionResult',
    setup: async () => {
      const from = ethAddressOf(h);
      await chain.request({
        method: 'anvil_setBalance' as never,
        params: [from, toHex(parseEther('10'))] as never,
      });
      const { nonce } = await root.getNonces({
        organizationId: org,
        address: from,
        // anvil's chain id is not in the client's caip2 enum; it sends whatever it is given.
        caip2: CAIP2 as 'eip155:1',
        nonce: true,
      });
      s.send.nonce = String(nonce);
      s.send.balanceBefore = await chain.getBalance({ address: SEND_TO });
    },
    // Every field the service takes for a non-sponsored send; deadline and gasStationNonce are
    // sponsored-only and refused, so they are left out.
    parameters: () => ({
      from: ethAddressOf(h),
      sponsor: false,
      caip2: CAIP2,
      to: SEND_TO,
      value: '1234567890',
      data: '0x',
      nonce: s.send.nonce,
      gasLimit: '21000',
      maxFeePerGas: '30000000000',
      maxPriorityFeePerGas: '1000000000',
    }),
    submit: (b) => root.ethSendTransaction(b as never),
    result: (r) => {
      expect(Object.keys(r)).toEqual(['sendTransactionStatusId']);
      expect(r.sendTransactionStatusId).toMatch(/^[0-9a-f-]{36}$/);
    },
    readBack: async (r, p) => {
      const query = () =>
        root.getSendTransactionStatus({
          organizationId: org,
          sendTransactionStatusId: r.sendTransactionStatusId,
        });
      const deadline = Date.now() + 10_000;
      let status = await query();
      while (status.txStatus !== 'INCLUDED') {
        expect(status.txStatus).not.toBe('FAILED');
        if (Date.now() > deadline) throw new Error(`send still ${status.txStatus} after 10 s`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = await query();
      }
      expect(status).toEqual({
        txStatus: 'INCLUDED',
        eth: { txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
      });
      const hash = status.eth?.txHash as Hex;
      const receipt = await chain.getTransactionReceipt({ hash });
      expect(receipt.status).toBe('success');
      const tx = await chain.getTransaction({ hash });
      expect(tx).toMatchObject({
        hash,
        type: 'eip1559',
        chainId: 31337,
        from: p.from.toLowerCase(),
        to: p.to,
        value: BigInt(p.value),
        input: '0x',
        nonce: Number(p.nonce),
        gas: BigInt(p.gasLimit),
        maxFeePerGas: BigInt(p.maxFeePerGas),
        maxPriorityFeePerGas: BigInt(p.maxPriorityFeePerGas),
      });
      expect(await chain.getBalance({ address: p.to })).toBe(s.send.balanceBefore + BigInt(p.value));
    },
  },
  {
    path: 'restore_tvc_deployment',
    type: 'ACTIVITY_TYPE_RESTORE_TVC_DEPLOYMENT',
    intentKey: 'restoreTvcDeploymentIntent',
    resultKey: 'restoreTvcDeploymentResult',
    setup: async () => {
      const created = await root.createTvcDeployment({
        type: 'ACTIVITY_TYPE_CREATE_TVC_DEPLOYMENT',
        timestampMs: ts(),
        organizationId: org,
        parameters: {
          appId: randomUUID(),
          qosVersion: '0.4.0',
          pivotContainerImageUrl: 'ghcr.io/example/app@sha256:' + 'ab'.repeat(32),
          pivotPath: '/app/server',
          pivotArgs: ['--port', '3000'],
          expectedPivotDigest: 'cd'.repeat(32),
          nonce: 1,
          healthCheckType: 'TVC_HEALTH_CHECK_TYPE_HTTP',
          healthCheckPort: 3001,
          publicIngressPort: 3000,
        },
      } as never);
      s.deploymentId = String(created.activity.result.createTvcDeploymentResult?.deploymentId);
      await root.deleteTvcDeployment({
        type: 'ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT',
        timestampMs: ts(),
        organizationId: org,
        parameters: { deploymentId: s.deploymentId },
      });
      const got = await root.getTvcDeployment({ organizationId: org, deploymentId: s.deploymentId });
      expect(got.tvcDeployment.delete).toBe(true);
    },
    parameters: () => ({ deploymentId: s.deploymentId }),
    submit: (b) => root.restoreTvcDeployment(b as never),
    result: (r, p) => expect(r).toEqual({ deploymentId: p.deploymentId }),
    readBack: async (_r, p) => {
      const got = await root.getTvcDeployment({ organizationId: org, deploymentId: p.deploymentId });
      expect(got.tvcDeployment.delete).toBe(false);
    },
  },
  {
    path: 'set_organization_feature',
    type: 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
    // The seed gives no intent/result key for this one (4.1.21); the reference's names (11.2).
    intentKey: 'setOrganizationFeatureIntent',
    resultKey: 'setOrganizationFeatureResult',
    parameters: () => ({ name: 'FEATURE_NAME_WEBHOOK', value: `${proxyUrl}/hook/countersign` }),
    submit: (b) => root.setOrganizationFeature(b as never),
    result: (r, p) => {
      expect(Object.keys(r)).toEqual(['features']);
      expect(r.features).toContainEqual({ name: p.name, value: p.value });
    },
    readBack: async (_r, p) => {
      const o = (await root.getOrganization({ organizationId: org })).organizationData;
      expect(o.features).toContainEqual({ name: 'FEATURE_NAME_WEBHOOK', value: p.value });
    },
  },
];

describe('seed contract: every served activity path through TurnkeyClient', () => {
  it('covers all 21 paths of the seed list, in order', () => {
    expect(cases.map((c) => c.path)).toEqual([
      'create_sub_organization',
      'update_user',
      'create_private_keys',
      'sign_raw_payloads',
      'create_policies',
      'stamp_login',
      'sign_transaction',
      'create_policy',
      'update_user_email',
      'export_wallet_account',
      'delete_smart_contract_interface',
      'delete_fiat_on_ramp_credential',
      'update_fiat_on_ramp_credential',
      'delete_users',
      'delete_policy',
      'delete_wallets',
      'delete_api_keys',
      'delete_invitation',
      'eth_send_transaction',
      'restore_tvc_deployment',
      'set_organization_feature',
    ]);
  });

  for (const c of cases) {
    it(`${c.path} (${c.type})`, async () => {
      await c.setup?.();
      const parameters = c.parameters();
      const request = body(c.type, parameters);

      const seen = exchanges.length;
      const stamped = stamper.signed.length;
      const res = (await c.submit(request)) as Json;

      // One exchange on the wire: the seed's path, HTTP 200, the bytes TurnkeyClient stamped.
      const wire = exchanges.slice(seen);
      expect(wire).toHaveLength(1);
      const x = wire[0] as Exchange;
      expect(x.url).toBe(`/public/v1/submit/${c.path}`);
      expect(x.status).toBe(200);
      const raw = x.body.toString('utf8');
      expect(raw).toBe(JSON.stringify(request));
      expect(stamper.signed.slice(stamped)).toEqual([raw]);
      expect(JSON.parse(x.response.toString('utf8'))).toEqual(res);
      const stamp = JSON.parse(Buffer.from(String(x.headers['x-stamp']), 'base64url').toString()) as Json;

      // The envelope (seed 2.2, reference 3.2).
      expect(Object.keys(res)).toEqual(['activity']);
      const a = res.activity as Json;
      expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(a.organizationId).toBe(org);
      expect(a.status).toBe('ACTIVITY_STATUS_COMPLETED');
      expect(a.type).toBe(c.type);
      expect(a.timestampMs).toBe(request.timestampMs);

      // intent: exactly one key holding the submitted parameters (sealed fields aside).
      expect(Object.keys(a.intent)).toEqual([c.intentKey]);
      const intent = a.intent[c.intentKey] as Json;
      const expected: Json = { ...parameters };
      for (const f of c.sealed ?? []) {
        const plaintext = String(parameters[f]);
        expect(typeof intent[f]).toBe('string');
        expect(intent[f]).not.toBe(plaintext);
        expect(intent[f]).not.toContain(plaintext);
        expect(intent[f]).toMatch(/^countersign-sealed:v1:/);
        expect(x.response.includes(Buffer.from(plaintext))).toBe(false);
        expected[f] = intent[f];
      }
      expect(intent).toEqual(expected);

      // result: the seed's result key beside the nested record.
      expect(Object.keys(a.result).sort()).toEqual(['activity', c.resultKey].sort());
      const result = a.result[c.resultKey] as Json;
      await c.result(result, parameters);

      // fingerprint over the exact body bytes sent.
      expect(a.fingerprint).toBe(`sha256:${createHash('sha256').update(x.body).digest('hex')}`);

      // votes: the submitter's own stamped request, APPROVED.
      expect(Array.isArray(a.votes)).toBe(true);
      expect(a.votes).toHaveLength(1);
      expect(a.votes[0]).toMatchObject({
        userId: rootUserId,
        activityId: a.id,
        selection: 'VOTE_SELECTION_APPROVED',
        publicKey: h.service.credentials.apiPublicKey,
        signature: stamp.signature,
        scheme: 'SIGNATURE_SCHEME_TK_API_P256',
      });
      expect(a.votes[0].user.userId).toBe(rootUserId);
      // The vote's message is the stamped body, except that sealed fields are sealed there too.
      if (c.sealed === undefined) expect(a.votes[0].message).toBe(raw);
      else {
        expect(JSON.parse(a.votes[0].message)).toEqual({ ...request, parameters: expected });
        for (const f of c.sealed) expect(a.votes[0].message).not.toContain(String(parameters[f]));
      }

      expect(typeof a.canApprove).toBe('boolean');
      expect(typeof a.canReject).toBe('boolean');
      expect(a.canApprove).toBe(false);
      expect(a.canReject).toBe(false);
      for (const t of [a.createdAt, a.updatedAt])
        expect(t).toEqual({
          seconds: expect.stringMatching(/^[0-9]+$/),
          nanos: expect.stringMatching(/^[0-9]+$/),
        });
      expect(Math.abs(Number(a.createdAt.seconds) * 1000 - Number(request.timestampMs))).toBeLessThan(60_000);
      expect(a.failure).toBeNull();

      // The seed's nested record mirrors the activity (its timestamps are strings, seed 2.2).
      const nested = a.result.activity as Json;
      expect(nested).toEqual({
        id: a.id,
        organizationId: org,
        status: 'ACTIVITY_STATUS_COMPLETED',
        type: c.type,
        intent: a.intent,
        result: { [c.resultKey]: result },
        votes: a.votes,
        fingerprint: a.fingerprint,
        canApprove: a.canApprove,
        canReject: a.canReject,
        createdAt: msOf(a.createdAt),
        updatedAt: msOf(a.updatedAt),
      });

      // The activity is recorded as returned…
      const got = (await root.getActivity({ organizationId: org, activityId: a.id })).activity as Json;
      expect(got).toMatchObject({
        id: a.id,
        status: 'ACTIVITY_STATUS_COMPLETED',
        type: c.type,
        intent: a.intent,
        fingerprint: a.fingerprint,
      });
      expect(got.result[c.resultKey]).toEqual(result);
      // …and the resource really changed.
      await c.readBack(result, parameters);
    });
  }
});
