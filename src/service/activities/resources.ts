/**
 * The other resources of the public API: smart contract interfaces (ABIs and IDLs), fiat on-ramp
 * credentials (secrets sealed by the key vault), TVC deployments (ACTIVE ⇄ DELETED) and organization
 * features (root quorum only, see policy-gate.ts). Shapes follow @turnkey/http's intent types.
 */
import { randomUUID } from 'node:crypto';
import { base58 } from '@scure/base';
import { isAddress, type Abi } from 'viem';
import { CountersignError, invalid, missing } from '../../shared/errors.js';
import { zeroize } from '../../shared/encoding.js';
import type { KeyVault } from '../keys/index.js';
import {
  FIAT_ON_RAMP_PROVIDERS,
  SMART_CONTRACT_INTERFACE_TYPES,
  type FiatOnRampCredentialRecord,
  type SmartContractInterfaceType,
  type StoreTx,
  type TvcDeploymentStatus,
} from '../store/types.js';
import {
  notFound,
  optBool,
  optNumber,
  optString,
  reqArray,
  reqEnum,
  reqString,
  reqUuid,
  stringArray,
  type Params,
} from './params.js';
import { openSecretParam } from './sealSecretParams.js';
import { checkOutboundUrl, type OutboundPolicy } from '../../shared/outbound/guard.js'; // --- webhooks ---
import { webhookContextOf } from '../webhooks/context.js'; // --- webhooks ---
import type { ActivityContext, ActivityDefinition, ActivityOutcome } from './types.js';

const P = 'parameters';

// ---------------------------------------------------------------------------------------------
// Smart contract interfaces

/** Turnkey's documented limit on an ABI/IDL (v1CreateSmartContractInterfaceIntent). */
export const MAX_INTERFACE_BYTES = 400 * 1024;

const ABI_ENTRY_TYPES = ['function', 'event', 'error', 'constructor', 'fallback', 'receive'] as const;

// Solidity ABI types (docs.soliditylang.org, "Contract ABI Specification"): elementary types,
// `tuple`, and any number of fixed or dynamic array suffixes.
const ABI_TYPE_RE =
  /^(?:address|bool|string|function|tuple|bytes(?:[1-9]|[12][0-9]|3[0-2])?|u?int(?:8|16|24|32|40|48|56|64|72|80|88|96|104|112|120|128|136|144|152|160|168|176|184|192|200|208|216|224|232|240|248|256)?|u?fixed(?:[0-9]+x[0-9]+)?)(?:\[[0-9]*\])*$/;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function abiInvalid(field: string, where: string, reason: string): CountersignError {
  return invalid(field, `not a valid Ethereum ABI: ${where} ${reason}`);
}

/** Bounds recursion on hostile input (tuples in tuples); real ABIs nest a few levels deep. */
const MAX_TUPLE_DEPTH = 32;

function checkAbiParams(value: unknown, field: string, where: string, depth = 0): void {
  if (!Array.isArray(value)) throw abiInvalid(field, where, 'must be an array');
  value.forEach((param, i) => {
    const at = `${where}.${i}`;
    if (!isObject(param)) throw abiInvalid(field, at, 'must be an object');
    if (param.name !== undefined && typeof param.name !== 'string')
      throw abiInvalid(field, `${at}.name`, 'must be a string');
    if (typeof param.type !== 'string' || !ABI_TYPE_RE.test(param.type))
      throw abiInvalid(field, `${at}.type`, `is not a Solidity ABI type (${JSON.stringify(param.type)})`);
    if (!param.type.startsWith('tuple')) return;
    if (depth >= MAX_TUPLE_DEPTH)
      throw abiInvalid(field, `${at}.components`, `nests tuples deeper than ${MAX_TUPLE_DEPTH} levels`);
    checkAbiParams(param.components, field, `${at}.components`, depth + 1);
  });
}

/**
 * Checks that `json` is an Ethereum contract ABI: a JSON array of entries each with a known `type`
 * (absent means `function`), a `name` where the type needs one, and well-typed inputs and outputs.
 */
export function checkEthereumAbi(json: unknown, field: string): Abi {
  if (!Array.isArray(json)) throw invalid(field, 'an Ethereum ABI must be a JSON array');
  json.forEach((entry, i) => {
    const at = `entry ${i}`;
    if (!isObject(entry)) throw abiInvalid(field, at, 'must be an object');
    const type = entry.type ?? 'function';
    if (typeof type !== 'string' || !(ABI_ENTRY_TYPES as readonly string[]).includes(type))
      throw abiInvalid(field, `${at}.type`, `must be one of ${ABI_ENTRY_TYPES.join(', ')}`);
    if (type === 'function' || type === 'event' || type === 'error') {
      if (typeof entry.name !== 'string' || entry.name.length === 0)
        throw abiInvalid(field, `${at}.name`, 'must be a non-empty string');
    }
    if (type !== 'fallback' && type !== 'receive') checkAbiParams(entry.inputs ?? [], field, `${at}.inputs`);
    if (type === 'function' && entry.outputs !== undefined)
      checkAbiParams(entry.outputs, field, `${at}.outputs`);
  });
  return json as Abi;
}

/** Checks that `json` is a Solana program IDL: a JSON object (Anchor's `instructions` an array if present). */
export function checkSolanaIdl(json: unknown, field: string): Record<string, unknown> {
  if (!isObject(json)) throw invalid(field, 'a Solana IDL must be a JSON object');
  if (json.instructions !== undefined && !Array.isArray(json.instructions))
    throw invalid(field, 'not a valid Solana IDL: instructions must be an array');
  return json;
}

function checkInterfaceAddress(type: SmartContractInterfaceType, address: string, field: string): void {
  switch (type) {
    case 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM':
      if (!isAddress(address, { strict: false }))
        throw invalid(field, 'must be an Ethereum address (0x followed by 40 hex digits)');
      return;
    case 'SMART_CONTRACT_INTERFACE_TYPE_SOLANA': {
      let bytes: Uint8Array | undefined;
      try {
        bytes = base58.decode(address);
      } catch {
        bytes = undefined;
      }
      if (bytes?.length !== 32) throw invalid(field, 'must be a Solana program id (base58, 32 bytes)');
      return;
    }
    default: {
      const never: never = type;
      throw new CountersignError('INTERNAL', `unknown interface type ${String(never)}`);
    }
  }
}

function parseInterface(type: SmartContractInterfaceType, source: string, field: string): void {
  if (Buffer.byteLength(source, 'utf8') > MAX_INTERFACE_BYTES)
    throw invalid(field, `must be at most ${MAX_INTERFACE_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch {
    throw invalid(field, 'must be a JSON string');
  }
  if (type === 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM') checkEthereumAbi(json, field);
  else checkSolanaIdl(json, field);
}

// ---------------------------------------------------------------------------------------------
// Fiat on-ramp credentials

/** Vault AAD of a credential's sealed secret: bound to the record and the field. */
const credentialAad = (id: string, field: string): string => `fiat_on_ramp_credential/${id}/${field}`;

/** Opens a sealed secret parameter and seals it again for the record; null when absent. */
function resealSecret(
  ctx: ActivityContext,
  params: Params,
  field: string,
  recordAad: string,
  required: boolean,
): Uint8Array | null {
  const plain = openSecretParam(ctx.vault, ctx.activityId, params, field);
  if (plain === undefined) {
    if (required) throw missing(`${P}.${field}`);
    return null;
  }
  try {
    if (plain.length === 0) throw invalid(`${P}.${field}`, 'must not be empty');
    return ctx.vault.seal(plain, recordAad);
  } finally {
    zeroize(plain);
  }
}

function providerTaken(field: string): CountersignError {
  return new CountersignError(
    'NAME_NOT_UNIQUE',
    `${field}: the organization already has a credential for this provider and sandbox mode`,
    { field },
  );
}

const emptyToNull = (v: string | undefined): string | null | undefined => (v === '' ? null : v);

// ---------------------------------------------------------------------------------------------
// TVC deployments

const TVC_HEALTH_CHECK_TYPES = ['TVC_HEALTH_CHECK_TYPE_HTTP', 'TVC_HEALTH_CHECK_TYPE_GRPC'] as const;

/** What create_tvc_deployment keeps (everything the intent names but the pull secret). */
export interface TvcDeploymentSpec {
  readonly appId: string;
  readonly qosVersion: string;
  readonly pivotContainerImageUrl: string;
  readonly pivotPath: string;
  readonly pivotArgs: readonly string[];
  readonly expectedPivotDigest: string;
  readonly nonce: number;
  readonly debugMode: boolean;
  readonly healthCheckType: (typeof TVC_HEALTH_CHECK_TYPES)[number];
  readonly healthCheckPort: number;
  readonly publicIngressPort: number;
  readonly replicas?: number;
  readonly instanceSizeCpus?: number;
  readonly instanceSizeRam?: number;
}

function reqPort(p: Params, key: string): number {
  const v = optNumber(p, key, P);
  if (v === undefined) throw missing(`${P}.${key}`);
  if (v < 1 || v > 65535) throw invalid(`${P}.${key}`, 'must be a port number (1 to 65535)');
  return v;
}

function optPositive(p: Params, key: string): number | undefined {
  const v = optNumber(p, key, P);
  if (v !== undefined && v < 1) throw invalid(`${P}.${key}`, 'must be a positive integer');
  return v;
}

function readTvcSpec(p: Params, nowMs: number): TvcDeploymentSpec {
  const replicas = optPositive(p, 'replicas');
  const instanceSizeCpus = optPositive(p, 'instanceSizeCpus');
  const instanceSizeRam = optPositive(p, 'instanceSizeRam');
  return {
    appId: reqUuid(p, 'appId', P),
    qosVersion: reqString(p, 'qosVersion', P),
    pivotContainerImageUrl: reqString(p, 'pivotContainerImageUrl', P),
    pivotPath: reqString(p, 'pivotPath', P),
    pivotArgs: stringArray(reqArray(p, 'pivotArgs', P), `${P}.pivotArgs`),
    expectedPivotDigest: reqString(p, 'expectedPivotDigest', P),
    // The intent's default: the current Unix time in seconds.
    nonce: optNumber(p, 'nonce', P) ?? Math.floor(nowMs / 1000),
    debugMode: optBool(p, 'debugMode', P) ?? false,
    healthCheckType: reqEnum(p, 'healthCheckType', P, TVC_HEALTH_CHECK_TYPES),
    healthCheckPort: reqPort(p, 'healthCheckPort'),
    publicIngressPort: reqPort(p, 'publicIngressPort'),
    ...(replicas === undefined ? {} : { replicas }),
    ...(instanceSizeCpus === undefined ? {} : { instanceSizeCpus }),
    ...(instanceSizeRam === undefined ? {} : { instanceSizeRam }),
  };
}

/** Moves a deployment ACTIVE → DELETED or back, refusing (400, naming the id) one already there. */
async function moveDeployment(
  tx: StoreTx,
  organizationId: string,
  id: string,
  from: TvcDeploymentStatus,
  to: TvcDeploymentStatus,
  nowMs: number,
): Promise<void> {
  const field = `${P}.deploymentId`;
  const d = await tx.getTvcDeployment(organizationId, id);
  if (d === undefined) throw notFound(field, 'TVC deployment');
  if (d.status !== from)
    throw invalid(
      field,
      to === 'ACTIVE'
        ? 'the deployment is active; only a deleted deployment can be restored'
        : 'the deployment is already deleted',
    );
  if (!(await tx.setTvcDeploymentStatus(organizationId, id, from, to, nowMs)))
    throw new CountersignError('INTERNAL', `TVC deployment ${id} changed concurrently`);
}

// ---------------------------------------------------------------------------------------------
// Organization features

export const FEATURE_NAMES = [
  'FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY',
  'FEATURE_NAME_WEBAUTHN_ORIGINS',
  'FEATURE_NAME_EMAIL_AUTH',
  'FEATURE_NAME_EMAIL_RECOVERY',
  'FEATURE_NAME_WEBHOOK',
  'FEATURE_NAME_SMS_AUTH',
  'FEATURE_NAME_OTP_EMAIL_AUTH',
  'FEATURE_NAME_AUTH_PROXY',
  'FEATURE_NAME_SOLANA_RENT_PREFUND_ENABLED',
  'FEATURE_NAME_SWAP_CONFIG',
  'FEATURE_NAME_EARN_CONFIG',
] as const;

function readFeatureValue(p: Params, name: (typeof FEATURE_NAMES)[number], policy: OutboundPolicy): string {
  const field = `${P}.value`;
  const v = p.value;
  if (v === undefined || v === null) throw missing(field);
  if (typeof v !== 'string') throw invalid(field, 'must be a string');
  // --- webhooks --- the receiving URL passes the outbound guard (https, public host) like an endpoint's.
  if (name === 'FEATURE_NAME_WEBHOOK') checkOutboundUrl(v, policy, field);
  return v;
}

/** The feature list as the result shows it, ordered by name. */
function featuresJson(list: readonly { name: string; value: string }[]): { name: string; value: string }[] {
  return [...list]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((f) => ({ name: f.name, value: f.value }));
}

// ---------------------------------------------------------------------------------------------

export const RESOURCE_ACTIVITIES: readonly ActivityDefinition[] = [
  {
    type: 'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE',
    path: 'create_smart_contract_interface',
    intentKey: 'createSmartContractInterfaceIntent',
    resultKey: 'createSmartContractInterfaceResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const type = reqEnum(p, 'type', P, SMART_CONTRACT_INTERFACE_TYPES);
      const address = reqString(p, 'smartContractAddress', P);
      checkInterfaceAddress(type, address, `${P}.smartContractAddress`);
      const source = reqString(p, 'smartContractInterface', P);
      parseInterface(type, source, `${P}.smartContractInterface`);
      const label = reqString(p, 'label', P);
      const notes = optString(p, 'notes', P) ?? '';
      const id = randomUUID();
      const org = ctx.organization.id;
      return {
        result: { smartContractInterfaceId: id },
        write: async (tx) => {
          if (await tx.smartContractInterfaceExists(org, type, address))
            throw new CountersignError(
              'NAME_NOT_UNIQUE',
              `${P}.smartContractAddress: the organization already has an interface of this type for this address`,
              { field: `${P}.smartContractAddress` },
            );
          await tx.insertSmartContractInterface({
            id,
            organizationId: org,
            type,
            address,
            interfaceJson: source,
            label,
            notes,
            createdAtMs: ctx.nowMs,
            updatedAtMs: ctx.nowMs,
          });
        },
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_SMART_CONTRACT_INTERFACE',
    path: 'delete_smart_contract_interface',
    intentKey: 'deleteSmartContractInterfaceIntent',
    resultKey: 'deleteSmartContractInterfaceResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const id = reqUuid(p, 'smartContractInterfaceId', P);
      const org = ctx.organization.id;
      return {
        result: { smartContractInterfaceId: id },
        write: async (tx) => {
          if (!(await tx.deleteSmartContractInterface(org, id)))
            throw notFound(`${P}.smartContractInterfaceId`, 'smart contract interface');
        },
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_FIAT_ON_RAMP_CREDENTIAL',
    path: 'create_fiat_on_ramp_credential',
    intentKey: 'createFiatOnRampCredentialIntent',
    resultKey: 'createFiatOnRampCredentialResult',
    secretParams: ['encryptedSecretApiKey', 'encryptedPrivateApiKey'],
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const provider = reqEnum(p, 'onrampProvider', P, FIAT_ON_RAMP_PROVIDERS);
      const projectId = emptyToNull(optString(p, 'projectId', P)) ?? null;
      const publishableApiKey = reqString(p, 'publishableApiKey', P);
      const sandboxMode = optBool(p, 'sandboxMode', P) ?? false;
      const id = randomUUID();
      const sealedSecretApiKey = resealSecret(
        ctx,
        p,
        'encryptedSecretApiKey',
        credentialAad(id, 'encryptedSecretApiKey'),
        true,
      ) as Uint8Array;
      const sealedPrivateApiKey = resealSecret(
        ctx,
        p,
        'encryptedPrivateApiKey',
        credentialAad(id, 'encryptedPrivateApiKey'),
        false,
      );
      const org = ctx.organization.id;
      return {
        // The seed's spelling: capital R in the result field, lower-case r in the parameters.
        result: { fiatOnRampCredentialId: id },
        write: async (tx) => {
          if (await tx.fiatOnRampCredentialTaken(org, provider, sandboxMode))
            throw providerTaken(`${P}.onrampProvider`);
          await tx.insertFiatOnRampCredential({
            id,
            organizationId: org,
            provider,
            projectId,
            publishableApiKey,
            sealedSecretApiKey,
            sealedPrivateApiKey,
            sandboxMode,
            createdAtMs: ctx.nowMs,
            updatedAtMs: ctx.nowMs,
          });
        },
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_UPDATE_FIAT_ON_RAMP_CREDENTIAL',
    path: 'update_fiat_on_ramp_credential',
    intentKey: 'updateFiatOnRampCredentialIntent',
    resultKey: 'updateFiatOnRampCredentialResult',
    secretParams: ['encryptedSecretApiKey', 'encryptedPrivateApiKey'],
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const id = reqUuid(p, 'fiatOnrampCredentialId', P);
      const provider = reqEnum(p, 'onrampProvider', P, FIAT_ON_RAMP_PROVIDERS);
      const projectId = emptyToNull(optString(p, 'projectId', P));
      const publishableApiKey = reqString(p, 'publishableApiKey', P);
      const sealedSecretApiKey = resealSecret(
        ctx,
        p,
        'encryptedSecretApiKey',
        credentialAad(id, 'encryptedSecretApiKey'),
        true,
      ) as Uint8Array;
      const sealedPrivateApiKey = resealSecret(
        ctx,
        p,
        'encryptedPrivateApiKey',
        credentialAad(id, 'encryptedPrivateApiKey'),
        false,
      );
      const org = ctx.organization.id;
      return {
        result: { fiatOnRampCredentialId: id },
        write: async (tx) => {
          const old = await tx.getFiatOnRampCredential(org, id);
          if (old === undefined) throw notFound(`${P}.fiatOnrampCredentialId`, 'fiat on-ramp credential');
          if (await tx.fiatOnRampCredentialTaken(org, provider, old.sandboxMode, id))
            throw providerTaken(`${P}.onrampProvider`);
          // An absent optional field keeps its value; the required ones replace theirs.
          const next: FiatOnRampCredentialRecord = {
            ...old,
            provider,
            projectId: projectId === undefined ? old.projectId : projectId,
            publishableApiKey,
            sealedSecretApiKey,
            sealedPrivateApiKey: sealedPrivateApiKey ?? old.sealedPrivateApiKey,
            updatedAtMs: ctx.nowMs,
          };
          await tx.updateFiatOnRampCredential(next);
        },
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_FIAT_ON_RAMP_CREDENTIAL',
    path: 'delete_fiat_on_ramp_credential',
    intentKey: 'deleteFiatOnRampCredentialIntent',
    resultKey: 'deleteFiatOnRampCredentialResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const id = reqUuid(p, 'fiatOnrampCredentialId', P);
      const org = ctx.organization.id;
      return {
        result: { fiatOnRampCredentialId: id },
        write: async (tx) => {
          if (!(await tx.deleteFiatOnRampCredential(org, id)))
            throw notFound(`${P}.fiatOnrampCredentialId`, 'fiat on-ramp credential');
        },
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_CREATE_TVC_DEPLOYMENT',
    path: 'create_tvc_deployment',
    intentKey: 'createTvcDeploymentIntent',
    resultKey: 'createTvcDeploymentResult',
    secretParams: ['pivotContainerEncryptedPullSecret'],
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const spec = readTvcSpec(p, ctx.nowMs);
      const id = randomUUID();
      const manifestId = randomUUID();
      const pull = openSecretParam(ctx.vault, ctx.activityId, p, 'pivotContainerEncryptedPullSecret');
      let sealedPullSecret: Uint8Array | null = null;
      try {
        // "If your image is public, leave this empty": an empty secret is no secret.
        if (pull !== undefined && pull.length > 0)
          sealedPullSecret = ctx.vault.seal(pull, `tvc_deployment/${id}/pivotContainerEncryptedPullSecret`);
      } finally {
        zeroize(pull);
      }
      const org = ctx.organization.id;
      return {
        result: { deploymentId: id, manifestId },
        write: async (tx) =>
          await tx.insertTvcDeployment({
            id,
            organizationId: org,
            appId: spec.appId,
            manifestId,
            status: 'ACTIVE',
            specJson: JSON.stringify(spec),
            sealedPullSecret,
            createdAtMs: ctx.nowMs,
            updatedAtMs: ctx.nowMs,
          }),
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_DELETE_TVC_DEPLOYMENT',
    path: 'delete_tvc_deployment',
    intentKey: 'deleteTvcDeploymentIntent',
    resultKey: 'deleteTvcDeploymentResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const id = reqUuid(p, 'deploymentId', P);
      const org = ctx.organization.id;
      return {
        result: { deploymentId: id },
        write: async (tx) => moveDeployment(tx, org, id, 'ACTIVE', 'DELETED', ctx.nowMs),
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_RESTORE_TVC_DEPLOYMENT',
    path: 'restore_tvc_deployment',
    intentKey: 'restoreTvcDeploymentIntent',
    resultKey: 'restoreTvcDeploymentResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const id = reqUuid(p, 'deploymentId', P);
      const org = ctx.organization.id;
      return {
        result: { deploymentId: id },
        write: async (tx) => moveDeployment(tx, org, id, 'DELETED', 'ACTIVE', ctx.nowMs),
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
    path: 'set_organization_feature',
    intentKey: 'setOrganizationFeatureIntent',
    resultKey: 'setOrganizationFeatureResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const name = reqEnum(p, 'name', P, FEATURE_NAMES);
      const value = readFeatureValue(p, name, webhookContextOf(ctx.store).policy);
      const org = ctx.organization.id;
      // The result is fixed before the write; a concurrent change of another feature is not in it.
      const current = await ctx.store.listOrganizationFeatures(org);
      const features = featuresJson([...current.filter((f) => f.name !== name), { name, value }]);
      return {
        result: { features },
        write: async (tx) => await tx.setOrganizationFeature(org, name, value, ctx.nowMs),
      };
    },
  },
  {
    type: 'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE',
    path: 'remove_organization_feature',
    intentKey: 'removeOrganizationFeatureIntent',
    resultKey: 'removeOrganizationFeatureResult',
    run: async (ctx, p): Promise<ActivityOutcome> => {
      const name = reqEnum(p, 'name', P, FEATURE_NAMES);
      const org = ctx.organization.id;
      const current = await ctx.store.listOrganizationFeatures(org);
      const notSet = (): CountersignError =>
        new CountersignError('RESOURCE_NOT_FOUND', `${P}.name: the organization does not have ${name}`, {
          field: `${P}.name`,
        });
      if (!current.some((f) => f.name === name)) throw notSet();
      return {
        result: { features: featuresJson(current.filter((f) => f.name !== name)) },
        write: async (tx) => {
          if (!(await tx.removeOrganizationFeature(org, name))) throw notSet();
        },
      };
    },
  },
];

/** The plaintext of a credential's sealed secret (for the on-ramp flow); the caller zeroes it. */
export function openCredentialSecret(
  vault: KeyVault,
  r: FiatOnRampCredentialRecord,
  field: 'encryptedSecretApiKey' | 'encryptedPrivateApiKey',
): Uint8Array | undefined {
  const sealed = field === 'encryptedSecretApiKey' ? r.sealedSecretApiKey : r.sealedPrivateApiKey;
  return sealed === null ? undefined : vault.open(sealed, credentialAad(r.id, field));
}
