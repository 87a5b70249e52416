// One Secret's files on disk, laid out like certbot's live/archive so readers never see a
// certificate from one issuance next to a key from another:
//
//   DIR/<ns>/<name>                      -> .<name>.versions/<seq>-<hash>   (symlink)
//   DIR/<ns>/.<name>.versions/<seq>-<hash>/{tls.crt,tls.key,fullchain.pem,...}
//
// A version directory is complete and fsynced before the symlink moves to it, and the move is
// a rename() of a fresh symlink over the old one, which readers see as one atomic step. A
// version is never changed once published, so a reader that resolved the link keeps reading
// one consistent set; the previous versions stay for readers still holding an old path.
//
// Ownership: every directory and file belongs to the account certsmith runs as; with a files
// owner, their group is the owner's and readable by it (folders 0750, keys 0640, certificates
// 0644), else folders are 0700 and keys 0600. So that account can read what it serves but
// change or rename nothing, and no path below DIR is ever followed through a symlink (see
// safe-dir.ts for how, and for the limits).
import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile, readlink, rename, symlink, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, join } from 'node:path';
import type { LineageFile } from './lineage-files.ts';
import type { FileOwner } from '../../shared/file-owner.ts';
import { SafeDir, UnsafePathError, serviceUid, withDirs, type DirAttrs } from '../../shared/safe-dir.ts';

export { UnsafePathError };

const VERSION = /^(\d+)-([0-9a-f]+)$/;
/** characters of the content hash kept in a version's name */
const HASH_CHARS = 16;
/** Kubernetes names: DNS labels (namespaces) and subdomains (Secrets); nothing that walks out of DIR */
const SAFE_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface LineageRef {
  root: string;
  namespace: string;
  name: string;
}

export function isSafeLineageName(namespace: string, name: string): boolean {
  return SAFE_NAME.test(namespace) && SAFE_NAME.test(name) && !name.includes('..');
}

export function livePath(ref: LineageRef): string {
  return join(ref.root, ref.namespace, ref.name);
}

function versionsName(name: string): string {
  return `.${name}.versions`;
}

function check(ref: LineageRef): void {
  if (!isSafeLineageName(ref.namespace, ref.name)) throw new Error(`refusing to mirror ${ref.namespace}/${ref.name}: not a Kubernetes name`);
}

/** What every directory below DIR is brought to: ours, readable by the files owner's group only. */
export function dirAttrs(owner: FileOwner | undefined): DirAttrs {
  return owner ? { uid: serviceUid(), gid: owner.gid, mode: 0o750 } : { uid: serviceUid(), mode: 0o700 };
}

/**
 * DIR itself, created like the directories below it when missing. An existing one keeps its
 * owner and mode (--secrets-dir may point at a shared folder), except one an earlier certsmith
 * handed to the files owner: writable by that account, it would let the account rename the
 * namespace directories. One of ours that the files owner cannot enter (made 0700 before
 * --files-owner was given) gets the owner's group with read and search, never write.
 */
async function openRoot(root: string, owner: FileOwner | undefined, create: boolean): Promise<SafeDir | undefined> {
  const existing = await SafeDir.openRoot(root);
  if (!existing && !create) return undefined;
  const attrs = dirAttrs(owner);
  if (existing) {
    if (!owner) return existing;
    const st = await existing.owner();
    if (owner.uid !== attrs.uid && st.uid === owner.uid) {
      await existing.adopt(attrs);
    } else if (st.uid === attrs.uid && !(st.mode & 0o001) && (st.gid !== owner.gid || (st.mode & 0o070) !== 0o050)) {
      await existing.adopt({ uid: attrs.uid, gid: owner.gid, mode: (st.mode & ~0o070) | 0o050 });
    }
    return existing;
  }
  await mkdir(root, { recursive: true, mode: attrs.mode });
  const made = await SafeDir.openRoot(root);
  if (!made) throw new Error(`${root} vanished right after it was created`);
  await made.adopt(attrs);
  return made;
}

async function lstatOrUndefined(path: string) {
  try {
    return await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** The live version in an opened namespace directory, when the live symlink points at one of ours that exists. */
async function liveVersionIn(ns: SafeDir, name: string): Promise<{ version: string; hash: string } | undefined> {
  let target: string;
  try {
    target = await readlink(ns.entry(name));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EINVAL') return undefined;
    throw e;
  }
  const version = basename(target);
  const m = VERSION.exec(version);
  if (!m || target !== join(versionsName(name), version)) return undefined;
  const st = await lstatOrUndefined(ns.entry(join(versionsName(name), version)));
  return st?.isDirectory() ? { version, hash: m[2] } : undefined;
}

/** fn with the namespace folder and the live version, when the live symlink points at one of ours that exists. */
function withLiveVersion<T>(ref: LineageRef, fn: (ns: SafeDir, live: { version: string; hash: string }, keep: (d: SafeDir) => SafeDir) => Promise<T | undefined>): Promise<T | undefined> {
  check(ref);
  return withDirs(async (keep) => {
    const root = await SafeDir.openRoot(ref.root);
    const ns = root && await keep(root).child(ref.namespace);
    const live = ns && await liveVersionIn(keep(ns), ref.name);
    return ns && live ? fn(ns, live, keep) : undefined;
  });
}

/** The hash part of the version the live symlink points at, when it points at one of ours that exists. */
export function currentVersion(ref: LineageRef): Promise<{ version: string; hash: string } | undefined> {
  return withLiveVersion(ref, async (_ns, live) => live);
}

/**
 * The live version's tls.crt and ca.crt (undefined when it has none), read without following a
 * symlink: what the files serve now, to compare with what is about to replace it.
 */
export function liveCertificates(ref: LineageRef): Promise<{ tls: string; ca?: string } | undefined> {
  return withLiveVersion(ref, async (ns, live, keep) => {
    const versions = await ns.child(versionsName(ref.name));
    const dir = versions && await keep(versions).child(live.version);
    if (!dir) return undefined;
    const read = async (name: string) => {
      try {
        return await readFile(keep(dir).entry(name), { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw dir.shownError(e);
      }
    };
    const tls = await read('tls.crt');
    return tls === undefined ? undefined : { tls, ca: await read('ca.crt') };
  });
}

async function versionsOf(dir: SafeDir): Promise<{ name: string; seq: number }[]> {
  return (await dir.list()).flatMap((name) => {
    const m = VERSION.exec(name);
    return m ? [{ name, seq: Number(m[1]) }] : [];
  }).sort((a, b) => b.seq - a.seq);
}

async function writeFileSynced(dir: SafeDir, f: LineageFile, owner: FileOwner | undefined): Promise<void> {
  // created exclusively, never through a symlink, and group-readable only once it has the
  // owner's group: a key is never readable by others, not even for a moment
  const h = await open(dir.entry(f.name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, f.mode);
  try {
    await h.chmod(f.mode);
    if (owner) {
      // the files stay certsmith's: an owner could rewrite (or chmod) files it owned
      await h.chown(serviceUid(), owner.gid);
      await h.chmod(f.mode | 0o040);
    }
    await h.writeFile(f.content);
    await h.sync();
  } finally {
    await h.close();
  }
}

export interface PublishResult {
  changed: boolean;
  version: string;
}

/**
 * Makes `files` the live version, unless the live version already has this hash. Callers
 * must not publish the same lineage concurrently (the work queue gives one worker per key).
 * The directories are brought to their owner and mode every time, so a layout left by an
 * earlier certsmith (directories owned by the files owner) is taken back.
 */
export async function publishLineage(ref: LineageRef, files: LineageFile[], hash: string, o: { owner?: FileOwner; keep?: number } = {}): Promise<PublishResult> {
  check(ref);
  const short = hash.slice(0, HASH_CHARS);
  const attrs = dirAttrs(o.owner);
  return withDirs(async (keep) => {
    const root = keep((await openRoot(ref.root, o.owner, true))!);
    const ns = keep((await root.child(ref.namespace, { create: attrs }))!);
    const versions = keep((await ns.child(versionsName(ref.name), { create: attrs }))!);
    const current = await liveVersionIn(ns, ref.name);
    // a live version left by an earlier certsmith in a folder the files owner owns could have
    // been changed by that account: the same files are written again, as a version of ours
    if (current?.hash === short && (await lstat(versions.entry(current.version))).uid === attrs.uid) return { changed: false, version: current.version };

    const liveStat = await lstatOrUndefined(ns.entry(ref.name));
    if (liveStat && !liveStat.isSymbolicLink()) throw new Error(`${livePath(ref)} exists and is not a symlink certsmith made; not replacing it`);

    const existing = await versionsOf(versions);
    const version = `${(existing[0]?.seq ?? 0) + 1}-${short}`;
    const tmpName = `.tmp-${randomBytes(6).toString('hex')}`;
    const tmp = (await versions.child(tmpName, { create: attrs }))!;
    try {
      for (const f of files) await writeFileSynced(tmp, f, o.owner);
      await tmp.sync();
      await tmp.close();
      await rename(versions.entry(tmpName), versions.entry(version));
    } catch (e) {
      await tmp.close().catch(() => {});
      await versions.remove(tmpName).catch(() => {});
      throw e;
    }
    await versions.sync();

    // the link stays certsmith's: the files owner reads through it and has no reason to own it.
    // Its temporary name leaves the lineage's out, so that any name that fits ".NAME.versions" fits.
    const tmpLink = `.link-${randomBytes(6).toString('hex')}`;
    try {
      await symlink(join(versionsName(ref.name), version), ns.entry(tmpLink));
      try {
        await rename(ns.entry(tmpLink), ns.entry(ref.name));
      } catch (e) {
        await unlink(ns.entry(tmpLink)).catch(() => {});
        throw e;
      }
    } catch (e) {
      // the version never went live: it goes, or each retry would leave one more copy of the key
      await versions.remove(version).catch(() => {});
      throw e;
    }
    await ns.sync();
    await prune(versions, version, o.keep ?? 3);
    return { changed: true, version };
  });
}

/** Keeps the newest `keep` versions (the live one always) and removes leftovers of interrupted writes. */
async function prune(versions: SafeDir, live: string, keep: number): Promise<void> {
  const all = await versionsOf(versions);
  const kept = new Set(all.slice(0, Math.max(1, keep)).map((v) => v.name).concat(live));
  for (const v of all) if (!kept.has(v.name)) await versions.remove(v.name);
  for (const name of await versions.list()) if (name.startsWith('.tmp-')) await versions.remove(name);
}

/**
 * Removes the live symlink and every version; false when there was nothing of ours. A real
 * directory at the live path was not made by certsmith and is left alone; a namespace
 * directory replaced by a symlink is refused (UnsafePathError), never followed.
 */
export async function removeLineage(ref: LineageRef): Promise<boolean> {
  check(ref);
  return withDirs(async (keep) => {
    const root = await SafeDir.openRoot(ref.root);
    if (!root) return false;
    const ns = await keep(root).child(ref.namespace);
    if (!ns) return false;
    keep(ns);
    const st = await lstatOrUndefined(ns.entry(ref.name));
    const hadVersions = !!(await lstatOrUndefined(ns.entry(versionsName(ref.name))));
    if (st && !st.isSymbolicLink()) return false;
    if (!st && !hadVersions) return false;
    if (st) await unlink(ns.entry(ref.name)).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'ENOENT') throw e; });
    await ns.remove(versionsName(ref.name));
    await ns.sync().catch(() => {});
    return true;
  });
}

/** Whether the lineage has files on disk (its versions folder), looked up without following a symlink. */
export async function lineageExists(ref: LineageRef): Promise<boolean> {
  return withDirs(async (keep) => {
    const root = await SafeDir.openRoot(ref.root).catch(() => undefined);
    if (!root) return false;
    const ns = await keep(root).child(ref.namespace).catch(() => undefined);
    if (!ns) return false;
    keep(ns);
    return !!(await lstatOrUndefined(ns.entry(versionsName(ref.name))));
  });
}

/**
 * Every lineage on disk, so that files no Certificate claims are found (and kept, with a
 * warning: see the files controller). A namespace entry that is a symlink is skipped: its lineages are not ours to find.
 */
export async function listLineages(root: string): Promise<{ namespace: string; name: string }[]> {
  const out: { namespace: string; name: string }[] = [];
  await withDirs(async (keep) => {
    const dir = await SafeDir.openRoot(root).catch(() => undefined);
    if (!dir) return;
    for (const namespace of await keep(dir).list()) {
      if (!SAFE_NAME.test(namespace)) continue;
      const ns = await dir.child(namespace).catch(() => undefined);
      if (!ns) continue;
      try {
        for (const e of await ns.list()) {
          const m = /^\.(.+)\.versions$/.exec(e);
          if (m && isSafeLineageName(namespace, m[1])) out.push({ namespace, name: m[1] });
        }
      } finally {
        await ns.close();
      }
    }
  });
  return out;
}
