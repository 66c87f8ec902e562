/**
 * @turnkey/ethers' TurnkeySigner, unmodified, against the embedded service: each of its methods with
 * both client kinds it takes (@turnkey/http's TurnkeyClient and @turnkey/sdk-server's apiClient),
 * every signature checked by ethers itself, and a transfer sent through a provider on a local anvil.
 */
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { TurnkeySigner } from '@turnkey/ethers';
import { TurnkeyClient } from '@turnkey/http';
import { Turnkey } from '@turnkey/sdk-server';
import {
  JsonRpcProvider,
  Transaction,
  getBytes,
  parseEther,
  toBeHex,
  verifyMessage,
  verifyTypedData,
} from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type RunningAnvil } from './helpers/anvil.js';
import { ethAddressOf, startEmbedded, type EmbeddedHarness } from './helpers/embedded.js';

const domain = {
  name: 'Ether Mail',
  version: '1',
  chainId: 1,
  verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC',
};
const types = {
  Person: [
    { name: 'name', type: 'string' },
    { name: 'wallet', type: 'address' },
  ],
  Mail: [
    { name: 'from', type: 'Person' },
    { name: 'to', type: 'Person' },
    { name: 'contents', type: 'string' },
  ],
};
const mail = {
  from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
  to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
  contents: 'Hello, Bob!',
};

describe('@turnkey/ethers TurnkeySigner', () => {
  let h: EmbeddedHarness;
  let address: string;
  let signers: { name: string; signer: () => TurnkeySigner }[];

  beforeAll(async () => {
    h = await startEmbedded();
    const c = h.service.credentials;
    address = ethAddressOf(h);
    const http = new TurnkeyClient(
      { baseUrl: h.baseUrl },
      new ApiKeyStamper({ apiPublicKey: c.apiPublicKey, apiPrivateKey: c.apiPrivateKey }),
    );
    const sdk = new Turnkey({
      apiBaseUrl: h.baseUrl,
      apiPublicKey: c.apiPublicKey,
      apiPrivateKey: c.apiPrivateKey,
      defaultOrganizationId: c.organizationId,
    }).apiClient();
    signers = [
      {
        name: '@turnkey/http',
        signer: () =>
          new TurnkeySigner({ client: http as never, organizationId: c.organizationId, signWith: address }),
      },
      {
        name: '@turnkey/sdk-server',
        signer: () =>
          new TurnkeySigner({ client: sdk as never, organizationId: c.organizationId, signWith: address }),
      },
    ];
  });
  afterAll(() => h?.close());

  for (const kind of ['@turnkey/http', '@turnkey/sdk-server']) {
    describe(kind, () => {
      const signer = () => signers.find((s) => s.name === kind)!.signer();

      it('getAddress', async () => {
        expect(await signer().getAddress()).toBe(address);
      });

      it('signTransaction (EIP-1559 and legacy)', async () => {
        const s = signer();
        const eip1559 = await s.signTransaction({
          type: 2,
          chainId: 31337,
          nonce: 5,
          to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
          value: 10n ** 15n,
          gasLimit: 21000n,
          maxFeePerGas: 2_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n,
        });
        const parsed = Transaction.from(eip1559);
        expect(parsed.from).toBe(address);
        expect(parsed.nonce).toBe(5);
        const legacy = Transaction.from(
          await s.signTransaction({
            type: 0,
            chainId: 1,
            nonce: 0,
            to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
            value: 1n,
            gasLimit: 21000n,
            gasPrice: 1_000_000_000n,
          }),
        );
        expect(legacy.from).toBe(address);
        expect(legacy.chainId).toBe(1n);
      });

      it('signMessage (text and bytes)', async () => {
        const s = signer();
        const text = 'countersign says hello';
        expect(verifyMessage(text, await s.signMessage(text))).toBe(address);
        const bytes = getBytes('0xdeadbeef');
        expect(verifyMessage(bytes, await s.signMessage(bytes))).toBe(address);
      });

      it('signTypedData', async () => {
        const sig = await signer().signTypedData(domain, types, mail);
        expect(verifyTypedData(domain, types, mail, sig)).toBe(address);
      });
    });
  }

  describe('connected to a provider', () => {
    let anvil: RunningAnvil;
    beforeAll(async () => {
      anvil = await startAnvil();
    });
    afterAll(() => anvil?.stop());

    it('connect + sendTransaction: ethers fills the transaction, the service signs, the chain includes it', async () => {
      const provider = new JsonRpcProvider(anvil.rpcUrl, undefined, { staticNetwork: true });
      await provider.send('anvil_setBalance', [address, toBeHex(parseEther('10'))]);
      const to = '0x000000000000000000000000000000000000bEEF';
      // @turnkey/ethers is typed against ethers' CommonJS build; the object is the same at run time.
      const s = signers[0]!.signer().connect(provider as never);
      const sent = await s.sendTransaction({ to, value: parseEther('1') });
      const receipt = await sent.wait();
      expect(receipt?.status).toBe(1);
      expect(receipt?.from).toBe(address);
      expect(await provider.getBalance(to)).toBe(parseEther('1'));
      provider.destroy();
    });
  });
});
