// The program table: a command line that names a command builds the program with that command's
// module only; the help lists every command from the table's summaries, which must be what the
// modules register.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram, commandNamed } from './program.ts';

test('the command a command line names: its first operand after the global options', () => {
  assert.equal(commandNamed(['get', 'certificates', '-A']), 'get');
  assert.equal(commandNamed(['--kubeconfig', '/k', 'status', 'certificate', 'x']), 'status');
  assert.equal(commandNamed(['--kubeconfig=/k', 'apply', '-f', '-']), 'apply');
  assert.equal(commandNamed(['--request-timeout', '5s', 'get', 'certificates']), 'get');
  assert.equal(commandNamed(['help', 'get']), 'get');
  assert.equal(commandNamed(['--help']), undefined);
  assert.equal(commandNamed([]), undefined);
});

test('the help lists every command as its module registers it, in the same order, without loading any', async () => {
  const summary = await buildProgram([]);
  const help = summary.createHelp();
  const listed = summary.commands.map((c) => ({ term: help.subcommandTerm(c), description: c.description() }));
  for (const name of ['server', 'controller', 'apply', 'get', 'delete', 'renew', 'approve', 'deny', 'status', 'revoke', 'acme', 'doctor', 'webhook']) {
    assert.ok(listed.some((c) => c.term.split(' ')[0] === name), `${name} in the help`);
  }
  // each module's commands, as a command line that names one of them builds them
  const registered: typeof listed = [];
  for (const c of summary.commands) {
    if (registered.some((r) => r.term.split(' ')[0] === c.name())) continue;
    const one = await buildProgram([c.name(), '--help']);
    const oneHelp = one.createHelp();
    registered.push(...one.commands.map((r) => ({ term: oneHelp.subcommandTerm(r), description: r.description() })));
  }
  assert.deepEqual(listed, registered);
  // an unknown command gets them all, so the error can suggest the known ones
  assert.equal((await buildProgram(['nosuch'])).commands.length, summary.commands.length);
});

test('certsmith get loads the get command, not the server, controllers or other commands', () => {
  const repo = join(import.meta.dirname, '..', '..');
  const hook = 'export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.startsWith("file:")) process.stderr.write("ESM " + r.url + "\\n"); return r; }';
  const trace = 'data:text/javascript,' + encodeURIComponent(`import m from 'node:module'; m.register(${JSON.stringify('data:text/javascript,' + encodeURIComponent(hook))});`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', trace, join(repo, 'src', 'cli', 'main.ts'), 'get', '--help'], { cwd: repo, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Usage: certsmith get/);
  const loaded = [...r.stderr.matchAll(/^ESM file:\/\/\S+\/src\/cli\/([\w-]+)\.ts$/gm)].map((m) => m[1]);
  assert.ok(loaded.includes('get'), `loaded: ${loaded.join(' ')}`);
  for (const other of ['server', 'controller', 'doctor', 'acme-account', 'dashboard', 'webhook', 'apply']) {
    assert.ok(!loaded.includes(other), `get loaded cli/${other}.ts: ${loaded.join(' ')}`);
  }
});

test('certsmith --version and -V print the installed version (package.json\'s) and exit 0; the help lists the flag', async () => {
  const repo = join(import.meta.dirname, '..', '..');
  const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'src', 'cli', 'main.ts'), flag], { cwd: repo, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${version}\n`);
  }
  assert.match((await buildProgram([])).helpInformation(), /-V, --version +print the version of certsmith/);
});
