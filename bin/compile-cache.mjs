// Where Node may keep certsmith's compiled code between runs (Node 22.1+), and never a folder
// another account can write: Node trusts a cache entry whose source length and checksum match,
// so whoever can plant one runs code as the next account to start certsmith (root, on a host).
// Node's own default, os.tmpdir()/node-compile-cache, is such a folder on a shared /tmp.
const fs = process.getBuiltinModule('node:fs');
const os = process.getBuiltinModule('node:os');
const path = process.getBuiltinModule('node:path');

/** A folder of ours: a real directory (not a symlink) of this account that no one else may write. */
function ours(dir, uid) {
  const st = fs.lstatSync(dir, { throwIfNoEntry: false });
  return !!st && st.isDirectory() && st.uid === uid && (st.mode & 0o022) === 0;
}

/**
 * $XDG_CACHE_HOME/certsmith, else ~/.cache/certsmith, made 0700; undefined (no cache) when it or
 * the folder it is in is not ours, when there is no home, or with NODE_COMPILE_CACHE set (Node
 * then uses that folder itself: the systemd unit's %C/certsmith).
 */
export function privateCompileCacheDir({ env = process.env, uid = process.getuid?.(), home = os.homedir() } = {}) {
  if (env.NODE_COMPILE_CACHE || uid === undefined) return undefined;
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : home && path.join(home, '.cache');
  if (!base) return undefined;
  const dir = path.join(base, 'certsmith');
  try {
    fs.mkdirSync(base, { recursive: true, mode: 0o700 });
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if (e.code !== 'EEXIST') return undefined;
  }
  return ours(base, uid) && ours(dir, uid) ? dir : undefined;
}
