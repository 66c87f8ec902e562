import { invalid, missing } from '../../src/shared/errors.js';
import { parsePublicKey } from './publicKey.js';
import { serializeMessage } from './serializeMessage.js';
import { encodeShortVec } from './shortVec.js';
import {
  MAX_ACCOUNTS,
  MAX_TRANSACTION_SIZE,
  SIGNATURE_LENGTH,
  type SolanaAddressTableLookup,
  type SolanaCompiledInstruction,
  type SolanaMessage,
  type SolanaTransactionFields,
} from './types.js';

const P = 'solana';

interface KeyMeta {
  readonly key: Uint8Array;
  isSigner: boolean;
  isWritable: boolean;
  isInvoked: boolean;
}

/**
 * Compiles structured gRPC fields into a message with the account order of @solana/web3.js 1.x
 * `TransactionMessage.compileToLegacyMessage` / `compileToV0Message`: keys in order of first
 * appearance (fee payer, then each instruction's program id and accounts), grouped as writable
 * signers, read-only signers, writable non-signers, read-only non-signers. With lookup tables
 * (v0), non-signer, non-program keys found in a table are loaded from it, tables taken in order and
 * each key from the first table that has it. Errors name the proto field (`solana.fee_payer`).
 */
export function messageFromFields(fields: SolanaTransactionFields): SolanaMessage {
  const tables = fields.addressLookupTables ?? [];
  const version = fields.version ?? 'UNSPECIFIED';
  if (version !== 'UNSPECIFIED' && version !== 'LEGACY' && version !== 'V0') {
    throw invalid(`${P}.version`, 'is not a known Solana message version');
  }
  if (version === 'LEGACY' && tables.length > 0) {
    throw invalid(
      `${P}.address_lookup_tables`,
      'a legacy message cannot use address lookup tables; ask for V0',
    );
  }
  const payer = parsePublicKey(fields.feePayer, `${P}.fee_payer`);
  const recentBlockhash = parsePublicKey(fields.recentBlockhash, `${P}.recent_blockhash`, 'blockhash');
  if (fields.instructions.length === 0) throw missing(`${P}.instructions`);

  const metas = new Map<string, KeyMeta>();
  const metaOf = (key: Uint8Array): KeyMeta => {
    const id = Buffer.from(key).toString('hex');
    let meta = metas.get(id);
    if (meta === undefined) {
      meta = { key, isSigner: false, isWritable: false, isInvoked: false };
      metas.set(id, meta);
    }
    return meta;
  };
  const payerMeta = metaOf(payer);
  payerMeta.isSigner = true;
  payerMeta.isWritable = true;

  const instructions = fields.instructions.map((ix, i) => {
    const f = `${P}.instructions[${i}]`;
    const programId = parsePublicKey(ix.programId, `${f}.program_id`);
    metaOf(programId).isInvoked = true;
    const accounts = ix.accounts.map((a, j) => {
      const key = parsePublicKey(a.pubkey, `${f}.accounts[${j}].pubkey`);
      const meta = metaOf(key);
      meta.isSigner ||= a.isSigner;
      meta.isWritable ||= a.isWritable;
      return key;
    });
    if (ix.data.length > 0xffff) throw invalid(`${f}.data`, 'is longer than 65535 bytes');
    return { field: f, programId, accounts, data: ix.data.slice() };
  });
  if (payerMeta.isInvoked) throw invalid(`${P}.fee_payer`, 'cannot also be an instruction program id');

  const addressTableLookups: SolanaAddressTableLookup[] = [];
  const loadedWritable: Uint8Array[] = [];
  const loadedReadonly: Uint8Array[] = [];
  tables.forEach((table, t) => {
    const f = `${P}.address_lookup_tables[${t}]`;
    const accountKey = parsePublicKey(table.address, `${f}.address`);
    if (table.addresses.length > MAX_ACCOUNTS) {
      throw invalid(`${f}.addresses`, `a lookup table holds at most ${MAX_ACCOUNTS} addresses`);
    }
    const entries = table.addresses.map((a, k) =>
      Buffer.from(parsePublicKey(a, `${f}.addresses[${k}]`)).toString('hex'),
    );
    const drain = (writable: boolean, into: Uint8Array[]): number[] => {
      const indexes: number[] = [];
      for (const [id, meta] of metas) {
        if (meta.isSigner || meta.isInvoked || meta.isWritable !== writable) continue;
        const index = entries.indexOf(id);
        if (index < 0) continue;
        indexes.push(index);
        into.push(meta.key);
        metas.delete(id);
      }
      return indexes;
    };
    const writableIndexes = drain(true, loadedWritable);
    const readonlyIndexes = drain(false, loadedReadonly);
    if (writableIndexes.length + readonlyIndexes.length > 0) {
      addressTableLookups.push({ accountKey, writableIndexes, readonlyIndexes });
    }
  });

  const all = [...metas.values()];
  const groups = [
    all.filter((m) => m.isSigner && m.isWritable),
    all.filter((m) => m.isSigner && !m.isWritable),
    all.filter((m) => !m.isSigner && m.isWritable),
    all.filter((m) => !m.isSigner && !m.isWritable),
  ] as const;
  const staticAccountKeys = groups.flat().map((m) => m.key);
  const ordered = [...staticAccountKeys, ...loadedWritable, ...loadedReadonly];
  if (ordered.length > MAX_ACCOUNTS) {
    throw invalid(`${P}.instructions`, `reference ${ordered.length} accounts, more than ${MAX_ACCOUNTS}`);
  }
  const indexOf = new Map(ordered.map((k, i) => [Buffer.from(k).toString('hex'), i]));
  const index = (key: Uint8Array): number => indexOf.get(Buffer.from(key).toString('hex')) as number;

  const compiled: SolanaCompiledInstruction[] = instructions.map((ix) => ({
    programIdIndex: index(ix.programId),
    accountIndexes: ix.accounts.map(index),
    data: ix.data,
  }));
  const msg: SolanaMessage = {
    version: version === 'V0' || tables.length > 0 ? 0 : 'legacy',
    header: {
      numRequiredSignatures: groups[0].length + groups[1].length,
      numReadonlySignedAccounts: groups[1].length,
      numReadonlyUnsignedAccounts: groups[3].length,
    },
    staticAccountKeys,
    recentBlockhash,
    instructions: compiled,
    addressTableLookups,
  };
  // Serializing runs the structural checks; the size check needs the signature slots as well.
  const signers = msg.header.numRequiredSignatures;
  const size = encodeShortVec(signers).length + signers * SIGNATURE_LENGTH + serializeMessage(msg).length;
  if (size > MAX_TRANSACTION_SIZE) {
    throw invalid(
      `${P}.instructions`,
      `make a ${size}-byte transaction, above the ${MAX_TRANSACTION_SIZE}-byte limit`,
    );
  }
  return msg;
}
