// The program table: a command line that names a command builds the program with that command's
// module only, and that command is the same as in the full program (the help lists every one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildProgram, commandNamed } from './program.ts';

test('the command a command line names: its first operand after the global options', () => {
  assert.equal(commandNamed(['get', 'certificates', '-A']), 'get');
  assert.equal(commandNamed(['--kubeconfig', '/k', 'status', 'certificate', 'x']), 'status');
  assert.equal(commandNamed(['--kubeconfig=/k', 'apply', '-f', '-']), 'apply');
  assert.equal(commandNamed(['--help']), undefined);
  assert.equal(commandNamed([]), undefined);
});

test('every command of the full program is built, the same, from a command line that names it', async () => {
  const full = await buildProgram([]);
  const names = full.commands.flatMap((c) => [c.name(), ...c.aliases()]);
  for (const name of ['server', 'controller', 'apply', 'get', 'delete', 'renew', 'approve', 'deny', 'status', 'revoke', 'acme', 'doctor', 'webhook']) {
    assert.ok(names.includes(name), `${name} in the full program`);
  }
  for (const c of full.commands) {
    const one = await buildProgram([c.name(), '--help']);
    const same = one.commands.find((o) => o.name() === c.name());
    assert.ok(same, `${c.name()} is built when the command line names it`);
    assert.equal(same.helpInformation(), c.helpInformation(), `${c.name()}: the same command either way`);
  }
  // an unknown command gets the full program, so the error can list and suggest the known ones
  assert.equal((await buildProgram(['nosuch'])).commands.length, full.commands.length);
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
