// The embedded store: Kubernetes object semantics on one SQLite file.
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.ts';

export { SqliteStore, type SqliteStoreOptions };
export { StoreFormatError } from './schema.ts';

/** What SQLite says of a file that is not, or no longer, a database it can read. */
const DAMAGED = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB']);

export class DamagedStoreError extends Error {}

export function openSqliteStore(o: SqliteStoreOptions): SqliteStore {
  try {
    return new SqliteStore(o);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    // SQLite's words alone ("file is not a database") name neither the file nor a way out
    if (typeof code === 'string' && DAMAGED.has(code)) {
      throw new DamagedStoreError(`${o.path}: ${(e as Error).message} (${code}): the store cannot be read and is left as it is; stop certsmith and restore state.db and its -wal file from a backup`);
    }
    throw e;
  }
}
