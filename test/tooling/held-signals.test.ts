// A long-running command stopped while its bundle loads stops cleanly once loaded: bin/ holds
// SIGTERM/SIGINT for server, controller, webhook, dashboard and acmesolver only, and hands the
// signal to src/cli/signals.ts. Seen before: SIGTERM in the first 0.2 s of `certsmith server` exited 143.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { commandNamed, holdSignals, releaseHeldSignal } from '../../bin/held-signals.mjs';
import { listenForStop } from '../../src/cli/signals.ts';
import { silentLogger } from '../../src/runtime/logger.ts';

test('the command is the first argument that is neither an option nor --kubeconfig\'s value', () => {
  assert.equal(commandNamed(['server', '--data-dir', 'd']), 'server');
  assert.equal(commandNamed(['--kubeconfig', 'server', 'get', 'certificates']), 'get');
  assert.equal(commandNamed(['--kubeconfig=k', 'controller']), 'controller');
  assert.equal(commandNamed([]), undefined);
});

test('signals are held for long-running commands only, and the one that came is handed over', () => {
  for (const [args, held] of [[['server'], true], [['controller', '--leader-elect'], true], [['acmesolver'], true], [['webhook'], true], [['dashboard'], true], [['get', 'server'], false], [['--version'], false], [['renew', '--all'], false]] as const) {
    const proc = new EventEmitter() as unknown as NodeJS.Process;
    assert.equal(holdSignals(args, proc), held, args.join(' '));
    assert.equal(proc.listenerCount('SIGTERM'), held ? 1 : 0, args.join(' '));
    if (!held) continue;
    proc.emit('SIGTERM', 'SIGTERM');
    proc.emit('SIGINT', 'SIGINT');
    assert.equal(releaseHeldSignal(proc), 'SIGTERM', 'the first one');
    assert.equal(proc.listenerCount('SIGTERM') + proc.listenerCount('SIGINT'), 0, 'nothing held after the hand-over');
    assert.equal(releaseHeldSignal(proc), undefined, 'handed over once');
  }
});

test('listenForStop stops at once for a signal held while the bundle loaded, and waits when none came', async () => {
  assert.equal(holdSignals(['server']), true);
  try {
    process.emit('SIGTERM', 'SIGTERM');
    let stopped = false;
    await Promise.race([listenForStop().until(silentLogger).then(() => (stopped = true)), new Promise((r) => setTimeout(r, 200))]);
    assert.equal(stopped, true);
    assert.equal(process.listenerCount('SIGTERM'), 0, 'no listener left behind');
  } finally {
    releaseHeldSignal();
  }
  assert.equal(holdSignals(['server']), true);
  releaseHeldSignal();
  let stopped = false;
  const stop = listenForStop().until(silentLogger).then(() => (stopped = true));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(stopped, false, 'nothing held: it waits for a signal');
  process.emit('SIGINT', 'SIGINT');
  await stop;
});
