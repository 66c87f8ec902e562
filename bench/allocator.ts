/**
 * The C allocator the benches run `serve` under. The image preloads jemalloc (Dockerfile), so the
 * benches do too when this machine has Debian's libjemalloc2: what they measure is what the image
 * runs. BENCH_ALLOCATOR=glibc measures the same server under glibc's malloc instead; the line
 * printed above each table names the one in use.
 */
import { existsSync } from 'node:fs';
import { arch } from 'node:os';

/** Where Debian's libjemalloc2 puts the library, and the link the image makes to it. */
const JEMALLOC_PATHS = [
  `/usr/lib/${arch() === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu/libjemalloc.so.2`,
  '/usr/local/lib/libjemalloc.so.2',
];

export interface ServerAllocator {
  /** Printed above the results. */
  readonly description: string;
  /** Added to the server's environment. */
  readonly env: Readonly<Record<string, string>>;
}

export function serverAllocator(choice = process.env.BENCH_ALLOCATOR ?? 'jemalloc'): ServerAllocator {
  if (choice === 'glibc')
    return { description: "glibc's malloc (BENCH_ALLOCATOR=glibc)", env: { LD_PRELOAD: '' } };
  if (choice !== 'jemalloc') throw new Error('BENCH_ALLOCATOR must be jemalloc or glibc');
  const path = JEMALLOC_PATHS.find((p) => existsSync(p));
  if (path === undefined)
    return {
      description:
        "glibc's malloc: no libjemalloc.so.2 on this machine (the image preloads jemalloc; " +
        'apt-get install libjemalloc2 to measure as it runs)',
      env: {},
    };
  return { description: `jemalloc (LD_PRELOAD=${path}), as the image runs`, env: { LD_PRELOAD: path } };
}
