/**
 * The image's tree, built as the Dockerfile builds it (compile with tsconfig.build.json, keep only
 * the production dependencies the lockfile names), runs `serve` with NODE_ENV=production from a
 * directory outside the repository, with no compiler or loader in it. And `serve` from the sources
 * works from any working directory (the service worker finds tsx through the package, not the cwd).
 * Docker itself does not run here; what the image would run does.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from './helpers/serve.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const dirs: string[] = [];
const procs: ServeProcess[] = [];
afterAll(async () => {
  for (const p of procs) {
    p.proc.kill('SIGKILL');
    await p.exited;
  }
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

interface LockEntry {
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
}

/** What `npm prune --omit=dev --omit=optional` keeps: the lockfile's production packages. */
function copyProductionDependencies(into: string): void {
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const from = realpathSync(join(REPO, 'node_modules'));
  const keep = Object.entries(lock.packages)
    .filter(([k, v]) => k.startsWith('node_modules/') && !v.dev && !v.optional && !v.devOptional)
    .map(([k]) => k.slice('node_modules/'.length))
    .sort();
  let last: string | undefined;
  for (const rel of keep) {
    // A nested package comes along with the package it is nested in.
    if (last !== undefined && rel.startsWith(`${last}/node_modules/`)) continue;
    last = rel;
    cpSync(join(from, rel), join(into, 'node_modules', rel), { recursive: true });
  }
}

/** Every directory named `name` under node_modules, nested ones included. */
function packagesNamed(root: string, names: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const p = join(dir, e.name);
      if (names.includes(e.name) && dir.endsWith('node_modules')) found.push(p);
      walk(p);
    }
  };
  walk(root);
  return found;
}

function reflectedServices(address: string, protoRoot: string): Promise<string[]> {
  const def = protoLoader.loadSync(
    join(protoRoot, 'node_modules/@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto'),
  );
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
  };
  const client = new pkg.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
  const stream = (client as unknown as Record<string, () => grpc.ClientDuplexStream<unknown, unknown>>)[
    'ServerReflectionInfo'
  ]!.call(client);
  return new Promise<string[]>((resolve, reject) => {
    stream.once('data', (d: { listServicesResponse?: { service: { name: string }[] } }) => {
      resolve(d.listServicesResponse?.service.map((s) => s.name) ?? []);
      stream.end();
      client.close();
    });
    stream.once('error', reject);
    stream.write({ listServices: '' });
  });
}

describe('serve from the sources, outside the repository', () => {
  it('starts from another working directory and lists the health service through reflection', async () => {
    const cwd = temp('countersign-cwd-');
    const serve = await startServe(['--data-dir', 'data'], {}, { cwd });
    procs.push(serve);
    expect(existsSync(join(cwd, 'data', 'credentials.json'))).toBe(true);
    const services = await reflectedServices(serve.ready.grpc, REPO);
    expect(services).toContain('countersign.v1.Signer');
    expect(services).toContain('grpc.health.v1.Health');
    expect((await fetch(`${serve.ready.api}/readyz`)).status).toBe(200);
  });
});

describe('the production tree', () => {
  let tree: string;
  beforeAll(async () => {
    tree = temp('countersign-image-');
    // As the Dockerfile: compile, then keep the runtime files and the production dependencies.
    await run(
      process.execPath,
      [
        join(REPO, 'node_modules/typescript/bin/tsc'),
        '-p',
        'tsconfig.build.json',
        // The Dockerfile's build type-checks; here the emit alone is what is under test.
        '--noCheck',
        '--outDir',
        join(tree, 'dist'),
      ],
      { cwd: REPO },
    );
    for (const f of ['package.json', 'package-lock.json', 'bin', 'proto'])
      cpSync(join(REPO, f), join(tree, f), { recursive: true });
    mkdirSync(join(tree, 'node_modules'));
    copyProductionDependencies(tree);
  }, 180_000);

  it('carries no compiler, loader or bundler', () => {
    expect(packagesNamed(join(tree, 'node_modules'), ['typescript', 'tsx', 'esbuild'])).toEqual([]);
    expect(existsSync(join(tree, 'dist/src/cli.js'))).toBe(true);
  });

  it('serves with NODE_ENV=production from outside the repository; /readyz and the HEALTHCHECK pass', async () => {
    const cwd = temp('countersign-run-');
    const serve = await startServe(
      ['--data-dir', 'data'],
      { NODE_ENV: 'production', NODE_OPTIONS: '' },
      { bin: join(tree, 'bin/countersign.js'), cwd },
    );
    procs.push(serve);
    const ready = await fetch(`${serve.ready.api}/readyz`);
    expect(ready.status).toBe(200);
    const services = await reflectedServices(serve.ready.grpc, tree);
    expect(services).toContain('grpc.health.v1.Health');
    // The image's HEALTHCHECK command, run from the tree against the gRPC listener.
    const probe = await run(process.execPath, [join(tree, 'bin/healthcheck.js'), serve.ready.grpc], {
      cwd,
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(probe.stdout.trim()).toBe('SERVING');
  });
});
