import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { authorizeCall, loadCallers, type CallerEntry } from './callers.js';

const dir = mkdtempSync(join(tmpdir(), 'countersign-callers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function callerAllowed(signWith: string[]): CallerEntry {
  const path = join(dir, `clients-${(files += 1)}.json`);
  writeFileSync(
    path,
    JSON.stringify({ clients: [{ name: 'payments', tokenSha256: 'ab'.repeat(32), signWith }] }),
  );
  return loadCallers(path)[0]!;
}

/** Whether the grant lets the caller sign with `signWith`; a refusal must name the value. */
function allows(caller: CallerEntry, signWith: string): boolean {
  try {
    authorizeCall(caller, { method: 'SignTransaction', signWith: [signWith], chain: undefined });
    return true;
  } catch (e) {
    expect((e as { code?: string }).code).toBe('CALLER_NOT_ALLOWED');
    expect((e as Error).message).toContain(`may not sign with ${signWith}`);
    return false;
  }
}

describe('a caller grant names sign_with values as the store matches them', () => {
  it('an Ethereum address in any case, checksummed or not, on either side', () => {
    const eth = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
    const caller = callerAllowed([eth]);
    expect(allows(caller, eth)).toBe(true);
    expect(allows(caller, eth.toLowerCase())).toBe(true);
    expect(allows(caller, `0x${eth.slice(2).toUpperCase()}`)).toBe(true);
    expect(allows(callerAllowed([eth.toLowerCase()]), eth)).toBe(true);
    expect(allows(caller, '0x8ba1f109551bD432803012645Ac136ddd64DBA73')).toBe(false);
  });

  it('a bech32 address written all in upper or all in lower case, never mixed', () => {
    const bc = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
    const caller = callerAllowed([bc]);
    expect(allows(caller, bc)).toBe(true);
    expect(allows(caller, bc.toUpperCase())).toBe(true);
    expect(allows(caller, `BC1${bc.slice(3)}`)).toBe(false);
    expect(allows(callerAllowed([bc.toUpperCase()]), bc)).toBe(true);
  });

  it('base58 (Solana, Tron) and private-key ids only as written: another case is another key', () => {
    const sol = 'GXBBurSwk5d6bg6LbMVstx1rfPsn8tWM4cVSbUduLXhg';
    const tron = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
    const caller = callerAllowed([sol, tron]);
    expect(allows(caller, sol)).toBe(true);
    expect(allows(caller, tron)).toBe(true);
    expect(allows(caller, sol.toLowerCase())).toBe(false);
    expect(allows(caller, tron.toUpperCase())).toBe(false);
  });
});
