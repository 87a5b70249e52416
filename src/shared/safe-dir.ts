// Directories below a folder certsmith writes to (--secrets-dir, --acme-http01-webroot), opened
// as descriptors and never through a symlink. Shared: the files controller and the webroot
// HTTP-01 solver both write below such folders.
//
// certsmith often runs as root while a less trusted account (--files-owner, e.g. www-data)
// reads the files. Anything that account can rename could be swapped for a symlink to a
// root-owned directory between certsmith's check and its use, so nothing here takes a path
// twice: each directory is opened once with O_NOFOLLOW|O_DIRECTORY, its owner and mode are
// set with fchown/fchmod on that descriptor, and its entries are reached through
// /proc/self/fd/N/<entry>, which resolves through the open descriptor rather than walking the
// path again (Node has no openat/mkdirat; this is the usual Linux stand-in for them).
//
// Limits, stated plainly: without /proc (non-Linux) entries are reached by path again, so a
// swap of a directory between opening it and using one of its entries is not excluded there;
// only the lstat-free O_NOFOLLOW opens remain. On Linux the remaining window is an entry
// replaced by another real directory between mkdir and open: that directory is then adopted
// (chowned to certsmith, 0750) before anything is written into it, so the account loses it.
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readdir, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK;
const VIA_PROC = existsSync('/proc/self/fd');
/** lineages are two levels below a version directory at most; anything deeper was not made by certsmith */
const MAX_REMOVE_DEPTH = 8;

/** A path below a folder certsmith manages that it will not use: a symlink, or not a directory where one belongs. */
export class UnsafePathError extends Error {
  constructor(readonly path: string, why: string) {
    super(`refusing ${path}: ${why}`);
    this.name = 'UnsafePathError';
  }
}

/** Owner and mode a directory is brought to; gid undefined leaves the group as it is. */
export interface DirAttrs {
  uid: number;
  gid?: number;
  mode: number;
}

/** The account certsmith runs as: the owner of every directory it makes. */
export function serviceUid(): number {
  return process.getuid?.() ?? 0;
}

export class SafeDir {
  /** `flag`: the server flag that names the root, for messages */
  private constructor(readonly path: string, private readonly handle: FileHandle, private readonly flag: string) {}

  /**
   * The managed folder itself (--secrets-dir, --acme-http01-webroot): its path is the
   * administrator's choice, so a symlink there is followed (once, here). Undefined when it does
   * not exist.
   */
  static async openRoot(path: string, flag = '--secrets-dir'): Promise<SafeDir | undefined> {
    try {
      return new SafeDir(path, await open(path, DIR_FLAGS), flag);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code === 'ENOTDIR') throw new UnsafePathError(path, `the ${flag} folder is not a directory`);
      throw e;
    }
  }

  /** `name` inside this directory, for calls that take a path, resolved through the descriptor. */
  entry(name: string): string {
    return VIA_PROC ? `/proc/self/fd/${this.handle.fd}/${name}` : join(this.path, name);
  }

  /** the path a person recognises, for messages only */
  shown(name: string): string {
    return join(this.path, name);
  }

  /** An error from a call on this directory's entries, its message naming the path a person recognises instead of /proc/self/fd/N. */
  shownError(e: unknown): unknown {
    if (e instanceof Error && VIA_PROC) e.message = e.message.split(`/proc/self/fd/${this.handle.fd}`).join(this.path);
    return e;
  }

  /**
   * The subdirectory `name`, opened without following a symlink; created with `create` when
   * missing and then brought to it (an existing one too). Undefined when missing and not
   * created. A symlink or a file in its place is refused, never followed or replaced.
   */
  async child(name: string, o: { create?: DirAttrs } = {}): Promise<SafeDir | undefined> {
    let handle: FileHandle;
    try {
      handle = await this.openChild(name);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || !o.create) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
      await mkdir(this.entry(name), { mode: o.create.mode }).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'EEXIST') throw this.shownError(err); });
      handle = await this.openChild(name);
    }
    const dir = new SafeDir(this.shown(name), handle, this.flag);
    if (o.create) {
      try {
        await dir.adopt(o.create);
      } catch (e) {
        await dir.close();
        throw e;
      }
    }
    return dir;
  }

  private async openChild(name: string): Promise<FileHandle> {
    try {
      return await open(this.entry(name), DIR_FLAGS | constants.O_NOFOLLOW);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // O_NOFOLLOW|O_DIRECTORY on a symlink gives ENOTDIR on Linux, ELOOP elsewhere
      if (code !== 'ENOTDIR' && code !== 'ELOOP') throw e;
      const st = await lstat(this.entry(name)).catch(() => undefined);
      throw new UnsafePathError(this.shown(name), st?.isSymbolicLink()
        ? `it is a symlink, and certsmith never follows symlinks below ${this.flag} (someone with write access to its parent may have swapped it)`
        : 'it is not a directory');
    }
  }

  /** Owner and mode set on the open descriptor (fchown/fchmod): a swapped path cannot redirect them. */
  async adopt(a: DirAttrs): Promise<void> {
    const st = await this.handle.stat();
    if (st.uid !== a.uid || (a.gid !== undefined && st.gid !== a.gid)) await this.handle.chown(a.uid, a.gid ?? -1);
    if ((st.mode & 0o7777) !== a.mode) await this.handle.chmod(a.mode);
  }

  async owner(): Promise<{ uid: number; gid: number; mode: number }> {
    const st = await this.handle.stat();
    return { uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 };
  }

  list(): Promise<string[]> {
    return readdir(this.entry('.'));
  }

  sync(): Promise<void> {
    return this.handle.sync();
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  /**
   * Removes the entry `name`: a symlink or file is unlinked (its target is never touched), a
   * directory is first taken over (owner certsmith, 0700, so nobody else can add or swap
   * entries while it is emptied) and then emptied the same way, one descriptor per level.
   */
  async remove(name: string, depth = 0): Promise<void> {
    let child: SafeDir | undefined;
    try {
      child = await this.child(name);
    } catch (e) {
      if (!(e instanceof UnsafePathError)) throw e;
      await unlink(this.entry(name)).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err; });
      return;
    }
    if (!child) return;
    try {
      if (depth >= MAX_REMOVE_DEPTH) throw new UnsafePathError(child.path, `more than ${MAX_REMOVE_DEPTH} levels deep; certsmith made nothing like it`);
      await child.adopt({ uid: serviceUid(), mode: 0o700 });
      for (const n of await child.list()) await child.remove(n, depth + 1);
    } finally {
      await child.close();
    }
    await rmdir(this.entry(name)).catch((err: NodeJS.ErrnoException) => { if (err.code !== 'ENOENT') throw err; });
  }
}

/** Opens the directories a task needs and closes every one of them afterwards, whatever happens. */
export async function withDirs<T>(fn: (keep: (d: SafeDir) => SafeDir) => Promise<T>): Promise<T> {
  const opened: SafeDir[] = [];
  try {
    return await fn((d) => {
      opened.push(d);
      return d;
    });
  } finally {
    for (const d of opened.reverse()) await d.close().catch(() => {});
  }
}
