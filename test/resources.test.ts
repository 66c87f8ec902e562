/**
 * The other resources — smart contract interfaces, fiat on-ramp credentials, TVC deployments and
 * organization features — through @turnkey/http's unmodified TurnkeyClient against the real
 * embedded service over HTTP on SQLite: each activity's full response, the change read back
 * through the queries, and bad input refused with the field named and nothing written.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient, TurnkeyRequestError } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { startEmbedded, storedDatabaseBytes, type EmbeddedHarness } from './helpers/embedded.js';
import { envelope, post } from './helpers/http.js';
import { insertUserWithApiKey } from './helpers/users.js';

let h: EmbeddedHarness;
let org: string;
let root: TurnkeyClient;

const ts = () => String(Date.now());

const clientFor = (key: { apiPublicKey: string; apiPrivateKey: string }) =>
  new TurnkeyClient({ baseUrl: h.baseUrl }, new ApiKeyStamper(key));

/** No create_users here: extra users (and organizations) go in through the store's write(). */
async function insertUser(organizationId: string, name: string, isRoot: boolean) {
  const { userId: id, key } = await insertUserWithApiKey(h.service.store, { organizationId, name, isRoot });
  return { id, key, client: clientFor(key) };
}

const activityCount = async (organizationId = org) =>
  (await h.service.store.listActivities(organizationId, { limit: 1000 })).length;

/** A refusal over raw stamped HTTP: status, gRPC code, the field named, and no activity written. */
async function expectRefused(path: string, type: string, parameters: unknown, status: number, field: string) {
  const before = await activityCount();
  const res = await post(
    h.baseUrl,
    h.service.credentials,
    `/public/v1/submit/${path}`,
    envelope(type, org, parameters),
  );
  expect(res.status).toBe(status);
  expect(res.json.code).toBe(status === 400 ? 3 : status === 404 ? 5 : status === 403 ? 7 : -1);
  expect(String(res.json.message)).toContain(field);
  expect(await activityCount()).toBe(before);
  return res;
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

/** Everything a completed activity response must carry, the seed's nested record included. */
function expectCompleted(
  res: { activity: unknown },
  type: string,
  intentKey: string,
  parameters: unknown,
  resultKey: string,
): Record<string, any> {
  const a = res.activity as Record<string, any>;
  expect(a.status).toBe('ACTIVITY_STATUS_COMPLETED');
  expect(a.type).toBe(type);
  expect(a.organizationId).toBe(org);
  expect(Object.keys(a.intent)).toEqual([intentKey]);
  expect(a.intent[intentKey]).toEqual(parameters);
  expect(a.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect(a.votes).toHaveLength(1);
  expect(a.votes[0].selection).toBe('VOTE_SELECTION_APPROVED');
  expect(a.votes[0].userId).toBe(h.service.credentials.userId);
  expect(a.canApprove).toBe(false);
  expect(a.canReject).toBe(false);
  expect(a.createdAt).toEqual({
    seconds: expect.stringMatching(/^[0-9]+$/),
    nanos: expect.stringMatching(/^[0-9]+$/),
  });
  expect(a.updatedAt).toEqual({
    seconds: expect.stringMatching(/^[0-9]+$/),
    nanos: expect.stringMatching(/^[0-9]+$/),
  });
  expect(a.failure).toBeNull();
  const nested = a.result.activity;
  expect(nested).toMatchObject({
    id: a.id,
    organizationId: org,
    status: 'ACTIVITY_STATUS_COMPLETED',
    type,
    intent: a.intent,
    fingerprint: a.fingerprint,
    canApprove: false,
    canReject: false,
  });
  expect(nested.result[resultKey]).toEqual(a.result[resultKey]);
  expect(nested.votes).toEqual(a.votes);
  expect(nested.createdAt).toMatch(/^[0-9]+$/);
  expect(nested.updatedAt).toMatch(/^[0-9]+$/);
  return a.result[resultKey] as Record<string, any>;
}

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
  {
    type: 'event',
    name: 'Transfer',
    inputs: [
      { name: 'from', type: 'address', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'value', type: 'uint256', indexed: false },
    ],
  },
]);
const TOKEN = '0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc';
const PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const IDL = JSON.stringify({
  version: '0.1.0',
  name: 'token',
  instructions: [{ name: 'transfer', accounts: [], args: [] }],
});

beforeAll(async () => {
  h = await startEmbedded();
  org = h.service.credentials.organizationId;
  const { apiPublicKey, apiPrivateKey } = h.service.credentials;
  root = clientFor({ apiPublicKey, apiPrivateKey });
});
afterAll(async () => {
  await h.close();
});

describe('smart contract interfaces', () => {
  let ethId: string;

  it('creates an Ethereum ABI and a Solana IDL, readable through get/list and get_organization', async () => {
    const params = {
      smartContractAddress: TOKEN,
      smartContractInterface: ERC20_ABI,
      type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM' as const,
      label: 'ERC-20',
      notes: 'token',
    };
    const res = await root.createSmartContractInterface({
      type: 'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE',
      timestampMs: ts(),
      organizationId: org,
      parameters: params,
    });
    const result = expectCompleted(
      res,
      'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE',
      'createSmartContractInterfaceIntent',
      params,
      'createSmartContractInterfaceResult',
    );
    ethId = result.smartContractInterfaceId;
    expect(Object.keys(result)).toEqual(['smartContractInterfaceId']);

    const sol = await root.createSmartContractInterface({
      type: 'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE',
      timestampMs: ts(),
      organizationId: org,
      parameters: {
        smartContractAddress: PROGRAM,
        smartContractInterface: IDL,
        type: 'SMART_CONTRACT_INTERFACE_TYPE_SOLANA',
        label: 'SPL',
      },
    });
    const solId = sol.activity.result.createSmartContractInterfaceResult?.smartContractInterfaceId as string;

    const got = await root.getSmartContractInterface({
      organizationId: org,
      smartContractInterfaceId: ethId,
    });
    expect(got.smartContractInterface).toMatchObject({
      organizationId: org,
      smartContractInterfaceId: ethId,
      smartContractAddress: TOKEN,
      smartContractInterface: ERC20_ABI,
      type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
      label: 'ERC-20',
      notes: 'token',
    });
    const list = await root.getSmartContractInterfaces({ organizationId: org });
    expect(list.smartContractInterfaces.map((i) => i.smartContractInterfaceId)).toEqual([ethId, solId]);
    expect(list.smartContractInterfaces[1]).toMatchObject({ smartContractInterface: IDL, notes: '' });
    const o = await root.getOrganization({ organizationId: org });
    expect(
      o.organizationData.smartContractInterfaceReferences?.map((r) => r.smartContractInterfaceId),
    ).toEqual([ethId, solId]);
  });

  it('refuses bad interfaces naming the field, and a second interface for the same address', async () => {
    const path = 'create_smart_contract_interface';
    const type = 'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE';
    const ok = {
      smartContractAddress: TOKEN,
      smartContractInterface: ERC20_ABI,
      type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
      label: 'x',
    };
    const before = (await root.getSmartContractInterfaces({ organizationId: org })).smartContractInterfaces
      .length;
    await expectRefused(path, type, { ...ok, label: undefined }, 400, 'parameters.label');
    await expectRefused(
      path,
      type,
      { ...ok, smartContractInterface: 42 },
      400,
      'parameters.smartContractInterface',
    );
    await expectRefused(
      path,
      type,
      { ...ok, type: 'SMART_CONTRACT_INTERFACE_TYPE_TRON' },
      400,
      'parameters.type',
    );
    await expectRefused(
      path,
      type,
      { ...ok, smartContractAddress: '0x1234' },
      400,
      'parameters.smartContractAddress',
    );
    await expectRefused(
      path,
      type,
      { ...ok, smartContractInterface: '{not json' },
      400,
      'parameters.smartContractInterface',
    );
    // An ABI must be an array of entries; an IDL an object.
    await expectRefused(
      path,
      type,
      { ...ok, smartContractInterface: '{"abi":[]}' },
      400,
      'parameters.smartContractInterface',
    );
    const bad = await expectRefused(
      path,
      type,
      {
        ...ok,
        smartContractInterface: JSON.stringify([
          { type: 'function', name: 'f', inputs: [{ type: 'uint257' }] },
        ]),
      },
      400,
      'parameters.smartContractInterface',
    );
    expect(String(bad.json.message)).toContain('entry 0.inputs.0.type');
    await expectRefused(
      path,
      type,
      {
        ...ok,
        smartContractAddress: PROGRAM,
        type: 'SMART_CONTRACT_INTERFACE_TYPE_SOLANA',
        smartContractInterface: '[]',
      },
      400,
      'parameters.smartContractInterface',
    );
    // Same address, other case: the same contract.
    await expectRefused(
      path,
      type,
      { ...ok, smartContractAddress: TOKEN.toLowerCase() },
      400,
      'parameters.smartContractAddress',
    );
    expect(
      (await root.getSmartContractInterfaces({ organizationId: org })).smartContractInterfaces,
    ).toHaveLength(before);
  });

  it('deletes an interface; an unknown or deleted id is 404 naming the field', async () => {
    const params = { smartContractInterfaceId: ethId };
    const res = await root.deleteSmartContractInterface({
      type: 'ACTIVITY_TYPE_DELETE_SMART_CONTRACT_INTERFACE',
      timestampMs: ts(),
      organizationId: org,
      parameters: params,
    });
    const result = expectCompleted(
      res,
      'ACTIVITY_TYPE_DELETE_SMART_CONTRACT_INTERFACE',
      'deleteSmartContractInterfaceIntent',
      params,
      'deleteSmartContractInterfaceResult',
    );
    expect(result).toEqual({ smartContractInterfaceId: ethId });
    const e = await refusal(
      root.getSmartContractInterface({ organizationId: org, smartContractInterfaceId: ethId }),
    );
    expect(e.code).toBe(5);
    const path = 'delete_smart_contract_interface';
    const type = 'ACTIVITY_TYPE_DELETE_SMART_CONTRACT_INTERFACE';
    await expectRefused(path, type, params, 404, 'parameters.smartContractInterfaceId');
    await expectRefused(path, type, {}, 400, 'parameters.smartContractInterfaceId');
    await expectRefused(
      path,
      type,
      { smartContractInterfaceId: 'nope' },
      400,
      'parameters.smartContractInterfaceId',
    );
  });
});

describe('fiat on-ramp credentials', () => {
  const SECRET = `sk_live_${randomUUID()}`;
  const PRIVATE = `pk_private_${randomUUID()}`;
  const SECRET2 = `sk_rotated_${randomUUID()}`;
  let credId: string;

  it('creates a credential; the query shows the non-secret fields only', async () => {
    const params = {
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE' as const,
      projectId: 'project-1',
      publishableApiKey: 'pub-key-1',
      encryptedSecretApiKey: SECRET,
      encryptedPrivateApiKey: PRIVATE,
      sandboxMode: true,
    };
    const res = await root.createFiatOnRampCredential({
      type: 'ACTIVITY_TYPE_CREATE_FIAT_ON_RAMP_CREDENTIAL',
      timestampMs: ts(),
      organizationId: org,
      parameters: params,
    });
    // The recorded intent holds the sealed secrets in place of the submitted ones.
    const intent = (res.activity.intent as Record<string, any>).createFiatOnRampCredentialIntent;
    expect(intent.encryptedSecretApiKey).toMatch(/^countersign-sealed:v1:/);
    expect(intent.encryptedPrivateApiKey).toMatch(/^countersign-sealed:v1:/);
    const sealed = {
      ...params,
      encryptedSecretApiKey: intent.encryptedSecretApiKey,
      encryptedPrivateApiKey: intent.encryptedPrivateApiKey,
    };
    const result = expectCompleted(
      res,
      'ACTIVITY_TYPE_CREATE_FIAT_ON_RAMP_CREDENTIAL',
      'createFiatOnRampCredentialIntent',
      sealed,
      'createFiatOnRampCredentialResult',
    );
    expect(Object.keys(result)).toEqual(['fiatOnRampCredentialId']);
    credId = result.fiatOnRampCredentialId;
    expect(JSON.stringify(res)).not.toContain(SECRET);

    const list = await root.listFiatOnRampCredentials({ organizationId: org });
    expect(list.fiatOnRampCredentials).toHaveLength(1);
    const c = list.fiatOnRampCredentials[0] as Record<string, unknown>;
    expect(c).toMatchObject({
      fiatOnrampCredentialId: credId,
      organizationId: org,
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE',
      projectId: 'project-1',
      publishableApiKey: 'pub-key-1',
      sandboxMode: true,
    });
    expect(c).not.toHaveProperty('encryptedSecretApiKey');
    expect(c).not.toHaveProperty('encryptedPrivateApiKey');
  });

  it('refuses bad credentials naming the field, and a second one for the same provider and mode', async () => {
    const path = 'create_fiat_on_ramp_credential';
    const type = 'ACTIVITY_TYPE_CREATE_FIAT_ON_RAMP_CREDENTIAL';
    const ok = {
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_MOONPAY',
      publishableApiKey: 'p',
      encryptedSecretApiKey: 's',
    };
    await expectRefused(
      path,
      type,
      { ...ok, encryptedSecretApiKey: undefined },
      400,
      'parameters.encryptedSecretApiKey',
    );
    await expectRefused(
      path,
      type,
      { ...ok, encryptedSecretApiKey: '' },
      400,
      'parameters.encryptedSecretApiKey',
    );
    await expectRefused(
      path,
      type,
      { ...ok, encryptedSecretApiKey: 7 },
      400,
      'parameters.encryptedSecretApiKey',
    );
    await expectRefused(
      path,
      type,
      { ...ok, onrampProvider: 'FIAT_ON_RAMP_PROVIDER_STRIPE' },
      400,
      'parameters.onrampProvider',
    );
    await expectRefused(
      path,
      type,
      { ...ok, publishableApiKey: undefined },
      400,
      'parameters.publishableApiKey',
    );
    await expectRefused(path, type, { ...ok, sandboxMode: 'yes' }, 400, 'parameters.sandboxMode');
    await expectRefused(
      path,
      type,
      { ...ok, onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE', sandboxMode: true },
      400,
      'parameters.onrampProvider',
    );
    expect(
      (await root.listFiatOnRampCredentials({ organizationId: org })).fiatOnRampCredentials,
    ).toHaveLength(1);
  });

  it('updates a credential (result spelled fiatOnRampCredentialId), keeping what is not given', async () => {
    const params = {
      fiatOnrampCredentialId: credId,
      onrampProvider: 'FIAT_ON_RAMP_PROVIDER_COINBASE' as const,
      publishableApiKey: 'pub-key-2',
      encryptedSecretApiKey: SECRET2,
    };
    const res = await root.updateFiatOnRampCredential({
      type: 'ACTIVITY_TYPE_UPDATE_FIAT_ON_RAMP_CREDENTIAL',
      timestampMs: ts(),
      organizationId: org,
      parameters: params,
    });
    const intent = (res.activity.intent as Record<string, any>).updateFiatOnRampCredentialIntent;
    const result = expectCompleted(
      res,
      'ACTIVITY_TYPE_UPDATE_FIAT_ON_RAMP_CREDENTIAL',
      'updateFiatOnRampCredentialIntent',
      { ...params, encryptedSecretApiKey: intent.encryptedSecretApiKey },
      'updateFiatOnRampCredentialResult',
    );
    expect(result).toEqual({ fiatOnRampCredentialId: credId });
    const c = (await root.listFiatOnRampCredentials({ organizationId: org })).fiatOnRampCredentials[0];
    expect(c).toMatchObject({ publishableApiKey: 'pub-key-2', projectId: 'project-1', sandboxMode: true });

    const path = 'update_fiat_on_ramp_credential';
    const type = 'ACTIVITY_TYPE_UPDATE_FIAT_ON_RAMP_CREDENTIAL';
    await expectRefused(
      path,
      type,
      { ...params, fiatOnrampCredentialId: randomUUID() },
      404,
      'parameters.fiatOnrampCredentialId',
    );
    await expectRefused(
      path,
      type,
      { ...params, fiatOnrampCredentialId: undefined },
      400,
      'parameters.fiatOnrampCredentialId',
    );
    await expectRefused(
      path,
      type,
      { ...params, encryptedSecretApiKey: undefined },
      400,
      'parameters.encryptedSecretApiKey',
    );
    expect(
      (await root.listFiatOnRampCredentials({ organizationId: org })).fiatOnRampCredentials[0],
    ).toMatchObject({
      publishableApiKey: 'pub-key-2',
    });
  });

  it('never writes a secret in plaintext to the database files', async () => {
    const needles = [SECRET, PRIVATE, SECRET2].flatMap((s) => [
      Buffer.from(s),
      Buffer.from(Buffer.from(s).toString('hex')),
    ]);
    const files = await storedDatabaseBytes(h.dataDir);
    expect(files.length).toBeGreaterThan(0);
    // A positive control: the non-secret fields are there to be found.
    const all = Buffer.concat(files.map((f) => f.bytes));
    expect(all.includes(Buffer.from('pub-key-2'))).toBe(true);
    for (const { name, bytes } of files)
      for (const n of needles) expect(bytes.includes(n), `${name} holds a plaintext secret`).toBe(false);
    // …and the vault opens what is stored to the current secret.
    const { openCredentialSecret } = await import('../src/service/activities/resources.js');
    const { KeyVault, loadOrCreateMasterKey } = await import('../src/service/keys/index.js');
    const master = loadOrCreateMasterKey({ dataDir: h.dataDir });
    const vault = new KeyVault(master);
    master.fill(0);
    const [rec] = await h.service.store.listFiatOnRampCredentials(org);
    expect(Buffer.from(openCredentialSecret(vault, rec!, 'encryptedSecretApiKey')!).toString()).toBe(SECRET2);
    expect(Buffer.from(openCredentialSecret(vault, rec!, 'encryptedPrivateApiKey')!).toString()).toBe(
      PRIVATE,
    );
  });

  it('deletes a credential; an unknown id is 404 naming the field', async () => {
    const params = { fiatOnrampCredentialId: credId };
    const res = await root.deleteFiatOnRampCredential({
      type: 'ACTIVITY_TYPE_DELETE_FIAT_ON_RAMP_CREDENTIAL',
      timestampMs: ts(),
      organizationId: org,
      parameters: params,
    });
    const result = expectCompleted(
      res,
      'ACTIVITY_TYPE_DELETE_FIAT_ON_RAMP_CREDENTIAL',
      'deleteFiatOnRampCredentialIntent',
      params,
      'deleteFiatOnRampCredentialResult',
    );
    expect(result).toEqual({ fiatOnRampCredentialId: credId });
    expect((await root.listFiatOnRampCredentials({ organizationId: org })).fiatOnRampCredentials).toEqual([]);
    const path = 'delete_fiat_on_ramp_credential';
    const type = 'ACTIVITY_TYPE_DELETE_FIAT_ON_RAMP_CREDENTIAL';
    await expectRefused(path, type, params, 404, 'parameters.fiatOnrampCredentialId');
    await expectRefused(path, type, { fiatOnrampCredentialId: 5 }, 400, 'parameters.fiatOnrampCredentialId');
  });
});

describe('TVC deployments', () => {
  const appId = randomUUID();
  const spec = {
    appId,
    qosVersion: '0.4.0',
    pivotContainerImageUrl: 'ghcr.io/example/app@sha256:' + 'ab'.repeat(32),
    pivotPath: '/app/server',
    pivotArgs: ['--port', '3000'],
    expectedPivotDigest: 'cd'.repeat(32),
    nonce: 7,
    pivotContainerEncryptedPullSecret: `pull-${randomUUID()}`,
    healthCheckType: 'TVC_HEALTH_CHECK_TYPE_HTTP' as const,
    healthCheckPort: 3001,
    publicIngressPort: 3000,
    instanceSizeCpus: 2,
  };
  let deploymentId: string;

  const lifecycle = (path: 'delete_tvc_deployment' | 'restore_tvc_deployment') => {
    const body = { timestampMs: ts(), organizationId: org, parameters: { deploymentId } };
    return path === 'delete_tvc_deployment'
      ? root.deleteTvcDeployment({ type: 'ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT', ...body })
      : root.restoreTvcDeployment({ type: 'ACTIVITY_TYPE_RESTORE_TVC_DEPLOYMENT', ...body });
  };

  it('creates a deployment, readable through get_tvc_deployment and list_tvc_app_deployments', async () => {
    const res = await root.createTvcDeployment({
      type: 'ACTIVITY_TYPE_CREATE_TVC_DEPLOYMENT',
      timestampMs: ts(),
      organizationId: org,
      parameters: spec,
    });
    const intent = (res.activity.intent as Record<string, any>).createTvcDeploymentIntent;
    expect(intent.pivotContainerEncryptedPullSecret).toMatch(/^countersign-sealed:v1:/);
    const result = expectCompleted(
      res,
      'ACTIVITY_TYPE_CREATE_TVC_DEPLOYMENT',
      'createTvcDeploymentIntent',
      { ...spec, pivotContainerEncryptedPullSecret: intent.pivotContainerEncryptedPullSecret },
      'createTvcDeploymentResult',
    );
    expect(Object.keys(result).sort()).toEqual(['deploymentId', 'manifestId']);
    deploymentId = result.deploymentId;
    const got = await root.getTvcDeployment({ organizationId: org, deploymentId });
    expect(got.tvcDeployment).toMatchObject({
      id: deploymentId,
      organizationId: org,
      appId,
      qosVersion: '0.4.0',
      delete: false,
      debugMode: false,
      instanceSizeCpus: 2,
      pivotContainer: {
        containerUrl: spec.pivotContainerImageUrl,
        path: '/app/server',
        args: ['--port', '3000'],
        hasPullSecret: true,
        healthCheckType: 'TVC_HEALTH_CHECK_TYPE_HTTP',
        healthCheckPort: 3001,
        publicIngressPort: 3000,
      },
    });
    expect(got.tvcDeployment.manifest.id).toBe(result.manifestId);
    const manifest = JSON.parse(Buffer.from(got.tvcDeployment.manifest.manifest, 'base64').toString());
    expect(manifest.pivot).toEqual({
      digest: spec.expectedPivotDigest,
      path: '/app/server',
      args: ['--port', '3000'],
    });
    const list = await root.getTvcAppDeployments({ organizationId: org, appId });
    expect(list.tvcDeployments.map((d) => d.id)).toEqual([deploymentId]);
  });

  it('refuses bad deployments naming the field', async () => {
    const path = 'create_tvc_deployment';
    const type = 'ACTIVITY_TYPE_CREATE_TVC_DEPLOYMENT';
    await expectRefused(path, type, { ...spec, appId: undefined }, 400, 'parameters.appId');
    await expectRefused(path, type, { ...spec, pivotArgs: '--port 3000' }, 400, 'parameters.pivotArgs');
    await expectRefused(path, type, { ...spec, pivotArgs: ['--port', 3000] }, 400, 'parameters.pivotArgs.1');
    await expectRefused(
      path,
      type,
      { ...spec, healthCheckType: 'TVC_HEALTH_CHECK_TYPE_TCP' },
      400,
      'parameters.healthCheckType',
    );
    await expectRefused(path, type, { ...spec, healthCheckPort: 70000 }, 400, 'parameters.healthCheckPort');
    await expectRefused(
      path,
      type,
      { ...spec, publicIngressPort: undefined },
      400,
      'parameters.publicIngressPort',
    );
    await expectRefused(path, type, { ...spec, qosVersion: '' }, 400, 'parameters.qosVersion');
    expect((await root.getTvcAppDeployments({ organizationId: org, appId })).tvcDeployments).toHaveLength(1);
  });

  it('goes ACTIVE → DELETED → ACTIVE; restoring an active one or deleting a deleted one is refused', async () => {
    // Restoring an ACTIVE deployment is an error.
    await expectRefused(
      'restore_tvc_deployment',
      'ACTIVITY_TYPE_RESTORE_TVC_DEPLOYMENT',
      { deploymentId },
      400,
      'parameters.deploymentId',
    );

    const del = await lifecycle('delete_tvc_deployment');
    expect(
      expectCompleted(
        del,
        'ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT',
        'deleteTvcDeploymentIntent',
        { deploymentId },
        'deleteTvcDeploymentResult',
      ),
    ).toEqual({ deploymentId });
    expect((await root.getTvcDeployment({ organizationId: org, deploymentId })).tvcDeployment.delete).toBe(
      true,
    );
    await expectRefused(
      'delete_tvc_deployment',
      'ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT',
      { deploymentId },
      400,
      'parameters.deploymentId',
    );

    const restored = await lifecycle('restore_tvc_deployment');
    expect(
      expectCompleted(
        restored,
        'ACTIVITY_TYPE_RESTORE_TVC_DEPLOYMENT',
        'restoreTvcDeploymentIntent',
        { deploymentId },
        'restoreTvcDeploymentResult',
      ),
    ).toEqual({ deploymentId });
    expect((await root.getTvcDeployment({ organizationId: org, deploymentId })).tvcDeployment.delete).toBe(
      false,
    );

    for (const [path, type] of [
      ['delete_tvc_deployment', 'ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT'],
      ['restore_tvc_deployment', 'ACTIVITY_TYPE_RESTORE_TVC_DEPLOYMENT'],
    ] as const) {
      await expectRefused(path, type, { deploymentId: randomUUID() }, 404, 'parameters.deploymentId');
      await expectRefused(path, type, {}, 400, 'parameters.deploymentId');
    }
  });
});

describe('organization features', () => {
  const URL1 = 'https://hooks.example.com/turnkey';

  it('sets features; the result and get_organization list all of them', async () => {
    const params = { name: 'FEATURE_NAME_WEBHOOK' as const, value: URL1 };
    const res = await root.setOrganizationFeature({
      type: 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
      timestampMs: ts(),
      organizationId: org,
      parameters: params,
    });
    const result = expectCompleted(
      res,
      'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
      'setOrganizationFeatureIntent',
      params,
      'setOrganizationFeatureResult',
    );
    expect(result).toEqual({ features: [{ name: 'FEATURE_NAME_WEBHOOK', value: URL1 }] });

    const second = await root.setOrganizationFeature({
      type: 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
      timestampMs: ts(),
      organizationId: org,
      parameters: { name: 'FEATURE_NAME_WEBAUTHN_ORIGINS', value: 'https://app.example.com' },
    });
    const both = [
      { name: 'FEATURE_NAME_WEBAUTHN_ORIGINS', value: 'https://app.example.com' },
      { name: 'FEATURE_NAME_WEBHOOK', value: URL1 },
    ];
    expect(second.activity.result.setOrganizationFeatureResult?.features).toEqual(both);
    const o = await root.getOrganization({ organizationId: org });
    expect(o.organizationData.features).toEqual(both);
    expect(o.organizationData.rootQuorum).toEqual({ threshold: 1, userIds: [h.service.credentials.userId] });
    // The webhook issue reads the URL from the store.
    const stored = await h.service.store.listOrganizationFeatures(org);
    expect(stored.find((f) => f.name === 'FEATURE_NAME_WEBHOOK')?.value).toBe(URL1);
  });

  it('refuses a bad name or a webhook value that is not an http(s) URL', async () => {
    const path = 'set_organization_feature';
    const type = 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE';
    await expectRefused(path, type, { name: 'FEATURE_NAME_TELEPORT', value: 'x' }, 400, 'parameters.name');
    await expectRefused(path, type, { value: 'x' }, 400, 'parameters.name');
    await expectRefused(
      path,
      type,
      { name: 'FEATURE_NAME_WEBHOOK', value: 'not a url' },
      400,
      'parameters.value',
    );
    await expectRefused(
      path,
      type,
      { name: 'FEATURE_NAME_WEBHOOK', value: 'ftp://example.com/x' },
      400,
      'parameters.value',
    );
    await expectRefused(path, type, { name: 'FEATURE_NAME_WEBHOOK' }, 400, 'parameters.value');
    await expectRefused(
      path,
      type,
      { name: 'FEATURE_NAME_EMAIL_AUTH', value: true },
      400,
      'parameters.value',
    );
    const o = await root.getOrganization({ organizationId: org });
    expect(o.organizationData.features?.find((f) => f.name === 'FEATURE_NAME_WEBHOOK')?.value).toBe(URL1);
  });

  it('removes a feature; removing one the organization does not have is 404', async () => {
    const params = { name: 'FEATURE_NAME_WEBAUTHN_ORIGINS' as const };
    const res = await root.removeOrganizationFeature({
      type: 'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE',
      timestampMs: ts(),
      organizationId: org,
      parameters: params,
    });
    const result = expectCompleted(
      res,
      'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE',
      'removeOrganizationFeatureIntent',
      params,
      'removeOrganizationFeatureResult',
    );
    expect(result).toEqual({ features: [{ name: 'FEATURE_NAME_WEBHOOK', value: URL1 }] });
    expect((await root.getOrganization({ organizationId: org })).organizationData.features).toEqual(
      result.features,
    );
    await expectRefused(
      'remove_organization_feature',
      'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE',
      params,
      404,
      'parameters.name',
    );
    await expectRefused(
      'remove_organization_feature',
      'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE',
      { name: 3 },
      400,
      'parameters.name',
    );
  });

  it('is root quorum only: an ALLOW-everything policy does not let a non-root user set or remove features', async () => {
    const alice = await insertUser(org, 'alice', false);
    const policy = await root.createPolicy({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      timestampMs: ts(),
      organizationId: org,
      parameters: { policyName: 'allow everything', effect: 'EFFECT_ALLOW', condition: 'true', notes: '' },
    });
    const policyId = policy.activity.result.createPolicyResult?.policyId as string;
    try {
      // The policy does grant her other activities…
      const ok = await alice.client.createSmartContractInterface({
        type: 'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE',
        timestampMs: ts(),
        organizationId: org,
        parameters: {
          smartContractAddress: TOKEN,
          smartContractInterface: ERC20_ABI,
          type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
          label: 'alice',
        },
      });
      expect(ok.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      // …but not these two.
      const before = await activityCount();
      const set = await refusal(
        alice.client.setOrganizationFeature({
          type: 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
          timestampMs: ts(),
          organizationId: org,
          parameters: { name: 'FEATURE_NAME_WEBHOOK', value: 'https://evil.example.com/' },
        }),
      );
      expect(set.code).toBe(7);
      expect(set.message).toContain('policy engine denied request');
      const remove = await refusal(
        alice.client.removeOrganizationFeature({
          type: 'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE',
          timestampMs: ts(),
          organizationId: org,
          parameters: { name: 'FEATURE_NAME_WEBHOOK' },
        }),
      );
      expect(remove.code).toBe(7);
      expect(await activityCount()).toBe(before);
      const features = (await root.getOrganization({ organizationId: org })).organizationData.features;
      expect(features).toEqual([{ name: 'FEATURE_NAME_WEBHOOK', value: URL1 }]);
    } finally {
      await root.deletePolicy({
        type: 'ACTIVITY_TYPE_DELETE_POLICY',
        timestampMs: ts(),
        organizationId: org,
        parameters: { policyId },
      });
    }
  });

  it('with a 2-of-2 root quorum waits for the second root user, then applies', async () => {
    const other = randomUUID();
    await h.service.store.write((tx) =>
      tx.insertOrganization({
        id: other,
        name: 'Two roots',
        parentId: null,
        rootQuorumThreshold: 2,
        createdAtMs: Date.now(),
      }),
    );
    const r1 = await insertUser(other, 'root one', true);
    const r2 = await insertUser(other, 'root two', true);
    const res = await r1.client.setOrganizationFeature({
      type: 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
      timestampMs: ts(),
      organizationId: other,
      parameters: { name: 'FEATURE_NAME_WEBHOOK', value: URL1 },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect(res.activity.canApprove).toBe(true);
    expect(await h.service.store.listOrganizationFeatures(other)).toEqual([]);
    const approved = await r2.client.approveActivity({
      type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
      timestampMs: ts(),
      organizationId: other,
      parameters: { fingerprint: res.activity.fingerprint },
    });
    expect(approved.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(approved.activity.result.setOrganizationFeatureResult?.features).toEqual([
      { name: 'FEATURE_NAME_WEBHOOK', value: URL1 },
    ]);
    const o = await r1.client.getOrganization({ organizationId: other });
    expect(o.organizationData.features).toEqual([{ name: 'FEATURE_NAME_WEBHOOK', value: URL1 }]);
  });

  it('lets a consensus-approved on-ramp credential keep its secrets sealed', async () => {
    // The same 2-of-2 path for an activity with secrets: the approval runs it from the sealed intent.
    const other = randomUUID();
    await h.service.store.write((tx) =>
      tx.insertOrganization({
        id: other,
        name: 'Two roots too',
        parentId: null,
        rootQuorumThreshold: 2,
        createdAtMs: Date.now(),
      }),
    );
    const r1 = await insertUser(other, 'root one', true);
    const r2 = await insertUser(other, 'root two', true);
    // One root's approval is short of the quorum; this policy asks for the second root's.
    await h.service.store.write((tx) =>
      tx.insertPolicy({
        id: randomUUID(),
        organizationId: other,
        name: 'two roots for on-ramp',
        effect: 'EFFECT_ALLOW',
        condition: "activity.resource == 'ON_RAMP_CREDENTIALS'",
        consensus: `approvers.any(u, u.id == '${r2.id}')`,
        time: null,
        notes: '',
        createdAtMs: Date.now(),
        updatedAtMs: Date.now(),
      }),
    );
    const secret = `sk_consensus_${randomUUID()}`;
    const res = await r1.client.createFiatOnRampCredential({
      type: 'ACTIVITY_TYPE_CREATE_FIAT_ON_RAMP_CREDENTIAL',
      timestampMs: ts(),
      organizationId: other,
      parameters: {
        onrampProvider: 'FIAT_ON_RAMP_PROVIDER_MOONPAY',
        publishableApiKey: 'pk',
        encryptedSecretApiKey: secret,
      },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const approved = await r2.client.approveActivity({
      type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
      timestampMs: ts(),
      organizationId: other,
      parameters: { fingerprint: res.activity.fingerprint },
    });
    expect(approved.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const [rec] = await h.service.store.listFiatOnRampCredentials(other);
    const { openCredentialSecret } = await import('../src/service/activities/resources.js');
    const { KeyVault, loadOrCreateMasterKey } = await import('../src/service/keys/index.js');
    const master = loadOrCreateMasterKey({ dataDir: h.dataDir });
    const vault = new KeyVault(master);
    master.fill(0);
    expect(Buffer.from(openCredentialSecret(vault, rec!, 'encryptedSecretApiKey')!).toString()).toBe(secret);
  });
});
