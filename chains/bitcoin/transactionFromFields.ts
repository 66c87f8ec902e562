import { bytesToHex, concatBytes, equalBytes, hexToBytes, parseDecimal } from '../../src/shared/encoding.js';
import { invalid, missing } from '../../src/shared/errors.js';
import { ByteWriter } from './bytes.js';
import { parseAddress } from './parseAddress.js';
import { parseTransaction } from './parseTransaction.js';
import { decodeInput, decodeOutput, IN } from './psbtMaps.js';
import { classifyScript } from './script.js';
import { serializeTransaction } from './serializeTransaction.js';
import { txid } from './txid.js';
import {
  MAX_MONEY,
  type BitcoinNetwork,
  type BitcoinTransaction,
  type BitcoinTransactionFields,
  type Psbt,
  type PsbtEntry,
  type TxOutput,
} from './types.js';

const NETWORK: Record<BitcoinTransactionFields['network'], BitcoinNetwork> = {
  MAINNET: 'mainnet',
  TESTNET: 'testnet',
  REGTEST: 'regtest',
};

function u32(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff)
    throw invalid(field, 'must be an unsigned 32-bit integer');
  return value;
}

function witnessUtxoValue(o: TxOutput): Uint8Array {
  return new ByteWriter().u64(o.value).varBytes(o.script).finish();
}

/**
 * Builds a fresh, unsigned PSBT from structured fields: the unsigned transaction, per input a witness_utxo
 * (segwit spends) and/or non_witness_utxo (required for P2PKH, from `previousTransaction`), no output data.
 * version 0 means 2 and sequence 0 means 0xfffffffd (proto3 defaults).
 */
export function transactionFromFields(fields: BitcoinTransactionFields): Psbt {
  const network = NETWORK[fields.network];
  if (network === undefined) throw invalid('network', 'must be MAINNET, TESTNET or REGTEST');
  const version = fields.version === 0 ? 2 : fields.version;
  if (version !== 1 && version !== 2) throw invalid('version', 'must be 1 or 2');
  if (fields.inputs.length === 0) throw missing('inputs');
  if (fields.outputs.length === 0) throw missing('outputs');
  const prevs: { tx: BitcoinTransaction | undefined; utxo: TxOutput; raw: Uint8Array }[] = [];
  const txInputs = fields.inputs.map((inp, i) => {
    const f = `inputs[${i}]`;
    const prevTxid = hexToBytes(inp.txid, `${f}.txid`);
    if (prevTxid.length !== 32) throw invalid(`${f}.txid`, 'must be 32 bytes of hex');
    const vout = u32(inp.vout, `${f}.vout`);
    let prevTx: BitcoinTransaction | undefined;
    if (inp.previousTransaction.length > 0) {
      prevTx = parseTransaction(inp.previousTransaction, {
        field: `${f}.previous_transaction`,
        allowWitness: true,
      });
      if (bytesToHex(txid(prevTx)) !== bytesToHex(prevTxid))
        throw invalid(`${f}.previous_transaction`, 'does not hash to txid');
    }
    let utxo: TxOutput | undefined;
    if (inp.scriptPubKey !== '' || inp.value !== '') {
      utxo = {
        value: parseDecimal(inp.value, `${f}.value`, MAX_MONEY),
        script: hexToBytes(inp.scriptPubKey, `${f}.script_pub_key`),
      };
    }
    const fromPrev = prevTx?.outputs[vout];
    if (prevTx !== undefined && fromPrev === undefined)
      throw invalid(`${f}.vout`, 'is not an output of previous_transaction');
    if (
      utxo !== undefined &&
      fromPrev !== undefined &&
      (utxo.value !== fromPrev.value || !equalBytes(utxo.script, fromPrev.script))
    ) {
      throw invalid(`${f}.value`, 'value and script_pub_key disagree with previous_transaction');
    }
    const spent = utxo ?? fromPrev;
    if (spent === undefined) throw missing(`${f}.script_pub_key`);
    if (classifyScript(spent.script).witnessVersion < 0 && prevTx === undefined)
      throw missing(`${f}.previous_transaction`);
    prevs.push({ tx: prevTx, utxo: spent, raw: inp.previousTransaction });
    return {
      prevTxid: prevTxid.reverse(),
      vout,
      scriptSig: new Uint8Array(0),
      sequence: inp.sequence === 0 ? 0xfffffffd : u32(inp.sequence, `${f}.sequence`),
      witness: [],
    };
  });
  const txOutputs = fields.outputs.map((o, i) => {
    const f = `outputs[${i}]`;
    if ((o.address === '') === (o.scriptPubKey === ''))
      throw invalid(f, 'needs exactly one of address and script_pub_key');
    const script =
      o.address !== ''
        ? parseAddress(o.address, network, `${f}.address`)
        : hexToBytes(o.scriptPubKey, `${f}.script_pub_key`);
    return { value: parseDecimal(o.value, `${f}.value`, MAX_MONEY), script };
  });
  const tx: BitcoinTransaction = {
    version,
    inputs: txInputs,
    outputs: txOutputs,
    locktime: u32(fields.locktime, 'locktime'),
  };
  const globalEntries: PsbtEntry[] = [
    { key: Uint8Array.of(0x00), value: serializeTransaction(tx, { witness: false }) },
  ];
  const inputs = prevs.map((p, i) => {
    const entries: PsbtEntry[] = [];
    if (p.tx !== undefined)
      entries.push({ key: Uint8Array.of(IN.NON_WITNESS_UTXO), value: concatBytes(p.raw) });
    if (classifyScript(p.utxo.script).witnessVersion >= 0) {
      entries.push({ key: Uint8Array.of(IN.WITNESS_UTXO), value: witnessUtxoValue(p.utxo) });
    }
    return decodeInput(entries, i, tx);
  });
  return {
    global: { entries: globalEntries, unsignedTx: tx },
    inputs,
    outputs: txOutputs.map((_, i) => decodeOutput([], i)),
  };
}
