/**
 * Remote mode: `countersign serve --api-url URL --organization-id ID --api-key-file FILE` runs the
 * gRPC daemon alone against a public API reached over HTTP (here: another countersign process,
 * standing in for any Turnkey-compatible base URL), verifying everything it returns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recoverTransactionAddress, toHex, verifyMessage } from 'viem';
import { createSignerClient, unwrap } from './helpers/grpc-client.js';
import { startServe } from './helpers/serve.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('remote mode', () => {
  it('signs through a remote public API over HTTP and verifies the result', async () => {
    const apiDir = mkdtempSync(join(tmpdir(), 'countersign-remote-api-'));
    const daemonDir = mkdtempSync(join(tmpdir(), 'countersign-remote-daemon-'));
    dirs.push(apiDir, daemonDir);
    const api = await startServe(['--data-dir', apiDir]);
    const remote = await startServe([
      '--data-dir',
      daemonDir,
      '--api-url',
      api.ready.api as string,
      '--organization-id',
      api.ready.organizationId,
      '--api-key-file',
      join(apiDir, 'credentials.json'),
    ]);
    try {
      // The remote daemon serves gRPC only: no embedded service, no API listener of its own.
      expect(remote.ready.api).toBeUndefined();
      expect(remote.ready.organizationId).toBe(api.ready.organizationId);
      const eth = api.ready.accounts?.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')
        ?.address as string;
      const client = createSignerClient({ address: remote.ready.grpc });
      for (const mode of ['SIGNING_MODE_SIGN_TRANSACTION', 'SIGNING_MODE_SIGN_RAW_PAYLOADS'] as const) {
        const res = unwrap(
          await client.signTransaction({
            signWith: eth,
            mode,
            idempotencyKey: `remote-${mode}`,
            ethereum: {
              type: 'ETHEREUM_TRANSACTION_TYPE_EIP1559',
              chainId: '1',
              nonce: '3',
              to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
              value: '42',
              gasLimit: '21000',
              maxFeePerGas: '3000000000',
              maxPriorityFeePerGas: '1000000000',
            },
          }),
        );
        expect(res.mode).toBe(mode);
        expect(
          await recoverTransactionAddress({ serializedTransaction: toHex(res.signedTransaction) as never }),
        ).toBe(eth);
      }
      const msg = unwrap(
        await client.signMessage({ signWith: eth, personalMessage: Buffer.from('over the wire') }),
      );
      expect(
        await verifyMessage({
          address: eth as `0x${string}`,
          message: 'over the wire',
          signature: toHex(msg.serialized),
        }),
      ).toBe(true);
      client.close();
    } finally {
      remote.proc.kill('SIGTERM');
      api.proc.kill('SIGTERM');
      expect(await remote.exited).toBe(0);
      expect(await api.exited).toBe(0);
    }
  });
});
