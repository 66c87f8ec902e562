/**
 * A real local Tempo node for tests: the anvil binary shipped by @foundry-rs/anvil-linux-amd64 in
 * `--network tempo` mode (chain id 31337), on a free port, waiting until its RPC answers.
 * test/helpers/anvil.ts always passes `--hardfork prague`, which tempo mode refuses ("Unknown
 * hardfork"), hence this helper. The dev mnemonic's accounts hold TIP-20 balances of the tokens at
 * 0x20c0…0000–0003 (pathUSD, AlphaUSD, …); there is no native balance on Tempo, so
 * `anvil_setBalance` gives no fee tokens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import { dirname, join } from 'node:path';

export interface RunningTempoAnvil {
  readonly rpcUrl: string;
  /** JSON-RPC call; rejects with the node's error message. */
  rpc<T>(method: string, params: unknown[]): Promise<T>;
  stop(): Promise<void>;
}

/** pathUSD, the protocol's quote token (6 decimals). */
export const PATH_USD = '0x20c0000000000000000000000000000000000000';
/** AlphaUSD, another pre-deployed TIP-20 the dev accounts hold. */
export const ALPHA_USD = '0x20c0000000000000000000000000000000000001';

const STARTUP_TIMEOUT_MS = 20_000;
const MAX_PORT_ATTEMPTS = 5;

function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@foundry-rs/anvil-linux-amd64/package.json')), 'bin', 'anvil');
}

/** A port that was free a moment ago (anvil takes no port 0). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function rpcAt(rpcUrl: string) {
  return async function rpc<T>(method: string, params: unknown[]): Promise<T> {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      signal: AbortSignal.timeout(5_000),
    });
    const json = (await res.json()) as { result?: T; error?: { message: string } };
    if (json.error !== undefined) throw new Error(`${method}: ${json.error.message}`);
    return json.result as T;
  };
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function startOn(port: number): Promise<RunningTempoAnvil> {
  const child = spawn(anvilBinary(), ['--network', 'tempo', '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const rpcUrl = `http://127.0.0.1:${port}`;
  const rpc = rpcAt(rpcUrl);
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`anvil --network tempo exited before answering: ${stderr.trim()}`);
      }
      try {
        await rpc('eth_chainId', []);
        return { rpcUrl, rpc, stop: () => stopProcess(child) };
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error(`anvil --network tempo did not answer on ${rpcUrl} within ${STARTUP_TIMEOUT_MS} ms`);
  } catch (e) {
    await stopProcess(child);
    throw e;
  }
}

/** Starts anvil `--network tempo` on a free port; retries on another port if it was taken meanwhile. */
export async function startTempoAnvil(): Promise<RunningTempoAnvil> {
  let lastError: unknown;
  for (let attempt = 0; attempt < MAX_PORT_ATTEMPTS; attempt++) {
    try {
      return await startOn(await freePort());
    } catch (e) {
      lastError = e;
      if (!/address already in use|EADDRINUSE/i.test(String(e))) throw e;
    }
  }
  throw lastError;
}

const word = (h: string) => h.replace(/^0x/, '').toLowerCase().padStart(64, '0');

/** Calldata of TIP-20 (ERC-20) `transfer(to, amount)`. */
export function transferData(to: string, amount: bigint): `0x${string}` {
  return `0xa9059cbb${word(to)}${word(amount.toString(16))}`;
}

/** TIP-20 `balanceOf(owner)` at the latest block. */
export async function tokenBalance(node: RunningTempoAnvil, token: string, owner: string): Promise<bigint> {
  return BigInt(
    await node.rpc<string>('eth_call', [{ to: token, data: `0x70a08231${word(owner)}` }, 'latest']),
  );
}

export interface TempoReceipt {
  readonly status: string;
  readonly type: string;
  readonly transactionHash: string;
  readonly from: string;
  readonly logs: readonly unknown[];
}

/** Sends a signed transaction and waits (up to ~5 s) for its receipt. */
export async function sendAndMine(node: RunningTempoAnvil, signed: `0x${string}`): Promise<TempoReceipt> {
  const hash = await node.rpc<string>('eth_sendRawTransaction', [signed]);
  for (let i = 0; i < 100; i++) {
    const receipt = await node.rpc<TempoReceipt | null>('eth_getTransactionReceipt', [hash]);
    if (receipt !== null) return receipt;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${hash} was not mined`);
}
