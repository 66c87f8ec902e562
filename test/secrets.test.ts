/**
 * Key material never rests in plaintext and never reaches a log line: after a server has created
 * keys and signed, no file of the data dir holds a mnemonic or a private key (credentials.json holds
 * the root API key by design), and the captured logs hold no key, mnemonic, stamp or payload.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { keccak256, toHex } from 'viem';
import type { Credentials } from '../src/service/embedded.js';
import { KeyVault, loadOrCreateMasterKey, SERVICE_SIGNER_KEY_ID } from '../src/service/keys/index.js';
import { SPONSOR_KEY_ID } from '../src/service/send/sponsorKey.js';
import { openSqliteStore } from '../src/service/store/sqlite.js';
import { envelope, post } from './helpers/http.js';
import { startServe } from './helpers/serve.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('secrets at rest and in logs', () => {
  it('keeps mnemonics and keys out of the data dir files and out of the logs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'countersign-secrets-'));
    dirs.push(dataDir);
    const server = await startServe(['--data-dir', dataDir, '--log-level', 'trace']);
    const creds = JSON.parse(readFileSync(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    const api = server.ready.api as string;
    const eth = creds.accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')?.address as string;

    const payload = keccak256(toHex('a payload that must not be logged'));
    const signBody = envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', creds.organizationId, {
      signWith: eth,
      payload,
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    const stamp = (
      await new ApiKeyStamper({ apiPublicKey: creds.apiPublicKey, apiPrivateKey: creds.apiPrivateKey }).stamp(
        signBody,
      )
    ).stampHeaderValue;
    expect((await post(api, creds, '/public/v1/submit/sign_raw_payload', signBody)).status).toBe(200);
    const keys = await post(
      api,
      creds,
      '/public/v1/submit/create_private_keys',
      envelope('ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2', creds.organizationId, {
        privateKeys: [
          {
            privateKeyName: 'k',
            curve: 'CURVE_SECP256K1',
            privateKeyTags: [],
            addressFormats: ['ADDRESS_FORMAT_ETHEREUM'],
          },
        ],
      }),
    );
    expect(keys.status).toBe(200);
    // a refused request logs too: it must not echo what it refused
    const bad = envelope('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', creds.organizationId, {
      signWith: eth,
      payload: 'deadbeefcafe',
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    expect((await post(api, creds, '/public/v1/submit/sign_raw_payload', bad)).status).toBe(400);
    server.proc.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    // Recover every secret through the vault, as only the service can.
    const vault = new KeyVault(loadOrCreateMasterKey({ dataDir }));
    const store = openSqliteStore(join(dataDir, 'countersign.db'));
    const secrets: { name: string; value: Buffer }[] = [];
    for (const w of await store.listWallets(creds.organizationId)) {
      const mnemonic = Buffer.from(vault.open(w.sealedMnemonic, w.id));
      expect(mnemonic.toString().split(' ')).toHaveLength(12);
      secrets.push({ name: 'mnemonic', value: mnemonic });
    }
    for (const a of await store.listWalletAccounts(creds.organizationId, undefined, { limit: 100 })) {
      const k = Buffer.from(vault.open(a.sealedKey, a.id));
      secrets.push(
        { name: `account key ${a.path}`, value: k },
        { name: `account key hex ${a.path}`, value: Buffer.from(k.toString('hex')) },
      );
    }
    for (const k of await store.listPrivateKeys(creds.organizationId)) {
      const priv = Buffer.from(vault.open(k.sealedKey, k.id));
      secrets.push(
        { name: 'private key', value: priv },
        { name: 'private key hex', value: Buffer.from(priv.toString('hex')) },
      );
    }
    // The service's own keys: the export-bundle signer and the gas station's sponsor.
    for (const id of [SERVICE_SIGNER_KEY_ID, SPONSOR_KEY_ID]) {
      const rec = await store.getServiceKey(id);
      expect(rec, id).toBeDefined();
      const priv = Buffer.from(vault.open(rec?.sealedKey as Uint8Array, id));
      secrets.push(
        { name: id, value: priv },
        { name: `${id} hex`, value: Buffer.from(priv.toString('hex')) },
      );
    }
    await store.close();
    expect(secrets.length).toBeGreaterThan(10);

    for (const file of filesUnder(dataDir)) {
      const content = readFileSync(file);
      for (const s of secrets) expect(content.includes(s.value), `${s.name} in ${file}`).toBe(false);
      if (!file.endsWith('credentials.json') && !file.endsWith('master.key'))
        expect(content.includes(Buffer.from(creds.apiPrivateKey)), `API private key in ${file}`).toBe(false);
    }

    const logs = server.stderr() + server.stdout();
    expect(logs.length).toBeGreaterThan(200);
    for (const s of secrets)
      expect(logs.includes(s.value.toString('hex')) || logs.includes(s.value.toString()), s.name).toBe(false);
    for (const [name, value] of [
      ['api private key', creds.apiPrivateKey],
      ['stamp', stamp],
      ['payload', payload.slice(2)],
      ['refused payload', 'deadbeefcafe'],
    ] as const)
      expect(logs.includes(value), `${name} in logs`).toBe(false);
  });
});
