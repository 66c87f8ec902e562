/**
 * Writes `ethereum-tests.json` from a checkout of ethereum/tests (the Ethereum Foundation's
 * consensus test suite, MIT): every case of TransactionTests with its signed bytes and, for the
 * newest fork the case names, either its hash and sender or the exception clients raise. Files over
 * 1 MB (String10MbData*: ten megabytes of calldata) are left out.
 *
 *   node --import tsx test/vectors/ethereum/extractEthereumTests.ts <ethereum/tests checkout> [commit]
 *
 * The commit is the checkout's HEAD unless given (for a copy of TransactionTests outside git).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = process.argv[2] ?? "";
if (root === "") throw new Error('usage: extractEthereumTests.ts <ethereum/tests checkout>');

/** Newest first: a case is read at the newest fork it has a result for. */
const FORKS = ['Osaka', 'Prague', 'Cancun', 'Shanghai', 'Paris', 'London', 'Berlin', 'Istanbul'];

interface Result {
  exception?: string;
  hash?: string;
  sender?: string;
}

const cases: unknown[] = [];
function walk(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, e.name);
    if (e.isDirectory()) walk(path);
    else if (e.name.endsWith('.json') && statSync(path).size <= 1_000_000) {
      const tests = JSON.parse(readFileSync(path, 'utf8')) as Record<
        string,
        { txbytes: string; result: Record<string, Result> }
      >;
      for (const [name, t] of Object.entries(tests)) {
        const fork = FORKS.find((f) => t.result[f] !== undefined);
        if (fork === undefined) throw new Error(`${path} ${name}: no result for a fork after Istanbul`);
        const r = t.result[fork] as Result;
        cases.push({
          file: relative(join(root, 'TransactionTests'), path),
          name,
          fork,
          txbytes: t.txbytes,
          ...(r.exception === undefined ? { hash: r.hash, sender: r.sender } : { exception: r.exception }),
        });
      }
    }
  }
}
walk(join(root, 'TransactionTests'));
const commit =
  process.argv[3] ?? execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
const out = {
  _comment: `TransactionTests of ethereum/tests at ${commit} (MIT, Copyright 2014 Ethereum Foundation), one result per case: the newest fork's; files over 1 MB left out. Written by extractEthereumTests.ts.`,
  cases,
};
writeFileSync(new URL('ethereum-tests.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
console.log(`${cases.length} cases from ${commit}`);
