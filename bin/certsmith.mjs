#!/bin/sh
":" //; exec node --no-memory-reducer "$0" "$@"
// The two lines above are read by sh, then by node: sh runs node with its flags on this file
// (node skips the #! line and reads the second as a string and a comment). `#!/usr/bin/env -S
// node FLAGS` would say the same, but BusyBox's env (Alpine, node's alpine images) and the BSDs'
// have no -S. --no-memory-reducer: V8's memory reducer, made for a browser tab going idle, runs
// full collections once allocation slows after a burst; a server's heap is mostly caches alive
// for the whole run, so they free little and cost the most when there is nothing to do: 6-9 of
// them in the minute after 100,000 issuances, about 10 % of a core. V8 reads the flag only at
// start; the Dockerfile's ENTRYPOINT passes the same flags, bench/compiled-run.ts reads them here.
// The certsmith command: runs the bundled JavaScript in dist/, which `npm ci` builds (the
// prepare script; `npm run build` rebuilds it). The TypeScript sources run through tsx only in
// development and tests (`npm run certsmith -- ARGS`), never here: compiling at every start
// made each command take most of a second.

// Built-ins through process.getBuiltinModule, not import: importing one as an ES module makes
// Node read all its exports, and node:fs's lazy ones cost every command line 2 ms on Node 20
// and 6 on Node 24 (scripts/build.mjs does the same for the bundle).
const { existsSync } = process.getBuiltinModule('node:fs');
const module = process.getBuiltinModule('node:module');

// first of all: a long-running command stopped while it loads stops cleanly once loaded
const { holdSignals } = await import('./held-signals.mjs');
holdSignals(process.argv.slice(2));

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('certsmith: the compiled build (dist/) is missing: run `npm run build` (`npm ci` runs it)\n');
  process.exit(1);
}
// Node 22.1+ keeps V8's compiled code on disk between runs: a command line starts often and
// briefly. Only in a folder no other account can write (compile-cache.mjs), never Node's default
// in the shared temp folder. Node 20 has no such API.
if (module.enableCompileCache) {
  const { privateCompileCacheDir } = await import('./compile-cache.mjs');
  const dir = privateCompileCacheDir();
  if (dir) module.enableCompileCache(dir);
}
await import(main.href);
