// HTTP-01 through the user's own web server (certbot's and lego's "webroot"): the key
// authorization is written to DIR/.well-known/acme-challenge/TOKEN for nginx or Apache to serve,
// and removed afterwards. DIR comes from the server's --acme-http01-webroot flag only, never from
// a resource, because whoever names the folder chooses where certsmith (often root) writes.
//
// The web server's account usually owns the document root, so anything below DIR may be swapped
// for a symlink between a check and a use. Every level is therefore opened once with O_NOFOLLOW
// (SafeDir, as for --secrets-dir) and the file is created beside its final name with O_EXCL and
// renamed over it: nothing below DIR is followed, truncated or written through.
import { constants } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { SafeDir, serviceUid, withDirs } from '../../../shared/safe-dir.ts';

/**
 * ACME tokens are base64url (RFC 8555 §8.3). The token reaches us from a Challenge resource, which
 * anyone allowed to create Challenges can write, so it becomes a file name only when it is exactly that.
 */
const TOKEN = /^[A-Za-z0-9_-]{16,256}$/;

export class WebrootError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebrootError';
  }
}

function checkToken(token: string): void {
  if (!TOKEN.test(token)) throw new WebrootError(`refusing HTTP-01 token ${JSON.stringify(token.slice(0, 40))}: not a base64url ACME token`);
}

/**
 * Opens an existing directory as it is; only a missing one is created, 0755 so the web server can
 * traverse it. An existing .well-known belongs to the site and keeps its owner and mode.
 */
async function openOrCreate(parent: SafeDir, name: string): Promise<SafeDir> {
  const existing = await parent.child(name);
  if (existing) return existing;
  const made = await parent.child(name, { create: { uid: serviceUid(), mode: 0o755 } });
  if (!made) throw new WebrootError(`could not create ${parent.shown(name)}`);
  return made;
}

async function challengeDir<T>(root: string, create: boolean, fn: (dir: SafeDir) => Promise<T>): Promise<T | undefined> {
  return withDirs(async (keep) => {
    const top = await SafeDir.openRoot(root, '--acme-http01-webroot');
    if (!top) {
      if (!create) return undefined;
      throw new WebrootError(`--acme-http01-webroot ${root} does not exist`);
    }
    keep(top);
    const wk = create ? await openOrCreate(top, '.well-known') : await top.child('.well-known');
    if (!wk) return undefined;
    keep(wk);
    const ac = create ? await openOrCreate(wk, 'acme-challenge') : await wk.child('acme-challenge');
    if (!ac) return undefined;
    keep(ac);
    return fn(ac);
  });
}

/** Writes the key authorization to ROOT/.well-known/acme-challenge/TOKEN, mode 0644 whatever the umask. */
export async function presentWebroot(root: string, token: string, keyAuth: string): Promise<string> {
  checkToken(token);
  const written = await challengeDir(root, true, (dir) => writeToken(dir, token, keyAuth).catch((e) => { throw dir.shownError(e); }));
  if (!written) throw new WebrootError(`could not write the HTTP-01 token below ${root}`);
  return written;
}

async function writeToken(dir: SafeDir, token: string, keyAuth: string): Promise<string> {
  const tmp = `.${token}.certsmith-tmp`;
  await unlink(dir.entry(tmp)).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'ENOENT') throw e; });
  const fh = await open(dir.entry(tmp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    await fh.writeFile(keyAuth);
    await fh.chmod(0o644);
    await fh.sync();
  } finally {
    await fh.close();
  }
  // rename replaces whatever entry holds the name (a symlink included) without following it
  await rename(dir.entry(tmp), dir.entry(token));
  return dir.shown(token);
}

/** Removes the token file; a missing file or folder is already clean. */
export async function cleanUpWebroot(root: string, token: string): Promise<void> {
  checkToken(token);
  await challengeDir(root, false, async (dir) => {
    for (const name of [token, `.${token}.certsmith-tmp`]) {
      // unlink removes the entry itself, never what a symlink there points to
      await unlink(dir.entry(name)).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'ENOENT') throw e; });
    }
  });
}
