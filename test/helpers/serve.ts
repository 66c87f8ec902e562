/** Runs `countersign serve` as a real child process and waits for its `ready` line. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/countersign.js', import.meta.url));

export interface ReadyLine {
  grpc: string;
  api?: string;
  proxy?: string;
  organizationId: string;
  walletId?: string;
  accounts?: { addressFormat: string; address: string; path: string }[];
}

export interface ServeProcess {
  readonly proc: ChildProcess;
  readonly ready: ReadyLine;
  /** Everything written to stderr so far (the JSON logs). */
  stderr(): string;
  stdout(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

export interface ServeOptions {
  /** Another `bin/countersign.js` (a production tree); default this checkout's. */
  readonly bin?: string;
  /** The working directory of the process; default the test's. */
  readonly cwd?: string;
  /** Options for node itself, before the script (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
  readonly nodeArgs?: readonly string[];
}

export function startServe(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  opts: ServeOptions = {},
): Promise<ServeProcess> {
  const proc = spawn(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      opts.bin ?? BIN,
      'serve',
      '--grpc-listen',
      '127.0.0.1:0',
      '--api-listen',
      '127.0.0.1:0',
      '--proxy-listen',
      '127.0.0.1:0',
      ...args,
    ],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
    },
  );
  let out = '';
  let err = '';
  const exited = new Promise<number | string>((resolve) =>
    proc.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  return new Promise((resolve, reject) => {
    // A guard against a hang, not a speed check: on a loaded two-core runner a cold start (tsx
    // transforming the sources) has taken more than 30 s.
    const timer = setTimeout(() => reject(new Error(`serve did not become ready: ${err}`)), 90_000);
    proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    proc.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('ready '));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve({
          proc,
          ready: JSON.parse(line.slice(6)) as ReadyLine,
          stderr: () => err,
          stdout: () => out,
          exited,
        });
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code} before ready: ${err}`));
    });
  });
}
