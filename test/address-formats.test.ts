/**
 * Addresses of the newer formats, derived by countersign from the BIP-39 test mnemonic at the curve
 * and path of @turnkey/sdk-server's default account for each format, must equal what the chain's own
 * library derives: @aptos-labs/ts-sdk and @mysten/sui (from the mnemonic itself), @cosmjs/amino,
 * @stellar/stellar-base, @ton/ton, bitcoinjs-lib with Dogecoin's parameters and @scure/btc-signer
 * (from our key).
 */
import { Account } from '@aptos-labs/ts-sdk';
import { encodeSecp256k1Pubkey, pubkeyToAddress } from '@cosmjs/amino';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import * as btc from '@scure/btc-signer';
import { Keypair, StrKey } from '@stellar/stellar-base';
import { Address } from '@ton/core';
import { WalletContractV3R2, WalletContractV4 } from '@ton/ton';
import {
  DEFAULT_APTOS_ACCOUNTS,
  DEFAULT_BITCOIN_SIGNET_P2PKH_ACCOUNTS,
  DEFAULT_BITCOIN_SIGNET_P2TR_ACCOUNTS,
  DEFAULT_BITCOIN_SIGNET_P2WPKH_ACCOUNTS,
  DEFAULT_BITCOIN_SIGNET_P2SH_ACCOUNTS,
  DEFAULT_BITCOIN_SIGNET_P2WSH_ACCOUNTS,
  DEFAULT_COSMOS_ACCOUNTS,
  DEFAULT_DOGE_MAINNET_ACCOUNTS,
  DEFAULT_DOGE_TESTNET_ACCOUNTS,
  DEFAULT_SEI_ACCOUNTS,
  DEFAULT_SUI_ACCOUNTS,
  DEFAULT_TON_V3R2_ACCOUNTS,
  DEFAULT_TON_V4R2_ACCOUNTS,
  DEFAULT_XLM_ACCOUNTS,
} from '@turnkey/sdk-server';
import * as bitcoin from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import {
  curveFitsFormat,
  deriveAddress,
  derivePrivateKey,
  isAddressFormat,
  isCurve,
  mnemonicToSeed,
  publicKeyOf,
  type AddressFormat,
  type Curve,
} from '../src/service/keys/index.js';
import { TON_DEFAULT_SUBWALLET_ID } from '../src/service/keys/tonWalletAddress.js';

const MNEMONIC =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const seed = mnemonicToSeed(MNEMONIC);

// Dogecoin's chain parameters (dogecoin/src/chainparams.cpp); only pubKeyHash matters for P2PKH.
const DOGE_MAINNET: bitcoin.Network = {
  messagePrefix: '\x19Dogecoin Signed Message:\n',
  bech32: '',
  bip32: { public: 0x02facafd, private: 0x02fac398 },
  pubKeyHash: 0x1e,
  scriptHash: 0x16,
  wif: 0x9e,
};
const DOGE_TESTNET: bitcoin.Network = {
  messagePrefix: '\x19Dogecoin Signed Message:\n',
  bech32: '',
  bip32: { public: 0x043587cf, private: 0x04358394 },
  pubKeyHash: 0x71,
  scriptHash: 0xc4,
  wif: 0xf1,
};
// Signet is testnet's encodings (BIP-325 leaves them unchanged).
const SIGNET = btc.TEST_NETWORK;

interface Oracle {
  /** @turnkey/sdk-server's default accounts for the format. */
  readonly defaults: readonly { curve: string; path: string; addressFormat: string }[];
  /** The chain library's address for the key (or, where it derives keys itself, for the mnemonic). */
  readonly address: (k: { priv: Uint8Array; pub: Uint8Array; path: string }) => string;
}

const tonOracle = (W: typeof WalletContractV3R2 | typeof WalletContractV4) => (k: { pub: Uint8Array }) =>
  W.create({ workchain: 0, publicKey: Buffer.from(k.pub) }).address.toString();

const oracles: Record<string, Oracle> = {
  ADDRESS_FORMAT_APTOS: {
    defaults: DEFAULT_APTOS_ACCOUNTS,
    address: ({ path }) => Account.fromDerivationPath({ path, mnemonic: MNEMONIC }).accountAddress.toString(),
  },
  ADDRESS_FORMAT_SUI: {
    defaults: DEFAULT_SUI_ACCOUNTS,
    address: ({ path }) => Ed25519Keypair.deriveKeypair(MNEMONIC, path).toSuiAddress(),
  },
  ADDRESS_FORMAT_COSMOS: {
    defaults: DEFAULT_COSMOS_ACCOUNTS,
    address: ({ pub }) => pubkeyToAddress(encodeSecp256k1Pubkey(pub), 'cosmos'),
  },
  ADDRESS_FORMAT_SEI: {
    defaults: DEFAULT_SEI_ACCOUNTS,
    address: ({ pub }) => pubkeyToAddress(encodeSecp256k1Pubkey(pub), 'sei'),
  },
  ADDRESS_FORMAT_DOGE_MAINNET: {
    defaults: DEFAULT_DOGE_MAINNET_ACCOUNTS,
    address: ({ pub }) => String(bitcoin.payments.p2pkh({ pubkey: pub, network: DOGE_MAINNET }).address),
  },
  ADDRESS_FORMAT_DOGE_TESTNET: {
    defaults: DEFAULT_DOGE_TESTNET_ACCOUNTS,
    address: ({ pub }) => String(bitcoin.payments.p2pkh({ pubkey: pub, network: DOGE_TESTNET }).address),
  },
  ADDRESS_FORMAT_XLM: {
    defaults: DEFAULT_XLM_ACCOUNTS,
    address: ({ priv }) => Keypair.fromRawEd25519Seed(Buffer.from(priv)).publicKey(),
  },
  ADDRESS_FORMAT_TON_V3R2: { defaults: DEFAULT_TON_V3R2_ACCOUNTS, address: tonOracle(WalletContractV3R2) },
  ADDRESS_FORMAT_TON_V4R2: { defaults: DEFAULT_TON_V4R2_ACCOUNTS, address: tonOracle(WalletContractV4) },
  ADDRESS_FORMAT_BITCOIN_SIGNET_P2PKH: {
    defaults: DEFAULT_BITCOIN_SIGNET_P2PKH_ACCOUNTS,
    address: ({ pub }) => String(btc.p2pkh(pub, SIGNET).address),
  },
  ADDRESS_FORMAT_BITCOIN_SIGNET_P2WPKH: {
    defaults: DEFAULT_BITCOIN_SIGNET_P2WPKH_ACCOUNTS,
    address: ({ pub }) => String(btc.p2wpkh(pub, SIGNET).address),
  },
  ADDRESS_FORMAT_BITCOIN_SIGNET_P2TR: {
    defaults: DEFAULT_BITCOIN_SIGNET_P2TR_ACCOUNTS,
    // BIP-86 key-path-only output of the x-only internal key.
    address: ({ pub }) => String(btc.p2tr(pub.subarray(1), undefined, SIGNET).address),
  },
};

/** Addresses of the test mnemonic published outside these libraries, as a second anchor. */
const published: Partial<Record<AddressFormat, string>> = {
  // Cosmos Hub's widely used first account of the test mnemonic (m/44'/118'/0'/0/0).
  ADDRESS_FORMAT_COSMOS: 'cosmos19rl4cm2hmr8afy4kldpxz3fka4jguq0auqdal4',
  // SEP-5 test vector 3 (this mnemonic, no passphrase), m/44'/148'/0'.
  ADDRESS_FORMAT_XLM: 'GB3JDWCQJCWMJ3IILWIGDTQJJC5567PGVEVXSCVPEQOTDN64VJBDQBYX',
};

function derive(curve: Curve, path: string, format: AddressFormat) {
  const priv = derivePrivateKey(seed, curve, path, 'path');
  const pub = publicKeyOf(curve, priv);
  return { priv, pub, address: deriveAddress(curve, pub, format, 'addressFormat') };
}

describe('new address formats equal the chain library’s address at sdk-server’s default account', () => {
  for (const [format, oracle] of Object.entries(oracles)) {
    const account = oracle.defaults[0];
    if (account === undefined) throw new Error(`no default account for ${format}`);
    it(`${format} (${account.curve}, ${account.path})`, () => {
      expect(account.addressFormat).toBe(format);
      if (!isCurve(account.curve) || !isAddressFormat(format)) throw new Error(`unknown ${format}`);
      expect(curveFitsFormat(account.curve, format)).toBe(true);
      const { priv, pub, address } = derive(account.curve, account.path, format);
      expect(address).toBe(oracle.address({ priv, pub, path: account.path }));
      const known = published[format];
      if (known !== undefined) expect(address).toBe(known);
    });
  }
});

describe('address details', () => {
  it('gives signet the testnet address of the same key for every kind', () => {
    const priv = derivePrivateKey(seed, 'CURVE_SECP256K1', "m/86'/1'/0'/0/0", 'path');
    const pub = publicKeyOf('CURVE_SECP256K1', priv);
    for (const kind of ['P2PKH', 'P2WPKH', 'P2TR'] as const) {
      const signet = deriveAddress('CURVE_SECP256K1', pub, `ADDRESS_FORMAT_BITCOIN_SIGNET_${kind}`, 'f');
      expect(signet).toBe(
        deriveAddress('CURVE_SECP256K1', pub, `ADDRESS_FORMAT_BITCOIN_TESTNET_${kind}`, 'f'),
      );
    }
  });

  it('gives the TON wallet address as bounceable mainnet base64url on workchain 0 with subwallet 698983191', () => {
    const { pub, address } = derive('CURVE_ED25519', "m/44'/607'/0'/0'/0'", 'ADDRESS_FORMAT_TON_V4R2');
    expect(address).toMatch(/^EQ[A-Za-z0-9_-]{46}$/);
    const parsed = Address.parseFriendly(address);
    expect(parsed.isBounceable).toBe(true);
    expect(parsed.isTestOnly).toBe(false);
    expect(parsed.address.workChain).toBe(0);
    const v4 = WalletContractV4.create({ workchain: 0, publicKey: Buffer.from(pub) });
    expect(v4.walletId).toBe(TON_DEFAULT_SUBWALLET_ID);
    // v3r2 and v4r2 of one key are different contracts, so different addresses.
    const v3 = deriveAddress('CURVE_ED25519', pub, 'ADDRESS_FORMAT_TON_V3R2', 'f');
    expect(v3).not.toBe(address);
  });

  it('matches @ton/ton for random ed25519 keys (both wallet versions)', () => {
    for (let i = 0; i < 20; i++) {
      const pub = publicKeyOf(
        'CURVE_ED25519',
        derivePrivateKey(seed, 'CURVE_ED25519', `m/44'/607'/${i}'`, 'p'),
      );
      const key = Buffer.from(pub);
      expect(deriveAddress('CURVE_ED25519', pub, 'ADDRESS_FORMAT_TON_V3R2', 'f')).toBe(
        WalletContractV3R2.create({ workchain: 0, publicKey: key }).address.toString(),
      );
      expect(deriveAddress('CURVE_ED25519', pub, 'ADDRESS_FORMAT_TON_V4R2', 'f')).toBe(
        WalletContractV4.create({ workchain: 0, publicKey: key }).address.toString(),
      );
    }
  });

  it('gives the Stellar StrKey that decodes back to the public key', () => {
    const { pub, address } = derive('CURVE_ED25519', "m/44'/148'/1'", 'ADDRESS_FORMAT_XLM');
    expect(StrKey.isValidEd25519PublicKey(address)).toBe(true);
    expect(new Uint8Array(StrKey.decodeEd25519PublicKey(address))).toEqual(pub);
  });

  it('refuses each new format on the wrong curve with CURVE_UNSUPPORTED naming the field', () => {
    const secp = publicKeyOf(
      'CURVE_SECP256K1',
      derivePrivateKey(seed, 'CURVE_SECP256K1', "m/44'/0'/0'", 'p'),
    );
    const ed = publicKeyOf('CURVE_ED25519', derivePrivateKey(seed, 'CURVE_ED25519', "m/44'/0'/0'", 'p'));
    for (const format of Object.keys(oracles)) {
      if (!isAddressFormat(format)) throw new Error(format);
      const edOnly = curveFitsFormat('CURVE_ED25519', format);
      const cases: [Curve, Uint8Array][] = edOnly
        ? [
            ['CURVE_SECP256K1', secp],
            ['CURVE_P256', secp],
          ]
        : [
            ['CURVE_ED25519', ed],
            ['CURVE_P256', secp],
          ];
      for (const [curve, key] of cases)
        expect(() => deriveAddress(curve, key, format, 'parameters.accounts.0.addressFormat')).toThrow(
          expect.objectContaining({
            code: 'CURVE_UNSUPPORTED',
            field: 'parameters.accounts.0.addressFormat',
          }),
        );
    }
  });

  it('keeps P2SH and P2WSH out of the supported formats (sdk-server has defaults for them)', () => {
    for (const defaults of [DEFAULT_BITCOIN_SIGNET_P2SH_ACCOUNTS, DEFAULT_BITCOIN_SIGNET_P2WSH_ACCOUNTS]) {
      expect(isAddressFormat(defaults[0]?.addressFormat)).toBe(false);
    }
  });
});
