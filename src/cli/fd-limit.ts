// What running out of file descriptors says: the process's limit and how to raise it. With
// `ulimit -n 128` the server exited at start with only "EMFILE: too many open files, open
// '.../node_modules/...'", which names a file, not the limit. An idle server holds about 30
// descriptors, and one more per connection (up to 1,024 on its listener).
import { readFileSync } from 'node:fs';

/** The message for an EMFILE with the limit and what to raise; undefined for any other error. */
export function describeOpenFilesError(e: unknown, readLimits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): string | undefined {
  if (!(e instanceof Error) || (e as NodeJS.ErrnoException).code !== 'EMFILE') return undefined;
  let limit = '';
  try {
    // Linux: "Max open files  <soft>  <hard>  files"
    const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readLimits());
    if (m) limit = ` at most ${m[1]} files at once (soft limit; hard limit ${m[2]});`;
  } catch {
    // no /proc (macOS, the BSDs): the hint without the figures
  }
  return `${e.message}: the process may open${limit || ' no more files;'} raise the limit, e.g. \`ulimit -n 8192\` before starting certsmith, or LimitNOFILE=8192 in its systemd unit (the server needs about 30 descriptors and one per connection, up to 1,024 connections)`;
}
