// The embedded server's Unix socket (certsmith server's <data-dir>/api.sock), which a client on
// the same host uses instead of HTTPS: no TLS set-up, which is most of a short command's time.
// Without TLS nothing proves who listens there, so the client sends its token to a socket only
// when the filesystem does: no one but the socket's owner could have put it where it is.
import { lstatSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Whether `path` is a socket (not a symlink to one) owned by this process's account or root,
 * whose folder only that owner can write: in a folder open to others (/tmp), anyone could have
 * bound it to collect tokens, and another account could make a folder of its own at a path a
 * stopped server's data dir had.
 */
export function isPrivateSocket(path: string): boolean {
  try {
    const socket = lstatSync(path);
    if (!socket.isSocket()) return false;
    if (socket.uid !== 0 && socket.uid !== process.getuid?.()) return false;
    const folder = statSync(dirname(path));
    return folder.uid === socket.uid && (folder.mode & 0o022) === 0;
  } catch {
    return false;
  }
}
