// --files-owner: the account (and group) that reads the mirrored files, so that e.g. a web
// server running as its own user can read a key without certsmith running as that user; the
// files get its group, group-readable, and stay certsmith's. Shared: the CLI checks the flag at
// start, the files controller applies it.
import { readFileSync } from 'node:fs';

export interface FileOwner {
  uid: number;
  gid: number;
  /** as given, for messages and for telling versions written for another owner apart */
  text: string;
}

function lookup(file: string, name: string, field: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const parts = line.split(':');
    if (parts[0] === name && parts[field] !== undefined && /^\d+$/.test(parts[field])) return Number(parts[field]);
  }
  return undefined;
}

function idOf(part: string, file: string, field: number, what: string, whole: string): number {
  if (/^\d+$/.test(part)) return Number(part);
  const id = lookup(file, part, field);
  if (id === undefined) throw new Error(`files owner "${whole}": no ${what} named "${part}" in ${file}`);
  return id;
}

/**
 * "uid:gid", "user:group" or "user" (the user's primary group), as chown takes it. Names are
 * resolved from /etc/passwd and /etc/group once, at start.
 */
export function parseFileOwner(text: string, files = { passwd: '/etc/passwd', group: '/etc/group' }): FileOwner {
  const m = /^([^:\s]+)(?::([^:\s]+))?$/.exec(text.trim());
  if (!m) throw new Error(`files owner "${text}": expected USER[:GROUP] or UID:GID`);
  const uid = idOf(m[1], files.passwd, 2, 'user', text);
  let gid: number;
  if (m[2] !== undefined) {
    gid = idOf(m[2], files.group, 2, 'group', text);
  } else {
    const primary = /^\d+$/.test(m[1]) ? undefined : lookup(files.passwd, m[1], 3);
    if (primary === undefined) throw new Error(`files owner "${text}": give the group too, e.g. ${m[1]}:${m[1]}`);
    gid = primary;
  }
  return { uid, gid, text: `${uid}:${gid}` };
}
