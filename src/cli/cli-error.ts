// An error the CLI reports as one line and a non-zero exit, never as a stack trace; and the
// line for running out of file descriptors, here (loaded by every command) because at EMFILE no
// further module could be loaded to say it.
import { readFileSync } from 'node:fs';

export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

/*
 * With `ulimit -n 128` the server exited at start with only "EMFILE: too many open files, open
 * '.../node_modules/...'", which names a file, not the limit. An idle server holds about 30
 * descriptors, and one more per connection (up to 1,024 on its listener).
 */
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
