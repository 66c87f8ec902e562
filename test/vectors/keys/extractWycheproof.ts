/**
 * Writes the `wycheproof-*.json` files beside this script from a checkout of C2SP/wycheproof
 * (Apache-2.0): the signature-verification vectors of the three schemes countersign checks stamps
 * and chain signatures with, each group's public key and its cases as [tcId, message, signature,
 * result, flags]. Wycheproof's notes explaining the flags stay in the upstream files.
 *
 *   node --import tsx test/vectors/keys/extractWycheproof.ts <wycheproof checkout> [commit]
 *
 * The commit is the checkout's HEAD unless given.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2] ?? '';
if (root === '') throw new Error('usage: extractWycheproof.ts <wycheproof checkout> [commit]');
const commit =
  process.argv[3] ?? execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();

interface Upstream {
  numberOfTests: number;
  testGroups: {
    publicKey: { uncompressed?: string; pk?: string };
    tests: { tcId: number; msg: string; sig: string; result: string; flags: string[] }[];
  }[];
}

const FILES: [upstream: string, ours: string][] = [
  ['ecdsa_secp256r1_sha256_test', 'wycheproof-ecdsa-p256-sha256.json'],
  ['ecdsa_secp256k1_sha256_test', 'wycheproof-ecdsa-secp256k1-sha256.json'],
  ['ed25519_test', 'wycheproof-ed25519.json'],
];

for (const [upstream, ours] of FILES) {
  const j = JSON.parse(readFileSync(join(root, 'testvectors_v1', `${upstream}.json`), 'utf8')) as Upstream;
  const groups = j.testGroups.map((g) => ({
    publicKey: g.publicKey.uncompressed ?? g.publicKey.pk,
    tests: g.tests.map((t) => [t.tcId, t.msg, t.sig, t.result, t.flags]),
  }));
  const count = groups.reduce((n, g) => n + g.tests.length, 0);
  if (count !== j.numberOfTests) throw new Error(`${upstream}: ${count} tests read, ${j.numberOfTests} stated`);
  const out = {
    _comment: `testvectors_v1/${upstream}.json of C2SP/wycheproof at ${commit} (Apache-2.0): public keys hex (SEC1 uncompressed, or raw Ed25519), cases [tcId, message hex, signature hex, result, flags]. Written by extractWycheproof.ts.`,
    groups,
  };
  writeFileSync(new URL(ours, import.meta.url), `${JSON.stringify(out)}\n`);
  console.log(`${ours}: ${groups.length} groups, ${count} cases`);
}
