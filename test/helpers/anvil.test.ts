import { describe, expect, it } from 'vitest';
import { startAnvil } from './anvil.js';

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
}

describe('startAnvil', () => {
  it('starts a Prague chain whose eth_chainId answers 31337 and stops it', async () => {
    const anvil = await startAnvil();
    try {
      expect(await rpc(anvil.rpcUrl, 'eth_chainId')).toBe('0x7a69');
      // The first dev-mnemonic account is funded.
      const balance = await rpc(anvil.rpcUrl, 'eth_getBalance', [
        '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
        'latest',
      ]);
      expect(BigInt(balance as string)).toBeGreaterThan(0n);
    } finally {
      await anvil.stop();
    }
    await expect(fetch(anvil.rpcUrl, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('passes extra arguments through', async () => {
    const anvil = await startAnvil({ args: ['--chain-id', '4242'] });
    try {
      expect(await rpc(anvil.rpcUrl, 'eth_chainId')).toBe('0x1092');
    } finally {
      await anvil.stop();
    }
  });
});
