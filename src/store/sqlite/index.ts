// The embedded store: Kubernetes object semantics on one SQLite file.
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.ts';

export { SqliteStore, type SqliteStoreOptions };

export function openSqliteStore(o: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(o);
}
