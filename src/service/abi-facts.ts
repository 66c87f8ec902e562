/**
 * `eth.tx.function_name` / `function_signature` / `contract_call_args` (turnkey-api.md 8.3): present
 * only when the organization has uploaded an Ethereum smart contract interface (ABI) for `eth.tx.to`
 * and the calldata decodes against it. No interface, no calldata, or calldata the ABI does not
 * decode → the three fields are simply absent, so a policy that reads them fails with MissingField,
 * which the engine records as that policy's OUTCOME_ERROR (an ALLOW policy then does not apply).
 */
import {
  decodeFunctionData,
  toFunctionSelector,
  toFunctionSignature,
  type Abi,
  type AbiFunction,
  type AbiParameter,
} from 'viem';
import type { Store } from './store/types.js';

type Fact = boolean | bigint | string | readonly Fact[] | { readonly [k: string]: Fact };

/** A map with no prototype, so an ABI parameter named `__proto__` is just a key. */
function factMap(): Record<string, Fact> {
  return Object.create(null) as Record<string, Fact>;
}

/** `T[]` / `T[N]` → the element parameter, keeping a tuple's components. */
function elementOf(p: AbiParameter): AbiParameter | undefined {
  const m = /^(.*)\[\d*\]$/.exec(p.type);
  if (m === null) return undefined;
  return { ...p, type: m[1] as string } as AbiParameter;
}

/** A decoded value as a policy fact: addresses lower-case, ints bigint, bytes 0x hex, recursively. */
function toFact(p: AbiParameter, v: unknown): Fact {
  const el = elementOf(p);
  if (el !== undefined) {
    if (!Array.isArray(v)) throw new Error(`expected an array for ${p.type}`);
    return v.map((x) => toFact(el, x));
  }
  if (p.type === 'tuple') {
    const components = 'components' in p ? p.components : [];
    return argsOf(components, v);
  }
  if (p.type === 'address' || p.type.startsWith('bytes')) {
    if (typeof v !== 'string') throw new Error(`expected a hex string for ${p.type}`);
    return v.toLowerCase();
  }
  if (/^u?int\d*$/.test(p.type)) {
    if (typeof v === 'bigint') return v;
    if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
    throw new Error(`expected an integer for ${p.type}`);
  }
  if (typeof v === 'boolean' || typeof v === 'string') return v;
  throw new Error(`no policy type for ${p.type}`);
}

/**
 * Parameters by name (an unnamed one by its position). viem gives a tuple as an object when all
 * its components are named and as an array otherwise; both are read positionally or by name.
 */
function argsOf(params: readonly AbiParameter[], values: unknown): Record<string, Fact> {
  const out = factMap();
  params.forEach((p, i) => {
    const key = p.name !== undefined && p.name !== '' ? p.name : String(i);
    const v = Array.isArray(values)
      ? (values[i] as unknown)
      : typeof values === 'object' && values !== null && p.name !== undefined && p.name !== ''
        ? (values as Record<string, unknown>)[p.name]
        : undefined;
    out[key] = toFact(p, v);
  });
  return out;
}

/** The decoded call, or undefined if `data` does not decode against `abi`. */
export function decodeContractCall(
  abi: Abi,
  data: `0x${string}`,
):
  | { function_name: string; function_signature: string; contract_call_args: Record<string, Fact> }
  | undefined {
  try {
    const { functionName, args } = decodeFunctionData({ abi, data });
    const selector = data.slice(0, 10).toLowerCase();
    const fns = abi.filter(
      (item): item is AbiFunction => item.type === 'function' && item.name === functionName,
    );
    // Overloads share a name: pick the one whose selector is the calldata's.
    const fn = fns.length === 1 ? fns[0] : fns.find((f) => toFunctionSelector(f).toLowerCase() === selector);
    if (fn === undefined) return undefined;
    return {
      function_name: functionName,
      function_signature: toFunctionSignature(fn),
      contract_call_args: argsOf(fn.inputs, args ?? []),
    };
  } catch {
    return undefined;
  }
}

/**
 * Adds the contract-call fields to `tx` (an `eth.tx` facts object, written in place) when an
 * Ethereum interface of the organization matches `tx.to` (case-insensitive) and decodes `tx.data`.
 */
export async function addContractCallFacts(
  store: Store,
  organizationId: string,
  tx: Record<string, unknown>,
): Promise<void> {
  const to = tx['to'];
  const data = tx['data'];
  if (typeof to !== 'string' || to === '' || typeof data !== 'string' || data.length <= 2) return;
  const target = to.toLowerCase();
  const iface = (await store.listSmartContractInterfaces(organizationId)).find(
    (r) => r.type === 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM' && r.address.toLowerCase() === target,
  );
  if (iface === undefined) return;
  let abi: Abi;
  try {
    const json = JSON.parse(iface.interfaceJson) as unknown;
    if (!Array.isArray(json)) return;
    abi = json as Abi;
  } catch {
    return;
  }
  const call = decodeContractCall(abi, data as `0x${string}`);
  if (call !== undefined) Object.assign(tx, call);
}
