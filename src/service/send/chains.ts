/** The EVM chains the service may send on: one JSON-RPC endpoint per CAIP-2 id, from `--chain-rpc`. */
import { createPublicClient, http, type PublicClient } from 'viem';

export interface EthChain {
  /** `eip155:<chain id>` as configured. */
  readonly caip2: string;
  readonly chainId: bigint;
  readonly client: PublicClient;
}

export type EthChains = ReadonlyMap<string, EthChain>;

const EIP155_RE = /^eip155:([1-9][0-9]{0,19})$/;

/** The chain id of an `eip155:<n>` CAIP-2 id (CAIP-2 / CAIP-3), or undefined for any other form. */
export function eip155ChainId(caip2: string): bigint | undefined {
  const m = EIP155_RE.exec(caip2);
  return m?.[1] === undefined ? undefined : BigInt(m[1]);
}

/** One viem public client per configured `eip155:*` endpoint; other namespaces are not EVM chains. */
export function ethChainsFrom(chainRpc: ReadonlyMap<string, string>): EthChains {
  const out = new Map<string, EthChain>();
  for (const [caip2, url] of chainRpc) {
    const chainId = eip155ChainId(caip2);
    if (chainId === undefined) continue;
    // Many sends at once each ask for a nonce, fees and an estimate: JSON-RPC batching folds them.
    out.set(caip2, { caip2, chainId, client: createPublicClient({ transport: http(url, { batch: true }) }) });
  }
  return out;
}
