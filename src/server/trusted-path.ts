// A folder certsmith writes secrets below (--data-dir, --secrets-dir) is only as safe as the
// folders above it. Whoever owns one of them, or may write it without the sticky bit, can swap
// the folder for a symlink to anywhere while certsmith is stopped, and certsmith would then write
// the API token or private keys where that account reads them (or over root's files). Checked at
// start, as OpenSSH's StrictModes checks the folders above authorized_keys: refused, not repaired.
import { readlinkSync, statSync } from 'node:fs';
import { entryAt } from './data-dir.ts';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';

export class TrustedPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TrustedPathError';
  }
}

const me = () => process.getuid?.() ?? 0;
const trustedOwner = (uid: number) => uid === 0 || uid === me();
const STICKY = 0o1000;
/** links followed before a path is taken to loop */
const MAX_LINKS = 40;

/**
 * Refuses `path` (given to `flag`) when a folder on the way to it, or the folder itself, belongs
 * to an account other than root and certsmith's, or may be written by others without the sticky
 * bit, or when a symlink on the way belongs to such an account. Parts that do not exist yet are
 * made by certsmith, so they are fine. A symlink root or certsmith made is followed, and the
 * path it leads to is checked the same way.
 */
export function checkTrustedPath(path: string, flag: string): void {
  const given = resolve(path);
  const refuse = (why: string) => new TrustedPathError(`${flag} ${given}: ${why}; whoever controls it can redirect what certsmith writes there (chown root, chmod go-w, or choose a folder only root and certsmith's account control)`);
  let links = 0;
  // walk the path one part at a time from /, following links as the kernel does
  const parts = given.split(sep).filter(Boolean);
  let at: string = sep;
  while (parts.length) {
    const next = join(at, parts.shift()!);
    const st = entryAt(next);
    if (!st) return; // certsmith makes the rest
    if (st.isSymbolicLink()) {
      if (!trustedOwner(st.uid)) throw refuse(`${next} is a symlink owned by uid ${st.uid}`);
      if (++links > MAX_LINKS) throw refuse(`${next}: too many levels of symbolic links`);
      const target = readlinkSync(next);
      const to = isAbsolute(target) ? resolve(target) : resolve(dirname(next), target);
      parts.unshift(...to.split(sep).filter(Boolean));
      at = sep;
      continue;
    }
    const real = statSync(next);
    // a file on the way would fail later with a bare ENOTDIR or EEXIST
    if (!real.isDirectory()) throw new TrustedPathError(`${flag} ${given}: ${next} is not a folder`);
    if (!trustedOwner(real.uid)) throw refuse(`${next} is owned by uid ${real.uid}, and certsmith runs as uid ${me()}`);
    // the last part is the folder itself: its own mode is the data dir's or the mirror's business
    if (parts.length && real.mode & 0o022 && !(real.mode & STICKY)) throw refuse(`${next} is writable by others (mode 0${(real.mode & 0o7777).toString(8)}) without the sticky bit`);
    at = next;
  }
}
