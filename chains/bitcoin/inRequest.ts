import { CountersignError } from '../../src/shared/errors.js';

/** The request fields an adapter error is re-homed onto (`parameters.unsignedTransaction`, `bitcoin.unsigned`…). */
export interface RequestFields {
  /** The field that carried the PSBT. */
  readonly unsignedField: string;
  /** The field that named the signer. */
  readonly signWithField: string;
}

/**
 * Runs an adapter step and re-homes its CountersignError onto the caller's request: `sign_with` becomes
 * `signWithField`; a malformed PSBT (or an error naming no field) names `unsignedField`, its message
 * saying where inside; an error about one part of the PSBT (`inputs[1].sighash_type`) is named below
 * `unsignedField`. The original error is kept as the cause.
 */
export function inRequest<T>(fields: RequestFields, step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (!(e instanceof CountersignError)) throw e;
    const inner = e.field;
    const { unsignedField, signWithField } = fields;
    if (inner === 'sign_with') {
      const reason = e.message.startsWith('sign_with: ') ? e.message.slice('sign_with: '.length) : e.message;
      throw new CountersignError(e.code, `${signWithField}: ${reason}`, { field: signWithField, cause: e });
    }
    if (inner === undefined || e.code === 'BITCOIN_MALFORMED_PSBT') {
      throw new CountersignError(e.code, `${unsignedField}: ${e.message}`, {
        field: unsignedField,
        cause: e,
      });
    }
    const field = `${unsignedField}.${inner}`;
    const message = e.message.startsWith(`${inner}: `)
      ? `${unsignedField}.${e.message}`
      : `${field}: ${e.message}`;
    throw new CountersignError(e.code, message, { field, cause: e });
  }
}
