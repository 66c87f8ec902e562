/**
 * The gas station: the service's sponsor key plus the batch executor accounts delegate to (EIP-7702).
 * The executor is deployed at one CREATE2 address on every chain (through the deterministic
 * deployment proxy); the first batch on a chain deploys it, paid by the sponsor, and every later one
 * finds it there.
 */
import { keccak_256 } from '../../shared/keccak.js';
import { toHex, type Hex } from 'viem';
import type { Logger } from 'pino';
import { bytesTo0x, equalBytes, hexToBytes, zeroize } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';
import type { KeyVault } from '../keys/KeyVault.js';
import type { Store } from '../store/types.js';
import {
  BATCH_EXECUTOR_RUNTIME_CODE,
  CREATE2_DEPLOYER,
  batchExecutorAddress,
  create2DeployCalldata,
  decodeNextNonceResult,
  encodeNextNonceCall,
} from './batchExecutor.js';
import type { EthChain } from './chains.js';
import { classifyBroadcastError } from './classifyBroadcastError.js';
import { estimateCallGas, pendingNonce, suggestFees, upstream, withGasMargin } from './fillTransaction.js';
import { signEthTransaction } from './signEthTransaction.js';
import { openSponsorKey, type SponsorKey } from './sponsorKey.js';

export interface GasStation {
  readonly sponsor: SponsorKey;
  /** Lower-case 0x address of the batch executor (the same on every chain). */
  readonly executor: `0x${string}`;
  /** Resolves once the executor's code is on `chain`, deploying it (the sponsor pays) the first time. */
  ensureExecutor(chain: EthChain): Promise<void>;
}

/** The allocator's key for an account's gas-station nonces (kept beside its transaction nonces). */
export function gasStationNonceKey(account: string): string {
  return `${account.toLowerCase()}#gas-station`;
}

const RECEIPT_TIMEOUT_MS = 60_000;
const RECEIPT_POLL_MS = 200;

async function codeAt(chain: EthChain, address: string): Promise<Uint8Array> {
  try {
    const hex = await chain.client.request({ method: 'eth_getCode', params: [address as Hex, 'latest'] });
    return hexToBytes(hex, 'eth_getCode');
  } catch (e) {
    throw upstream(chain, 'eth_getCode', e);
  }
}

/** The account's code as the chain holds it now (`0xef0100‖address` once it has delegated). */
export function accountCode(chain: EthChain, account: `0x${string}`): Promise<Uint8Array> {
  return codeAt(chain, account);
}

/**
 * The next gas-station nonce the executor would accept for `account`: its `nextNonce()` run against the
 * account's own storage with the executor's code put in place (a state override), so it reads right
 * whether or not the account has delegated yet.
 */
export async function chainGasStationNonce(chain: EthChain, account: `0x${string}`): Promise<bigint> {
  try {
    const out = await chain.client.request({
      method: 'eth_call',
      params: [
        { to: account, data: bytesTo0x(encodeNextNonceCall()) },
        'latest',
        { [account]: { code: bytesTo0x(BATCH_EXECUTOR_RUNTIME_CODE) } },
      ] as never,
    });
    return decodeNextNonceResult(out as Hex);
  } catch (e) {
    throw upstream(chain, 'eth_call nextNonce()', e);
  }
}

function unavailable(chain: EthChain, why: string, cause?: unknown): CountersignError {
  return new CountersignError(
    'GAS_STATION_UNAVAILABLE',
    `parameters.caip2: the gas station on ${chain.caip2} ${why}`,
    {
      field: 'parameters.caip2',
      cause,
    },
  );
}

export function createGasStation(opts: {
  readonly store: Store;
  readonly vault: KeyVault;
  readonly sponsor: SponsorKey;
  readonly logger: Logger;
}): GasStation {
  const { store, vault, sponsor, logger } = opts;
  const executor = batchExecutorAddress();
  const ready = new Map<string, Promise<void>>();

  async function waitForReceipt(chain: EthChain, hash: Hex): Promise<{ status: Hex }> {
    const until = Date.now() + RECEIPT_TIMEOUT_MS;
    for (;;) {
      const r = (await chain.client.request({ method: 'eth_getTransactionReceipt', params: [hash] })) as {
        status: Hex;
      } | null;
      if (r !== null) return r;
      if (Date.now() > until)
        throw unavailable(chain, `deployment ${hash} was not mined within ${RECEIPT_TIMEOUT_MS} ms`);
      await new Promise((res) => setTimeout(res, RECEIPT_POLL_MS));
    }
  }

  async function deploy(chain: EthChain): Promise<void> {
    const present = await codeAt(chain, executor);
    if (equalBytes(present, BATCH_EXECUTOR_RUNTIME_CODE)) return;
    if (present.length > 0) throw unavailable(chain, `finds other code at the executor address ${executor}`);
    if ((await codeAt(chain, CREATE2_DEPLOYER)).length === 0)
      throw unavailable(
        chain,
        `cannot deploy its executor: the chain has no deterministic deployment proxy at ${CREATE2_DEPLOYER}`,
      );
    const data = create2DeployCalldata();
    const [chainPending, gas, fees] = await Promise.all([
      pendingNonce(chain, sponsor.address),
      estimateCallGas(
        chain,
        { from: sponsor.address, to: hexToBytes(CREATE2_DEPLOYER, 'deployer'), value: 0n, data },
        'parameters.caip2',
      ),
      suggestFees(chain, { maxFeePerGas: undefined, maxPriorityFeePerGas: undefined }),
    ]);
    const nonce = await store.write(
      async (tx) => await tx.allocateNonce(chain.caip2, sponsor.address, chainPending, undefined),
    );
    const secret = openSponsorKey(vault, sponsor);
    let signed: Uint8Array;
    try {
      signed = signEthTransaction({
        privateKey: secret,
        expectedFrom: sponsor.address,
        tx: {
          type: 'eip1559',
          chainId: chain.chainId,
          nonce,
          gasLimit: withGasMargin(gas),
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
          to: hexToBytes(CREATE2_DEPLOYER, 'deployer'),
          value: 0n,
          data,
          accessList: [],
        },
      });
    } finally {
      zeroize(secret);
    }
    const hash = bytesTo0x(keccak_256(signed)) as Hex;
    try {
      await chain.client.request({ method: 'eth_sendRawTransaction', params: [bytesTo0x(signed) as Hex] });
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (classifyBroadcastError(message) !== 'ALREADY_KNOWN') {
        // Never broadcast: the nonce goes back so the sponsor's next transaction leaves no gap.
        await store.write(async (tx) => await tx.releaseNonce(chain.caip2, sponsor.address, nonce));
        const unfunded = classifyBroadcastError(message) === 'INSUFFICIENT_FUNDS';
        throw unavailable(
          chain,
          unfunded
            ? `cannot deploy its executor: the sponsor ${sponsor.address} holds too little to pay the gas; fund it`
            : `could not broadcast the executor's deployment`,
          e,
        );
      }
    }
    logger.info(
      { caip2: chain.caip2, executor, txHash: hash, nonce: toHex(nonce) },
      'deploying the batch executor',
    );
    const receipt = await waitForReceipt(chain, hash);
    if (
      BigInt(receipt.status) !== 1n ||
      !equalBytes(await codeAt(chain, executor), BATCH_EXECUTOR_RUNTIME_CODE)
    )
      throw unavailable(
        chain,
        `executor deployment ${hash} did not leave the executor's code at ${executor}`,
      );
    logger.info({ caip2: chain.caip2, executor }, 'batch executor deployed');
  }

  return {
    sponsor,
    executor,
    ensureExecutor(chain) {
      let p = ready.get(chain.caip2);
      if (p === undefined) {
        p = deploy(chain);
        ready.set(chain.caip2, p);
        // A failed attempt is not remembered: the next request tries again (e.g. once the sponsor is funded).
        p.catch(() => ready.delete(chain.caip2));
      }
      return p;
    },
  };
}
