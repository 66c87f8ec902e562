/**
 * `eth.tx.function_name` / `function_signature` / `contract_call_args` (turnkey-api.md 8.3) from an
 * uploaded smart contract interface, through @turnkey/http's TurnkeyClient against the real service
 * over HTTP on SQLite, signing as a non-root user so the policy gate decides.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { encodeFunctionData, getAddress, serializeTransaction, type Abi, type Hex } from 'viem';
import { openEmbeddedService } from '../src/service/embedded.js';
import { openSqliteStore } from '../src/service/store/sqlite.js';
import type { Store } from '../src/service/store/types.js';
import { KeyVault, loadOrCreateMasterKey } from '../src/service/keys/index.js';
import { createApiHandler } from '../src/service/api/handler.js';
import { Metrics } from '../src/service/api/metrics.js';
import { startHttpServer, type HttpListener } from '../src/service/api/http-server.js';
import { decodeContractCall } from '../src/service/abi-facts.js';
import { insertUserWithApiKey } from './helpers/users.js';

const TOKEN = '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc';
const R = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const OTHER = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';

/** The classic ERC-20 ABI, with its `_to` / `_value` parameter names. */
const ERC20_ABI = [
  {
    type: 'function',
    name: 'transfer',
    stateMutability: 'nonpayable',
    inputs: [
      { name: '_to', type: 'address' },
      { name: '_value', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'function',
    name: 'approve',
    stateMutability: 'nonpayable',
    inputs: [
      { name: '_spender', type: 'address' },
      { name: '_value', type: 'uint256' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'event',
    name: 'Transfer',
    anonymous: false,
    inputs: [
      { indexed: true, name: '_from', type: 'address' },
      { indexed: true, name: '_to', type: 'address' },
      { indexed: false, name: '_value', type: 'uint256' },
    ],
  },
] as const satisfies Abi;

let dataDir: string;
let store: Store;
let http: HttpListener;
let orgId: string;
let signWith: Hex;
let root: TurnkeyClient;
let alice: TurnkeyClient;
let policyId: string;

function clientFor(key: { apiPublicKey: string; apiPrivateKey: string }): TurnkeyClient {
  return new TurnkeyClient({ baseUrl: `http://${http.address}` }, new ApiKeyStamper(key));
}

/** A non-root user, inserted through the store's write() (there is no create_users activity yet). */
async function insertUser(organizationId: string, name: string): Promise<TurnkeyClient> {
  const { key } = await insertUserWithApiKey(store, { organizationId, name });
  return clientFor(key);
}

const ts = () => String(Date.now());

function unsignedTx(to: string, data: Hex): string {
  return serializeTransaction({
    type: 'eip1559',
    chainId: 11155111,
    nonce: 0,
    to: to as Hex,
    value: 0n,
    gas: 60000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    data,
  }).slice(2);
}

function sign(client: TurnkeyClient, unsignedTransaction: string) {
  return client.signTransaction({
    type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
    timestampMs: ts(),
    organizationId: orgId,
    parameters: { signWith, unsignedTransaction, type: 'TRANSACTION_TYPE_ETHEREUM' },
  });
}

async function refusal(p: Promise<unknown>): Promise<TurnkeyRequestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TurnkeyRequestError) return e;
    throw e;
  }
  throw new Error('expected the request to be refused');
}

const transferTo = (to: string, value = 1000n) =>
  encodeFunctionData({ abi: ERC20_ABI, functionName: 'transfer', args: [to as Hex, value] });

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'countersign-policy-abi-'));
  const logger = pino({ level: 'silent' });
  const svc = await openEmbeddedService({ dataDir, logger });
  const creds = svc.credentials;
  await svc.close();
  const masterKey = loadOrCreateMasterKey({ dataDir });
  const vault = new KeyVault(masterKey);
  masterKey.fill(0);
  store = openSqliteStore(join(dataDir, 'countersign.db'));
  const handler = createApiHandler({
    store,
    vault,
    logger,
    metrics: new Metrics(),
    maxRequestAgeMs: 5 * 60 * 1000,
    maxClockSkewMs: 60 * 1000,
  });
  http = await startHttpServer({ host: '127.0.0.1', port: 0, handler, metrics: () => '', logger });
  orgId = creds.organizationId;
  signWith = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as Hex;
  root = clientFor({ apiPublicKey: creds.apiPublicKey, apiPrivateKey: creds.apiPrivateKey });
  alice = await insertUser(orgId, 'alice');

  // Uploaded with the checksummed address: the match on eth.tx.to is case-insensitive.
  const up = await root.createSmartContractInterface({
    type: 'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE',
    timestampMs: ts(),
    organizationId: orgId,
    parameters: {
      smartContractAddress: getAddress(TOKEN),
      smartContractInterface: JSON.stringify(ERC20_ABI),
      type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
      label: 'ERC-20',
    },
  });
  expect(up.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

  const pol = await root.createPolicy({
    type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
    timestampMs: ts(),
    organizationId: orgId,
    parameters: {
      policyName: 'token transfers to R',
      effect: 'EFFECT_ALLOW',
      notes: '',
      condition:
        `eth.tx.to == '${TOKEN}' && eth.tx.function_name == 'transfer' && ` +
        `eth.tx.function_signature == 'transfer(address,uint256)' && ` +
        `eth.tx.contract_call_args['_to'] == '${R}' && eth.tx.contract_call_args['_value'] <= 5000`,
    },
  });
  expect(pol.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  policyId = pol.activity.result.createPolicyResult?.policyId as string;
});

afterAll(async () => {
  await http?.close();
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('eth.tx contract-call facts from an uploaded ABI', () => {
  it('signs a transfer to R, the policy having read the decoded call', async () => {
    const ok = await sign(alice, unsignedTx(TOKEN, transferTo(R)));
    expect(ok.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const evals = await alice.getPolicyEvaluations({ organizationId: orgId, activityId: ok.activity.id });
    expect(evals.policyEvaluations[0]?.policyEvaluations).toEqual([{ policyId, outcome: 'OUTCOME_ALLOW' }]);
  });

  it('matches a checksummed recipient in the calldata (args are lower-cased)', async () => {
    const ok = await sign(alice, unsignedTx(TOKEN, transferTo(getAddress(R))));
    expect(ok.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });

  it('denies a transfer to another recipient, or over the amount', async () => {
    const e = await refusal(sign(alice, unsignedTx(TOKEN, transferTo(OTHER))));
    expect(e.code).toBe(7);
    const big = await refusal(sign(alice, unsignedTx(TOKEN, transferTo(R, 5001n))));
    expect(big.code).toBe(7);
  });

  it('denies an approve call', async () => {
    const data = encodeFunctionData({ abi: ERC20_ABI, functionName: 'approve', args: [R, 1000n] });
    const e = await refusal(sign(alice, unsignedTx(TOKEN, data)));
    expect(e.code).toBe(7);
  });

  it('gives no contract-call facts for another contract or undecodable calldata (denied)', async () => {
    const elsewhere = await refusal(sign(alice, unsignedTx(OTHER, transferTo(R))));
    expect(elsewhere.code).toBe(7);
    const truncated = transferTo(R).slice(0, 40) as Hex;
    const bad = await refusal(sign(alice, unsignedTx(TOKEN, truncated)));
    expect(bad.code).toBe(7);
  });
});

describe('decodeContractCall', () => {
  it('converts arrays, tuples, bytes and bools recursively, unnamed parameters by position', () => {
    const abi = [
      {
        type: 'function',
        name: 'f',
        stateMutability: 'nonpayable',
        inputs: [
          { name: 'who', type: 'address[]' },
          {
            name: 'order',
            type: 'tuple',
            components: [
              { name: 'flag', type: 'bool' },
              { name: 'blob', type: 'bytes' },
              { name: 'n', type: 'int8' },
            ],
          },
          { name: '', type: 'bytes32' },
        ],
        outputs: [],
      },
    ] as const satisfies Abi;
    const h32 = `0x${'AB'.repeat(32)}` as Hex;
    const data = encodeFunctionData({
      abi,
      functionName: 'f',
      args: [[getAddress(R)], { flag: true, blob: '0xDEAD', n: -3 }, h32],
    });
    const call = decodeContractCall(abi, data);
    expect(call?.function_signature).toBe('f(address[],(bool,bytes,int8),bytes32)');
    expect(call?.function_name).toBe('f');
    expect({ ...call?.contract_call_args }).toEqual({
      who: [R],
      order: { flag: true, blob: '0xdead', n: -3n },
      '2': h32.toLowerCase(),
    });
    expect(decodeContractCall(abi, '0x12345678')).toBeUndefined();
  });
});
