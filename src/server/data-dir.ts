// The data dir holds what makes an API admin: the bearer token (full access to every
// private key the API stores), the serving key and the state database. Whoever can write
// the folder or replace the token owns the server, so both are checked before anything is
// read from them, and refused, not repaired: a folder that was open may already have been
// tampered with, and silently fixing its mode would hide that.
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, type Stats } from 'node:fs';
import { replaceFile } from './private-files.ts';
import { join } from 'node:path';

export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirError';
  }
}

function me(): number {
  return process.getuid?.() ?? 0;
}

const octal = (mode: number) => `0${(mode & 0o7777).toString(8)}`;

/**
 * The data dir must belong to the account certsmith runs as and be writable by it alone.
 * Its own path may be a symlink (the administrator's choice), so it is followed here.
 */
export function checkDataDir(dir: string): void {
  const st = statSync(dir);
  if (!st.isDirectory()) throw new DataDirError(`data dir ${dir} is not a directory`);
  if (st.uid !== me()) {
    throw new DataDirError(`data dir ${dir} is owned by uid ${st.uid}, but certsmith runs as uid ${me()}: the data dir must belong to the service user (chown it, or run certsmith as its owner)`);
  }
  if (st.mode & 0o022) {
    throw new DataDirError(`data dir ${dir} has mode ${octal(st.mode)}: it must not be writable by group or others (chmod 700 ${dir}), since whoever can write it can replace the API token`);
  }
  checkTokenFile(join(dir, 'token'));
  // SQLite follows a link and opens whatever is there: the store's files are the service user's own
  for (const name of ['state.db', 'state.db-wal', 'state.db-shm']) {
    const path = join(dir, name);
    const file = entryAt(path);
    if (file?.isSymbolicLink()) throw new DataDirError(`${path} is a symlink: certsmith follows no link below its data dir (put the file itself there)`);
    if (file && file.uid !== me()) {
      throw new DataDirError(`${path} is owned by uid ${file.uid}, but certsmith runs as uid ${me()}: the store's files must belong to the service user (chown it to the service user)`);
    }
  }
}

/** What is at `path` itself (a symlink is not followed), or undefined when nothing is. */
export function entryAt(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** A folder below the data dir: made when missing, refused when a symlink (or not a folder) is there. */
export function privateFolder(path: string): void {
  const st = entryAt(path);
  if (st?.isSymbolicLink()) throw new DataDirError(`${path} is a symlink: certsmith keeps its keys there and follows no link below its data dir (remove it)`);
  if (st && !st.isDirectory()) throw new DataDirError(`${path} is not a directory`);
  if (!st) mkdirSync(path, { mode: 0o700 });
}

/**
 * An existing token file must be a regular file (not a symlink) owned by the service user,
 * readable and writable by it alone. A missing one is fine: certsmith makes it.
 */
export function checkTokenFile(path: string): void {
  const st = entryAt(path);
  if (!st) return;
  if (st.isSymbolicLink()) throw new DataDirError(`API token ${path} is a symlink: it must be a regular file in the data dir (remove it and certsmith makes a new one)`);
  if (!st.isFile()) throw new DataDirError(`API token ${path} is not a regular file`);
  if (st.uid !== me()) {
    throw new DataDirError(`API token ${path} is owned by uid ${st.uid}, but certsmith runs as uid ${me()}: the token must belong to the service user (remove it and certsmith makes a new one)`);
  }
  if (st.mode & 0o077) {
    throw new DataDirError(`API token ${path} has mode ${octal(st.mode)}: it must be readable and writable by its owner only (chmod 600 ${path}, or remove it and certsmith makes a new one)`);
  }
}

/**
 * The bearer token of a data dir: random once, then reused so that kubeconfigs handed out stay
 * valid. An existing token is used only when it is the service user's and private (see
 * checkTokenFile): anyone who could plant one would be API admin.
 */
export function ensureAccessToken(dataDir: string): string {
  const path = join(dataDir, 'token');
  checkTokenFile(path);
  if (existsSync(path)) {
    const t = readFileSync(path, 'utf8').trim();
    if (t) return t;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('base64url');
  replaceFile(path, token + '\n', 0o600);
  return token;
}

/** a held data-dir lock: released when the process ends, however it ends */
export interface DataDirLock {
  release(): void;
}

/** held locks, so that a lock is never closed by the garbage collector while its server runs */
const heldLocks = new Set<{ close(): unknown }>();

/**
 * One server per data dir: two on one state database would both run --apply, rewrite the
 * kubeconfig and race each other's controllers. The lock is SQLite's exclusive lock on
 * DIR/server.lock (an fcntl lock on a database no one else opens): the kernel drops it when
 * the holder dies, kill -9 included, so there is no stale lock to clean up and no pid-reuse
 * guess, as a pid file with a liveness check would have. The holder's pid goes to
 * DIR/server.pid only to name it in the refusal.
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  // loaded here: every other command would pay for the native module
  const { default: Database } = await import('better-sqlite3');
  const lockPath = join(dir, 'server.lock');
  const pidPath = join(dir, 'server.pid');
  const db = new Database(lockPath, { timeout: 0 });
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('locking_mode = EXCLUSIVE');
    // the first write takes the exclusive lock; locking_mode EXCLUSIVE keeps it until close
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
    let holder = '';
    try {
      const pid = readFileSync(pidPath, 'utf8').trim();
      if (/^[0-9]+$/.test(pid)) holder = ` (pid ${pid})`;
    } catch {
      // the holder has not written its pid yet
    }
    throw new DataDirError(`data dir ${dir} is in use by another certsmith server${holder}: stop it first, or give this one its own --data-dir`);
  }
  replaceFile(pidPath, `${process.pid}\n`, 0o600);
  heldLocks.add(db);
  return {
    release() {
      if (!heldLocks.delete(db)) return;
      rmSync(pidPath, { force: true });
      db.close();
    },
  };
}
