/** Typed access to the Tron JSON fixtures, plus the tronweb pieces the cross-check tests share. */
import { readFileSync } from 'node:fs';
import 'tronweb';
import type { TronTransactionFields } from '../../../chains/tron/index.js';

function load<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8')) as T;
}

export function hex(h: string): Uint8Array {
  return new Uint8Array(Buffer.from(h.startsWith('0x') ? h.slice(2) : h, 'hex'));
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

export interface FieldsJson extends Omit<TronTransactionFields, 'memo'> {
  /** hex */
  memo: string;
}

export interface TransactionVector {
  name: string;
  /** null for a transaction countersign does not build from fields (it only signs them). */
  fields: FieldsJson | null;
  rawDataHex: string;
  txID: string;
  /** tronweb's signature hex (v in upper case: 1B/1C). */
  signature: string;
  signedHex: string;
  signer: string;
  /** `tron.tx` facts derived from tronweb's JSON; numbers as decimal strings. */
  facts: Record<string, unknown>;
}

export const transactionVectors = load<{
  privateKey: string;
  signer: string;
  recipient: string;
  transactions: TransactionVector[];
}>('transactions.json');

export const invalidVectors = load<{ rawData: { name: string; hex: string; message: string }[] }>('invalid.json');

export function fieldsFromJson(f: FieldsJson): TronTransactionFields {
  return { ...f, memo: hex(f.memo) };
}

/** Facts with bigint → decimal string, the form the fixtures store. */
export function factsToJson(facts: unknown): unknown {
  return JSON.parse(JSON.stringify(facts, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
}

/** The part of tronweb's generated protobuf classes (loaded on `globalThis.TronWebProto`) the tests use. */
export interface TronWebProto {
  Transaction: {
    new (): {
      setRawData(raw: unknown): void;
      addSignature(sig: Uint8Array): void;
      serializeBinary(): Uint8Array;
    };
    deserializeBinary(bytes: Uint8Array): {
      getRawData(): {
        serializeBinary(): Uint8Array;
        getContractList(): { getType(): number }[];
        getData_asU8(): Uint8Array;
      };
      getSignatureList_asU8(): Uint8Array[];
      serializeBinary(): Uint8Array;
    };
    raw: { deserializeBinary(bytes: Uint8Array): { serializeBinary(): Uint8Array } };
  };
}

export const tronWebProto = (globalThis as unknown as { TronWebProto: TronWebProto }).TronWebProto;
