/**
 * A real local chain for tests: spawns the anvil binary shipped by @foundry-rs/anvil-linux-amd64
 * on a free port with the Prague hardfork (EIP-7702), and waits until its RPC answers. The default
 * dev mnemonic's accounts are pre-funded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import { dirname, join } from 'node:path';

export interface RunningAnvil {
  readonly rpcUrl: string;
  stop(): Promise<void>;
}

export interface StartAnvilOptions {
  /** Extra command-line arguments (e.g. `['--chain-id', '1']`). */
  readonly args?: string[];
}

const STARTUP_TIMEOUT_MS = 20_000;
const MAX_PORT_ATTEMPTS = 5;

function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@foundry-rs/anvil-linux-amd64/package.json');
  return join(dirname(pkg), 'bin', 'anvil');
}

/** A port that was free a moment ago (anvil takes no port 0, so one is picked for it). */
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

async function chainIdAnswers(rpcUrl: string): Promise<boolean> {
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    const json = (await res.json()) as { result?: unknown };
    return typeof json.result === 'string';
  } catch {
    return false;
  }
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

/** One attempt on one port: resolves when the RPC answers, rejects if anvil exits first. */
async function startOn(port: number, args: string[]): Promise<RunningAnvil> {
  const child = spawn(
    anvilBinary(),
    ['--host', '127.0.0.1', '--port', String(port), '--hardfork', 'prague', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const exited = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`anvil exited (${code ?? signal}) before answering: ${stderr.trim()}`)),
    );
  });
  exited.catch(() => {});
  const rpcUrl = `http://127.0.0.1:${port}`;
  const ready = (async () => {
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (await chainIdAnswers(rpcUrl)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`anvil did not answer on ${rpcUrl} within ${STARTUP_TIMEOUT_MS} ms`);
  })();
  try {
    await Promise.race([ready, exited]);
  } catch (e) {
    await stopProcess(child);
    throw e;
  }
  return { rpcUrl, stop: () => stopProcess(child) };
}

/** Starts anvil on a free port; retries on another port when the chosen one was taken meanwhile. */
export async function startAnvil(opts: StartAnvilOptions = {}): Promise<RunningAnvil> {
  let lastError: unknown;
  for (let attempt = 0; attempt < MAX_PORT_ATTEMPTS; attempt++) {
    try {
      return await startOn(await freePort(), opts.args ?? []);
    } catch (e) {
      lastError = e;
      if (!/address already in use|EADDRINUSE/i.test(String(e))) throw e;
    }
  }
  throw lastError;
}
