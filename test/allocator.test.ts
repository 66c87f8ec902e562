/**
 * The image runs `serve` under jemalloc: the Dockerfile's runtime stage installs Debian's
 * libjemalloc2 and preloads it. The benches run the server the same way (bench/allocator.ts), and
 * test/bench-load.test.ts checks that a server started so really has jemalloc mapped and signs
 * correctly under it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { serverAllocator } from '../bench/allocator.js';

const DOCKERFILE = fileURLToPath(new URL('../Dockerfile', import.meta.url));

describe("the image's allocator", () => {
  // The runtime stage: everything after the last FROM.
  const runtime = readFileSync(DOCKERFILE, 'utf8')
    .split(/^FROM /m)
    .at(-1) as string;

  it('is jemalloc, installed from Debian and preloaded through a link the stage makes', () => {
    const preload = /^ENV LD_PRELOAD=(\S+)$/m.exec(runtime)?.[1];
    expect(preload).toBe('/usr/local/lib/libjemalloc.so.2');
    const install = runtime.split(/^RUN /m).find((r) => r.includes('libjemalloc2'));
    expect(install).toMatch(/apt-get install -y --no-install-recommends libjemalloc2/);
    expect(install).toContain(`ln -s "/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2" ${preload}`);
    // The link is checked at build time: a missing library fails the build, not the start.
    expect(install).toContain(`test -e ${preload}`);
  });

  it('is what the benches run the server under, unless told glibc', () => {
    expect(serverAllocator('jemalloc').env.LD_PRELOAD).toMatch(/\/libjemalloc\.so\.2$/);
    expect(serverAllocator('glibc').env).toEqual({ LD_PRELOAD: '' });
    expect(() => serverAllocator('tcmalloc')).toThrow(/BENCH_ALLOCATOR must be jemalloc or glibc/);
  });
});
