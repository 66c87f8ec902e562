import { CountersignError } from './errors.js';

/**
 * Loads a native addon the hot path depends on, or fails at start-up naming it: a package's silent
 * JavaScript fallback would make every call several times slower instead. `what` names the addon
 * and where it comes from; `remedy` what the operator should do.
 */
export function loadNative<T>(what: string, load: () => T, remedy = 'reinstall the dependencies'): T {
  try {
    return load();
  } catch (cause) {
    throw new CountersignError('INTERNAL', `the native ${what} did not load; ${remedy}`, { cause });
  }
}

/** Whether `f` is implemented in native code (an addon's function prints as `[native code]`). */
export function isNativeFunction(f: unknown): boolean {
  return typeof f === 'function' && /\{\s*\[native code\]\s*\}$/.test(Function.prototype.toString.call(f));
}
