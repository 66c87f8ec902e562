/** The vault master key: from COUNTERSIGN_MASTER_KEY, else from (or newly into) <dataDir>/master.key. */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { hexToBytes } from '../../shared/encoding.js';
import { CountersignError } from '../../shared/errors.js';

export const MASTER_KEY_ENV = 'COUNTERSIGN_MASTER_KEY';
export const MASTER_KEY_FILE = 'master.key';

const HEX64_RE = /^[0-9a-fA-F]{64}$/;
// Standard base64 of 32 bytes is 43 characters plus one '='.
const BASE64_32_RE = /^[A-Za-z0-9+/]{43}=$/;

function configError(field: string, reason: string, cause?: unknown): CountersignError {
  return new CountersignError('CONFIG_INVALID', `${field}: ${reason}`, { field, cause });
}

/** 64 hex digits or standard base64 of exactly 32 bytes; surrounding whitespace is ignored. */
function parseEnvKey(value: string): Uint8Array {
  const v = value.trim();
  if (HEX64_RE.test(v)) return hexToBytes(v, MASTER_KEY_ENV);
  if (BASE64_32_RE.test(v)) {
    const buf = Buffer.from(v, 'base64');
    const key = Uint8Array.from(buf);
    buf.fill(0);
    if (key.length === 32) return key;
  }
  throw configError(MASTER_KEY_ENV, 'must be 64 hex digits or the base64 encoding of 32 bytes');
}

/** Reads at most `max` bytes from an open file. */
function readUpTo(fd: number, max: number): Buffer {
  const buf = Buffer.alloc(max);
  let off = 0;
  for (;;) {
    const n = readSync(fd, buf, off, max - off, null);
    if (n === 0 || off + n >= max) return buf.subarray(0, off + n);
    off += n;
  }
}

/** The key in `path`, or undefined when there is no such file. */
function readKeyFile(path: string): Uint8Array | undefined {
  let fd: number;
  try {
    // O_NOFOLLOW: the key file itself must not be a symlink someone else could point elsewhere.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw configError(MASTER_KEY_FILE, `cannot open ${path}`, cause);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw configError(MASTER_KEY_FILE, `${path} is not a regular file`);
    if ((st.mode & 0o177) !== 0) {
      throw configError(
        MASTER_KEY_FILE,
        `${path} has permissions ${(st.mode & 0o777).toString(8).padStart(4, '0')}; it must be 0600 or narrower (chmod 600)`,
      );
    }
    // 64 hex digits and an optional trailing newline; read one byte more to notice longer files.
    const raw = readUpTo(fd, 66);
    try {
      const text = raw.toString('latin1').replace(/\r?\n$/, '');
      if (!HEX64_RE.test(text)) {
        throw configError(MASTER_KEY_FILE, `${path} must hold exactly 64 hex digits (a 32-byte key)`);
      }
      return hexToBytes(text, MASTER_KEY_FILE);
    } finally {
      raw.fill(0);
    }
  } finally {
    closeSync(fd);
  }
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a fresh key to a private temporary file, makes it durable, then hard-links it into place:
 * link(2) never replaces an existing file, so two processes racing at first start agree on one key and
 * nobody ever reads a half-written file. Returns false when another process won the race.
 */
function createKeyFile(dataDir: string, path: string): boolean {
  const tmp = join(dataDir, `.${MASTER_KEY_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const key = randomBytes(32);
  const text = Buffer.from(`${key.toString('hex')}\n`, 'latin1');
  key.fill(0);
  const fd = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    // The umask can only narrow the mode; fchmod makes it exactly 0600 regardless.
    fchmodSync(fd, 0o600);
    let off = 0;
    while (off < text.length) off += writeSync(fd, text, off, text.length - off);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  } finally {
    text.fill(0);
  }
  closeSync(fd);
  try {
    linkSync(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    unlinkSync(tmp);
    fsyncDir(dataDir);
  }
}

/**
 * The 32-byte master key. `envValue` (COUNTERSIGN_MASTER_KEY) wins when set; otherwise the key is read
 * from `<dataDir>/master.key`, created on first start (0600, fsynced with its directory). A malformed
 * value or a key file readable by others is CONFIG_INVALID. The caller zeroes the result.
 */
export function loadOrCreateMasterKey(opts: { dataDir: string; envValue?: string | undefined }): Uint8Array {
  if (opts.envValue !== undefined) return parseEnvKey(opts.envValue);
  const path = join(opts.dataDir, MASTER_KEY_FILE);
  try {
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw configError('dataDir', `cannot create ${opts.dataDir}`, cause);
  }
  const existing = readKeyFile(path);
  if (existing !== undefined) return existing;
  try {
    createKeyFile(opts.dataDir, path);
  } catch (cause) {
    throw configError(MASTER_KEY_FILE, `cannot create ${path}`, cause);
  }
  // Read back what is on disk, whether this process or a concurrent one created it.
  const created = readKeyFile(path);
  if (created === undefined)
    throw configError(MASTER_KEY_FILE, `${path} vanished right after it was created`);
  return created;
}
