// The tables, after kine: `log` is the history (row id = resourceVersion, one global revision),
// `current` points at the latest live row of each key, `owners` indexes ownerReferences for
// cascading deletion. Object JSON lives once, in `log.value`: text, or a BLOB when encryption at
// rest applies to the resource (encryption.ts).
import type Database from 'better-sqlite3';
import type { StoredValue } from './encryption.ts';

export const changeTypeCode = { ADDED: 1, MODIFIED: 2, DELETED: 3 } as const;
export const changeTypeName = { 1: 'ADDED', 2: 'MODIFIED', 3: 'DELETED' } as const;

/**
 * The layout and meaning of what this build writes, recorded in meta as `format` (a store from
 * before the record is format 1). A build that changes them so that an older one would misread
 * the store raises it (and migrates older stores where it opens them); an older build then
 * refuses the store instead of running on it (a downgrade used to run on silently).
 */
export const STORE_FORMAT = 1;

export class StoreFormatError extends Error {}

/** Refuses a store a newer build wrote, before anything is written to it. */
export function checkStoreFormat(db: Database.Database, path: string): void {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
  const recorded = hasMeta ? Number((db.prepare("SELECT v FROM meta WHERE k = 'format'").get() as { v: string } | undefined)?.v ?? 1) : 1;
  if (recorded > STORE_FORMAT) {
    throw new StoreFormatError(`${path}: written by a newer certsmith (store format ${recorded}; this one reads format ${STORE_FORMAT} and older): run that version or a later one, or restore state.db from a backup taken before the upgrade`);
  }
}

export function createSchema(db: Database.Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS log (
      id INTEGER PRIMARY KEY,
      grp TEXT NOT NULL,
      plural TEXT NOT NULL,
      ns TEXT NOT NULL,
      name TEXT NOT NULL,
      type INTEGER NOT NULL,
      prev INTEGER,
      value TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS log_key ON log (grp, plural, ns, name, id);
    CREATE TABLE IF NOT EXISTS current (
      grp TEXT NOT NULL,
      plural TEXT NOT NULL,
      ns TEXT NOT NULL,
      name TEXT NOT NULL,
      rev INTEGER NOT NULL,
      uid TEXT NOT NULL,
      touched INTEGER NOT NULL,
      PRIMARY KEY (grp, plural, ns, name)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS current_uid ON current (uid);
    CREATE TABLE IF NOT EXISTS owners (
      owner_uid TEXT NOT NULL,
      grp TEXT NOT NULL,
      plural TEXT NOT NULL,
      ns TEXT NOT NULL,
      name TEXT NOT NULL,
      PRIMARY KEY (owner_uid, grp, plural, ns, name)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS owners_dependent ON owners (grp, plural, ns, name);
    CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
  `);
}

export interface CurrentRow { rev: number; uid: string; value: StoredValue }
export interface KeyRow { ns: string; name: string; value: StoredValue }
export interface LogRow { id: number; grp: string; plural: string; ns: string; name: string; type: 1 | 2 | 3; value: StoredValue; prevValue: StoredValue | null }
export interface DependentRow { grp: string; plural: string; ns: string; name: string }

export function prepareStatements(db: Database.Database) {
  const snapshot = (nsFilter: boolean) => db.prepare<unknown[], KeyRow>(`
    SELECT l.ns, l.name, l.value FROM log l
    WHERE l.grp = ? AND l.plural = ? ${nsFilter ? 'AND l.ns = ?' : ''} AND (l.ns, l.name) > (?, ?) AND l.id <= ? AND l.type != 3
      AND NOT EXISTS (SELECT 1 FROM log x WHERE x.grp = l.grp AND x.plural = l.plural AND x.ns = l.ns AND x.name = l.name AND x.id > l.id AND x.id <= ?)
    ORDER BY l.ns, l.name`);
  return {
    getCurrent: db.prepare<[string, string, string, string], CurrentRow>(
      'SELECT c.rev, c.uid, l.value FROM current c JOIN log l ON l.id = c.rev WHERE c.grp = ? AND c.plural = ? AND c.ns = ? AND c.name = ?'),
    /** whether a key is live, without reading (and decrypting) its value as getCurrent does */
    currentExists: db.prepare<[string, string, string, string], { rev: number }>(
      'SELECT rev FROM current WHERE grp = ? AND plural = ? AND ns = ? AND name = ?'),
    insertLog: db.prepare<[number, string, string, string, string, number, number | null, StoredValue]>(
      'INSERT INTO log (id, grp, plural, ns, name, type, prev, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    upsertCurrent: db.prepare<[string, string, string, string, number, string, number]>(
      `INSERT INTO current (grp, plural, ns, name, rev, uid, touched) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (grp, plural, ns, name) DO UPDATE SET rev = excluded.rev, uid = excluded.uid, touched = excluded.touched`),
    /** a live object's next revision: its uid stays, so the uid index is not rewritten (half the cost of the upsert) */
    advanceCurrent: db.prepare<[number, number, string, string, string, string]>(
      'UPDATE current SET rev = ?, touched = ? WHERE grp = ? AND plural = ? AND ns = ? AND name = ?'),
    deleteCurrent: db.prepare<[string, string, string, string]>('DELETE FROM current WHERE grp = ? AND plural = ? AND ns = ? AND name = ?'),
    /** the latest log row of a key, live or deleted: the prev of the next row written for it */
    lastRev: db.prepare<[string, string, string, string], { id: number }>(
      'SELECT id FROM log WHERE grp = ? AND plural = ? AND ns = ? AND name = ? ORDER BY id DESC LIMIT 1'),
    uidExists: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM current WHERE uid = ? LIMIT 1'),
    keyOfUid: db.prepare<[string], DependentRow>('SELECT grp, plural, ns, name FROM current WHERE uid = ? LIMIT 1'),
    insertOwner: db.prepare<[string, string, string, string, string]>(
      'INSERT OR IGNORE INTO owners (owner_uid, grp, plural, ns, name) VALUES (?, ?, ?, ?, ?)'),
    deleteOwnersOf: db.prepare<[string, string, string, string]>('DELETE FROM owners WHERE grp = ? AND plural = ? AND ns = ? AND name = ?'),
    dependentsOf: db.prepare<[string], DependentRow>('SELECT grp, plural, ns, name FROM owners WHERE owner_uid = ? ORDER BY grp, plural, ns, name'),
    /** dependents naming an owner uid no live object has */
    orphanedDependents: db.prepare<[], DependentRow>('SELECT DISTINCT grp, plural, ns, name FROM owners o WHERE NOT EXISTS (SELECT 1 FROM current c WHERE c.uid = o.owner_uid) ORDER BY grp, plural, ns, name'),
    listAll: db.prepare<[string, string, string, string], KeyRow>(
      `SELECT c.ns, c.name, l.value FROM current c JOIN log l ON l.id = c.rev
       WHERE c.grp = ? AND c.plural = ? AND (c.ns, c.name) > (?, ?) ORDER BY c.ns, c.name`),
    listNamespace: db.prepare<[string, string, string, string, string], KeyRow>(
      `SELECT c.ns, c.name, l.value FROM current c JOIN log l ON l.id = c.rev
       WHERE c.grp = ? AND c.plural = ? AND c.ns = ? AND (c.ns, c.name) > (?, ?) ORDER BY c.ns, c.name`),
    // a scan (current has no index by namespace): only a terminating namespace's removals ask
    anyInNamespace: db.prepare<[string], { one: number }>('SELECT 1 AS one FROM current WHERE ns = ? LIMIT 1'),
    keysInNamespace: db.prepare<[string], DependentRow>(
      'SELECT grp, plural, ns, name FROM current WHERE ns = ? ORDER BY grp, plural, name'),
    snapshotAll: snapshot(false),
    snapshotNamespace: snapshot(true),
    logAfter: db.prepare<[number, string, string], LogRow>(
      `SELECT l.id, l.grp, l.plural, l.ns, l.name, l.type, l.value, p.value AS prevValue
       FROM log l LEFT JOIN log p ON p.id = l.prev WHERE l.id > ? AND l.grp = ? AND l.plural = ? ORDER BY l.id`),
    maxRev: db.prepare<[], { rev: number | null }>('SELECT MAX(id) AS rev FROM log'),
    begin: db.prepare('BEGIN'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    getMeta: db.prepare<[string], { v: string }>('SELECT v FROM meta WHERE k = ?'),
    setMeta: db.prepare<[string, string]>('INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v'),
    compactSuperseded: db.prepare<[number, number]>(
      'DELETE FROM log WHERE id IN (SELECT prev FROM log WHERE id > ? AND id <= ? AND prev IS NOT NULL)'),
    compactDeleted: db.prepare<[number, number]>('DELETE FROM log WHERE id > ? AND id <= ? AND type = 3'),
    expiredKeys: db.prepare<[string, string, number], DependentRow>(
      'SELECT grp, plural, ns, name FROM current WHERE grp = ? AND plural = ? AND touched < ?'),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
