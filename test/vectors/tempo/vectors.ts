/** Typed access to the Tempo JSON fixtures, plus converters the cross-check tests share. */
import { readFileSync } from 'node:fs';
import type { Hex } from 'ox';
import type { TempoTransaction } from '../../../chains/tempo/index.js';
import type { TxEnvelopeTempo } from 'ox/tempo';

function load<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8')) as T;
}

export function hex(h: string): Uint8Array {
  return new Uint8Array(Buffer.from(h.startsWith('0x') ? h.slice(2) : h, 'hex'));
}

export function to0x(b: Uint8Array): Hex.Hex {
  return `0x${Buffer.from(b).toString('hex')}`;
}

export interface OxVector {
  name: string;
  source: string;
  kind: 'unsigned' | 'signed' | 'feePayerPreimage' | 'unsupported' | 'invalid';
  hex: Hex.Hex;
  from?: Hex.Hex;
  field?: string;
}

export const oxVectors = load<{ vectors: OxVector[] }>('ox.json').vectors;
export const invalidVectors = load<{ unsigned: { name: string; hex: Hex.Hex; code: string; message: string }[] }>(
  'invalid.json',
).unsigned;

/** Public anvil/hardhat dev key (account 0); never use it outside tests. */
export const DEV_KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as const;
export const DEV_ADDRESS_0 = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266' as const;
/** Dev account 1 (used as the fee payer). */
export const DEV_KEY_1 = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const;
export const DEV_ADDRESS_1 = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const;

/**
 * The same transaction as an ox envelope (ox's own encoding decisions: zero numbers omitted, a
 * sponsored transaction as `feePayerSignature: null`).
 */
export function toOx(tx: TempoTransaction): TxEnvelopeTempo.TxEnvelopeTempo {
  return {
    type: 'tempo',
    chainId: Number(tx.chainId),
    maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
    maxFeePerGas: tx.maxFeePerGas,
    gas: tx.gasLimit,
    calls: tx.calls.map((c) => ({
      ...(c.to === null ? {} : { to: to0x(c.to) }),
      value: c.value,
      data: to0x(c.data),
    })),
    accessList: tx.accessList.map((e) => ({ address: to0x(e.address), storageKeys: e.storageKeys.map(to0x) })),
    nonceKey: tx.nonceKey,
    nonce: tx.nonce,
    ...(tx.validBefore === null ? {} : { validBefore: Number(tx.validBefore) }),
    ...(tx.validAfter === null ? {} : { validAfter: Number(tx.validAfter) }),
    ...(tx.feeToken === null ? {} : { feeToken: to0x(tx.feeToken) }),
    ...(tx.sponsored ? { feePayerSignature: null } : {}),
  };
}
