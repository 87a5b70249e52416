// Writing a file below the data dir without following a symlink someone planted at its path:
// the content goes to a new file (O_EXCL, O_NOFOLLOW) renamed over the path, which replaces
// whatever link was there instead of writing through it. No node:crypto here: the CLI loads
// this with its kubeconfig, and a name unique per process and call is all O_EXCL needs.
import { closeSync, constants, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';

let written = 0;

/** Writes path as a new file of this mode; no mode or owner of what was there is kept. */
export function replaceFile(path: string, content: string, mode: number): void {
  const tmp = `${path}.tmp-${process.pid}-${++written}`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    fchmodSync(fd, mode); // the umask may have narrowed it
    writeFileSync(fd, content);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
