/**
 * Imports flow one way (DESIGN.md, "Layers"): the client and the service meet only in src/shared's
 * request-handler contract; activities do not reach up into the HTTP surface's stamp check; the
 * service never imports the daemon; chains/ imports nothing of src/ but src/shared.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => relative(REPO, join(e.parentPath, e.name)));
}

/** Every relative import of `file`, as a path from the repository root (`.js` spelled as written). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  const found = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1] as string);
  return found.map((spec) => relative(REPO, resolve(REPO, dirname(file), spec)));
}

function violations(dir: string, forbidden: (target: string) => boolean): string[] {
  return sources(dir).flatMap((f) =>
    importsOf(f)
      .filter(forbidden)
      .map((t) => `${f} → ${t}`),
  );
}

describe('import direction', () => {
  it('finds the imports it checks (the scan itself works)', () => {
    expect(importsOf('src/client/transport.ts')).toContain('src/shared/request-handler.js');
  });

  it('src/client imports nothing of src/service or src/daemon', () => {
    expect(violations('src/client', (t) => /^src\/(service|daemon)\//.test(t))).toEqual([]);
  });

  it('src/service takes the request-handler contract from src/shared, not from src/client', () => {
    expect(violations('src/service', (t) => t === 'src/client/transport.js')).toEqual([]);
  });

  it('src/service imports nothing of src/daemon', () => {
    expect(violations('src/service', (t) => t.startsWith('src/daemon/'))).toEqual([]);
  });

  it('activities do not import the stamp check of the HTTP surface', () => {
    expect(violations('src/service/activities', (t) => t === 'src/service/api/stamp.js')).toEqual([]);
  });

  it('the policy gate lives with the activities that pass it', () => {
    expect(sources('src/service').filter((f) => f.endsWith('policy-gate.ts'))).toEqual([
      'src/service/activities/policy-gate.ts',
    ]);
  });

  it('chains/ imports of src/ only src/shared', () => {
    expect(violations('chains', (t) => t.startsWith('src/') && !t.startsWith('src/shared/'))).toEqual([]);
  });
});
