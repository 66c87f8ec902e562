import { describe, expect, it } from 'vitest';
import { CountersignError } from './errors.js';
import { isNativeFunction, loadNative } from './loadNative.js';

describe('loadNative', () => {
  it('answers what the loader loaded', () => {
    expect(loadNative('test addon', () => 42)).toBe(42);
  });

  it('fails with INTERNAL naming the addon and the remedy, the cause kept', () => {
    const cause = new Error('Cannot find module');
    let thrown: unknown;
    try {
      loadNative('test addon (pkg prebuild)', () => {
        throw cause;
      });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CountersignError);
    expect((thrown as CountersignError).code).toBe('INTERNAL');
    expect((thrown as Error).message).toBe(
      'the native test addon (pkg prebuild) did not load; reinstall the dependencies',
    );
    expect((thrown as Error).cause).toBe(cause);
  });

  it('tells native functions (built-ins, addons) from JavaScript ones', () => {
    expect(isNativeFunction(Math.max)).toBe(true);
    expect(isNativeFunction(Buffer.prototype.copy)).toBe(false); // JavaScript inside node
    expect(isNativeFunction(() => '[native code]')).toBe(false);
    expect(
      isNativeFunction(function f() {
        return '{ [native code] }';
      }),
    ).toBe(false);
    expect(isNativeFunction('function () { [native code] }')).toBe(false);
  });
});
