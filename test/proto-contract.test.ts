/**
 * The gRPC contract as other services consume it: the TypeScript generated from proto/ (protoc-gen-es,
 * pinned in package.json) is checked in and must be what `npm run generate:proto` produces today;
 * `buf lint` (STANDARD, with the exceptions buf.yaml lists and explains) and `buf breaking` against the
 * last released proto (proto-released/) pass. Runs buf's own binary from node_modules; no network.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const BUF = join(REPO, 'node_modules', '.bin', 'buf');
const GEN = join('src', 'shared', 'gen');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'countersign-proto-'));
  dirs.push(d);
  return d;
};

function files(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const path = join(e.parentPath, e.name);
    out.set(relative(root, path), readFileSync(path, 'utf8'));
  }
  return out;
}

async function buf(args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(BUF, args, { cwd: REPO });
    return { ok: true, output: stdout + stderr };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return { ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

describe('proto contract', () => {
  it('the checked-in generated TypeScript is what the pinned generator makes from proto/ now', async () => {
    const out = temp();
    const r = await buf(['generate', '--output', out]);
    expect(r.output).toBe('');
    expect(r.ok).toBe(true);
    const fresh = files(join(out, GEN));
    const checkedIn = files(join(REPO, GEN));
    expect(fresh.size).toBeGreaterThan(0);
    expect([...checkedIn.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [path, text] of fresh) {
      // A stale file fails here: run `npm run generate:proto` and commit the result.
      expect(checkedIn.get(path), `${GEN}/${path} is stale (npm run generate:proto)`).toBe(text);
    }
    const version = JSON.parse(
      readFileSync(join(REPO, 'node_modules', '@bufbuild', 'protoc-gen-es', 'package.json'), 'utf8'),
    ) as { version: string };
    const pinned = (
      JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies['@bufbuild/protoc-gen-es'];
    expect(version.version).toBe(pinned);
    for (const text of fresh.values()) expect(text).toContain(`protoc-gen-es v${pinned}`);
  });

  it('buf lint (STANDARD, with the exceptions listed in buf.yaml) passes', async () => {
    const r = await buf(['lint']);
    expect(r.output).toBe('');
    expect(r.ok).toBe(true);
  });

  it('buf breaking against the last released proto passes', async () => {
    const r = await buf(['breaking', '--against', 'proto-released']);
    expect(r.output).toBe('');
    expect(r.ok).toBe(true);
  });

  it('buf breaking does catch a renamed field (the check can fail)', async () => {
    const dir = temp();
    cpSync(join(REPO, 'proto'), dir, { recursive: true });
    const file = join(dir, 'countersign', 'v1', 'signer.proto');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('string idempotency_key = 3;', 'string request_key = 3;'),
    );
    const config = JSON.stringify({ version: 'v2', breaking: { use: ['WIRE_JSON'] } });
    const r = await buf(['breaking', dir, '--against', 'proto-released', '--config', config]);
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/changed name from "idempotency_key" to "request_key"/);
  });
});

describe('error codes in the proto', () => {
  it('countersign.v1.ErrorCode declares exactly the codes of src/shared/errors.ts', async () => {
    const { ErrorCodeSchema } = await import('../src/shared/gen/countersign/v1/errors_pb.js');
    const { ERROR_CODES } = await import('../src/shared/errors.js');
    const declared = ErrorCodeSchema.values.map((v) => v.name);
    expect(declared[0]).toBe('ERROR_CODE_UNSPECIFIED');
    // As sets: a new code goes at the end of the enum (numbers are never reused), wherever errors.ts lists it.
    expect(
      declared
        .slice(1)
        .map((n) => n.slice('ERROR_CODE_'.length))
        .sort(),
    ).toEqual([...ERROR_CODES].sort());
  });
});
