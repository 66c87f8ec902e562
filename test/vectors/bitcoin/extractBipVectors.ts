/**
 * Writes, from a checkout of bitcoin/bips:
 * - `psbt.json`: the test vectors of BIP-174 (PSBT) and BIP-371 (its taproot fields), both
 *   BSD-2-Clause: each case's name and its PSBT in base64, grouped as the BIPs group them —
 *   invalid, valid, and (BIP-174) valid PSBTs a signer must refuse to sign;
 * - `segwit-addresses.json`: BIP-350's (BSD-2-Clause) valid segwit addresses v0–v16 with the
 *   scriptPubKey each pays to, and its invalid ones with the reason;
 * - `../keys/bip32-leading-zeros.json`: BIP-32's (BSD-2-Clause) test vectors 3 and 4, which catch a
 *   derivation that drops a key's leading zero bytes: the seed and each chain's extended keys.
 *
 *   node --import tsx test/vectors/bitcoin/extractBipVectors.ts <bips checkout> [commit]
 *
 * The commit is the checkout's HEAD unless given.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2] ?? '';
if (root === '') throw new Error('usage: extractBipVectors.ts <bips checkout> [commit]');

type Group = 'invalid' | 'valid' | 'signerRefuses';
interface Case {
  bip: number;
  name: string;
  base64: string;
}

function extract(bip: number): Record<Group, Case[]> {
  const text = readFileSync(join(root, `bip-${String(bip).padStart(4, '0')}.mediawiki`), 'utf8');
  const lines = text.slice(text.indexOf('==Test Vectors==')).split('\n');
  const out: Record<Group, Case[]> = { invalid: [], valid: [], signerRefuses: [] };
  let group: Group | undefined;
  let name: string | undefined;
  for (const line of lines) {
    if (line.startsWith('The following are invalid PSBTs')) group = 'invalid';
    else if (line.startsWith('The following are valid PSBTs')) group = 'valid';
    else if (line.startsWith('Fails Signer checks')) group = 'signerRefuses';
    // What follows are the role-by-role workflow examples, not cases.
    else if (line.startsWith('The private keys in the tests below')) break;
    const c = /^\* Case: (.*)$/.exec(line);
    if (c !== null) name = (c[1] as string).replace(/<\/?tt>/g, '');
    const b = /^\*\* Base64 String: <pre>([A-Za-z0-9+/=]+)<\/pre>/.exec(line);
    if (b !== null && group !== undefined && name !== undefined) {
      out[group].push({ bip, name, base64: b[1] as string });
      name = undefined;
    }
  }
  return out;
}

const [a, b] = [extract(174), extract(371)];
const commit =
  process.argv[3] ?? execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
const out = {
  _comment: `Test vectors of BIP-174 and BIP-371 (BSD-2-Clause) from bitcoin/bips at ${commit}. Written by extractBipVectors.ts.`,
  invalid: [...a.invalid, ...b.invalid],
  valid: [...a.valid, ...b.valid],
  signerRefuses: [...a.signerRefuses, ...b.signerRefuses],
};
writeFileSync(new URL('psbt.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
console.log(
  `${out.invalid.length} invalid, ${out.valid.length} valid, ${out.signerRefuses.length} a signer refuses (${commit})`,
);

/** BIP-350's segwit address lists: `* <tt>address</tt>: <tt>script hex</tt>` or `: reason`. */
function segwitAddresses(): { valid: [string, string][]; invalid: [string, string][] } {
  const text = readFileSync(join(root, 'bip-0350.mediawiki'), 'utf8');
  const start = text.indexOf('===Test vectors for v0-v16 native segregated witness addresses===');
  const section = text.slice(start, text.indexOf('\n===', start + 1));
  const out = { valid: [] as [string, string][], invalid: [] as [string, string][] };
  for (const line of section.split('\n')) {
    const m = /^\* <tt>([^<]+)<\/tt>: (?:<tt>([0-9a-f]+)<\/tt>|(.+))$/.exec(line);
    if (m === null) continue;
    if (m[2] !== undefined) out.valid.push([m[1] as string, m[2]]);
    else out.invalid.push([m[1] as string, m[3] as string]);
  }
  return out;
}
const addresses = segwitAddresses();
writeFileSync(
  new URL('segwit-addresses.json', import.meta.url),
  `${JSON.stringify(
    {
      _comment: `Segwit address test vectors of BIP-350 (BSD-2-Clause) from bitcoin/bips at ${commit}: [address, scriptPubKey hex] and [address, why it is invalid]. Written by extractBipVectors.ts.`,
      ...addresses,
    },
    null,
    2,
  )}\n`,
);
console.log(`${addresses.valid.length} valid and ${addresses.invalid.length} invalid segwit addresses`);

/** BIP-32 test vectors 3 and 4: `Seed (hex): …`, then `* Chain m/0<sub>H</sub>` with `** ext prv: …`. */
function bip32LeadingZeros(): { name: string; seed: string; chains: { path: string; xpub: string; xprv: string }[] }[] {
  const text = readFileSync(join(root, 'bip-0032.mediawiki'), 'utf8');
  const out: { name: string; seed: string; chains: { path: string; xpub: string; xprv: string }[] }[] = [];
  for (const n of [3, 4]) {
    const start = text.indexOf(`===Test vector ${n}===`);
    const section = text.slice(start, text.indexOf('\n===', start + 1));
    const seed = /Seed \(hex\): ([0-9a-f]+)/.exec(section)?.[1];
    if (seed === undefined) throw new Error(`BIP-32 test vector ${n}: no seed`);
    const chains: { path: string; xpub: string; xprv: string }[] = [];
    for (const block of section.split('\n* Chain ').slice(1)) {
      const path = (block.split('\n')[0] as string).replace(/<sub>H<\/sub>/g, 'H').trim();
      const xpub = /\*\* ext pub: (\w+)/.exec(block)?.[1];
      const xprv = /\*\* ext prv: (\w+)/.exec(block)?.[1];
      if (xpub === undefined || xprv === undefined) throw new Error(`BIP-32 test vector ${n} ${path}: no keys`);
      chains.push({ path, xpub, xprv });
    }
    out.push({ name: `BIP-32 test vector ${n}`, seed, chains });
  }
  return out;
}
const bip32 = bip32LeadingZeros();
writeFileSync(
  new URL('../keys/bip32-leading-zeros.json', import.meta.url),
  `${JSON.stringify(
    {
      _comment: `BIP-32 (BSD-2-Clause) test vectors 3 and 4 (leading zeros retained) from bitcoin/bips at ${commit}. Written by test/vectors/bitcoin/extractBipVectors.ts.`,
      vectors: bip32,
    },
    null,
    2,
  )}\n`,
);
console.log(`BIP-32 test vectors 3 and 4: ${bip32.map((v) => v.chains.length).join(' and ')} chains`);
