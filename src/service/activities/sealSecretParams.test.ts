import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CountersignError } from '../../shared/errors.js';
import { KeyVault } from '../keys/index.js';
import { openSecretParam, sealSecretParams } from './sealSecretParams.js';

const vault = new KeyVault(randomBytes(32));

describe('sealSecretParams / openSecretParam', () => {
  it('replaces only the named string fields and opens them back for the same activity', () => {
    const params = { secret: 'hunter2', other: 'visible', n: 7 };
    const sealed = sealSecretParams(vault, 'act-1', params, ['secret', 'n', 'absent']);
    expect(sealed.other).toBe('visible');
    expect(sealed.n).toBe(7);
    expect(sealed).not.toHaveProperty('absent');
    expect(sealed.secret).toMatch(/^countersign-sealed:v1:/);
    expect(JSON.stringify(sealed)).not.toContain('hunter2');
    expect(Buffer.from(openSecretParam(vault, 'act-1', sealed, 'secret')!).toString()).toBe('hunter2');
    expect(openSecretParam(vault, 'act-1', sealed, 'absent')).toBeUndefined();
  });

  it('refuses a token moved to another activity or another field', () => {
    const sealed = sealSecretParams(vault, 'act-1', { a: 's', b: 't' }, ['a', 'b']);
    expect(() => openSecretParam(vault, 'act-2', sealed, 'a')).toThrow(CountersignError);
    expect(() => openSecretParam(vault, 'act-1', { a: sealed.b }, 'a')).toThrow(CountersignError);
  });

  it('names the field when the value is not a string', () => {
    try {
      openSecretParam(vault, 'act-1', { a: 5 }, 'a');
      throw new Error('expected a refusal');
    } catch (e) {
      expect((e as CountersignError).field).toBe('parameters.a');
    }
  });
});
