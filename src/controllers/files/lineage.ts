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
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, rename, rm, stat, symlink, lchown, chown, chmod } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, join } from 'node:path';
import type { LineageFile } from './lineage-files.ts';
import type { FileOwner } from './owner.ts';

const DIR_MODE = 0o700;
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

function versionsDir(ref: LineageRef): string {
  return join(ref.root, ref.namespace, `.${ref.name}.versions`);
}

function check(ref: LineageRef): void {
  if (!isSafeLineageName(ref.namespace, ref.name)) throw new Error(`refusing to mirror ${ref.namespace}/${ref.name}: not a Kubernetes name`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

async function fsyncPath(path: string): Promise<void> {
  const h = await open(path, constants.O_RDONLY);
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/** mkdir with our mode and owner; an existing directory is brought to them too */
async function ensureDir(path: string, owner: FileOwner | undefined): Promise<void> {
  await mkdir(path, { mode: DIR_MODE }).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; });
  await chmod(path, DIR_MODE);
  if (owner) await chown(path, owner.uid, owner.gid);
}

/**
 * The root is the user's: created (0700, owned by the files owner) when missing, but an
 * existing one keeps its mode, since --secrets-dir may point at a shared folder.
 */
async function ensureRoot(root: string, owner: FileOwner | undefined): Promise<void> {
  if (await exists(root)) return;
  await mkdir(root, { recursive: true, mode: DIR_MODE });
  await chmod(root, DIR_MODE);
  if (owner) await chown(root, owner.uid, owner.gid);
}

/** The hash part of the version the live symlink points at, when it points at one of ours that exists. */
export async function currentVersion(ref: LineageRef): Promise<{ version: string; hash: string } | undefined> {
  let target: string;
  try {
    target = await readlink(livePath(ref));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EINVAL') return undefined;
    throw e;
  }
  const version = basename(target);
  const m = VERSION.exec(version);
  if (!m || target !== join(`.${ref.name}.versions`, version)) return undefined;
  try {
    await stat(join(versionsDir(ref), version));
  } catch {
    return undefined;
  }
  return { version, hash: m[2] };
}

async function versionsOf(ref: LineageRef): Promise<{ name: string; seq: number }[]> {
  let names: string[];
  try {
    names = await readdir(versionsDir(ref));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return names.flatMap((name) => {
    const m = VERSION.exec(name);
    return m ? [{ name, seq: Number(m[1]) }] : [];
  }).sort((a, b) => b.seq - a.seq);
}

async function writeFileSynced(path: string, f: LineageFile, owner: FileOwner | undefined): Promise<void> {
  // 'wx' with the final mode: a key is never readable by others, not even for a moment
  const h = await open(path, 'wx', f.mode);
  try {
    await h.chmod(f.mode);
    if (owner) await h.chown(owner.uid, owner.gid);
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
 */
export async function publishLineage(ref: LineageRef, files: LineageFile[], hash: string, o: { owner?: FileOwner; keep?: number } = {}): Promise<PublishResult> {
  check(ref);
  const short = hash.slice(0, HASH_CHARS);
  const current = await currentVersion(ref);
  if (current?.hash === short) return { changed: false, version: current.version };

  const nsDir = join(ref.root, ref.namespace);
  const vDir = versionsDir(ref);
  const live = livePath(ref);
  await ensureRoot(ref.root, o.owner);
  await ensureDir(nsDir, o.owner);
  await ensureDir(vDir, o.owner);
  const liveStat = await lstat(live).catch(() => undefined);
  if (liveStat && !liveStat.isSymbolicLink()) throw new Error(`${live} exists and is not a symlink certsmith made; not replacing it`);

  const versions = await versionsOf(ref);
  const version = `${(versions[0]?.seq ?? 0) + 1}-${short}`;
  const tmp = join(vDir, `.tmp-${randomBytes(6).toString('hex')}`);
  await ensureDir(tmp, o.owner);
  try {
    for (const f of files) await writeFileSynced(join(tmp, f.name), f, o.owner);
    await fsyncPath(tmp);
    await rename(tmp, join(vDir, version));
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    throw e;
  }
  await fsyncPath(vDir);

  const tmpLink = join(nsDir, `.${ref.name}.link-${randomBytes(6).toString('hex')}`);
  await symlink(join(`.${ref.name}.versions`, version), tmpLink);
  try {
    if (o.owner) await lchown(tmpLink, o.owner.uid, o.owner.gid);
    await rename(tmpLink, live);
  } catch (e) {
    await rm(tmpLink, { force: true });
    throw e;
  }
  await fsyncPath(nsDir);
  await prune(ref, version, o.keep ?? 3);
  return { changed: true, version };
}

/** Keeps the newest `keep` versions (the live one always) and removes leftovers of interrupted writes. */
async function prune(ref: LineageRef, live: string, keep: number): Promise<void> {
  const vDir = versionsDir(ref);
  const versions = await versionsOf(ref);
  const kept = new Set(versions.slice(0, Math.max(1, keep)).map((v) => v.name).concat(live));
  for (const v of versions) if (!kept.has(v.name)) await rm(join(vDir, v.name), { recursive: true, force: true });
  for (const name of await readdir(vDir)) if (name.startsWith('.tmp-')) await rm(join(vDir, name), { recursive: true, force: true });
}

/**
 * Removes the live symlink and every version; false when there was nothing of ours. A real
 * directory at the live path was not made by certsmith and is left alone.
 */
export async function removeLineage(ref: LineageRef): Promise<boolean> {
  check(ref);
  const live = livePath(ref);
  const st = await lstat(live).catch(() => undefined);
  const hadVersions = await exists(versionsDir(ref));
  if (st && !st.isSymbolicLink()) return false;
  if (!st && !hadVersions) return false;
  if (st) await rm(live, { force: true });
  await rm(versionsDir(ref), { recursive: true, force: true });
  await fsyncPath(join(ref.root, ref.namespace)).catch(() => {});
  return true;
}

/** Every lineage on disk, so that files of Certificates deleted while certsmith was down are found. */
export async function listLineages(root: string): Promise<{ namespace: string; name: string }[]> {
  const out: { namespace: string; name: string }[] = [];
  let namespaces: string[];
  try {
    namespaces = await readdir(root);
  } catch {
    return out;
  }
  for (const namespace of namespaces) {
    if (!SAFE_NAME.test(namespace)) continue;
    let entries: string[];
    try {
      entries = await readdir(join(root, namespace));
    } catch {
      continue;
    }
    for (const e of entries) {
      const m = /^\.(.+)\.versions$/.exec(e);
      if (m && isSafeLineageName(namespace, m[1])) out.push({ namespace, name: m[1] });
    }
  }
  return out;
}
