// The control connection to the HTTP-01 keeper drops while certsmith lives (issue 20): a present
// in flight is not taken as done, the connection is replaced (the same keeper when it is alive,
// else a new one), and the new connection is given every token still presented before anything
// else. A fake keeper listens on the control socket, so the drops happen exactly when the test says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startHTTP01Keeper } from './http01-keeper.ts';
import { fakeKeeper } from './testing/fake-keeper.ts';
import { getToken } from './testing/http01-probe.ts';
import { freePort } from '../../../../test/rig/ports.ts';

async function until(what: string, fn: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(what);
}

test('a present whose keeper connection drops before the acknowledgement is not taken as done', async () => {
  const port = await freePort();
  const keeper = await fakeKeeper(port, (conn, msg) => conn === 0 && msg.op === 'present' && msg.token === 'lost');
  const k = await startHTTP01Keeper({ host: '127.0.0.1', port, reconnectDelayMs: 10 });
  await k.present('a', 'a.k');
  const outcome = await Promise.resolve(k.present('lost', 'lost.k')).then(() => 'resolved', (e: Error) => `rejected: ${e.message}`);
  if (outcome === 'resolved') {
    // retried on a new connection: then a keeper must really have been given the token
    assert.ok(keeper.acked.some((m) => m.op === 'present' && m.token === 'lost'), 'present resolved though no keeper acknowledged it');
    assert.deepEqual(keeper.told(1).slice(0, 2), ['present a', 'present lost'], 'the new connection is first given every token still presented');
  }
  await k.close();
  await keeper.die();
});

test('a lost keeper connection is replaced at once, given every token still presented, and serves later presents', async () => {
  const port = await freePort();
  const keeper = await fakeKeeper(port);
  const k = await startHTTP01Keeper({ host: '127.0.0.1', port, reconnectDelayMs: 10 });
  await k.present('a', 'a.k');
  await k.present('b', 'b.k');
  await k.cleanUp('a');
  keeper.conns[0].sock.destroy(); // the keeper closed our connection; it is still alive
  // replaced without waiting for the next present: the keeper gets b back at once
  await until('a second connection that is given b again', () => keeper.told(1).includes('present b'));
  await k.present('c', 'c.k');
  assert.deepEqual(keeper.told(1), ['present b', 'present c'], 'b (still presented) before c; a was cleaned up');
  await k.close();
  await keeper.die();
});

test('a keeper that died is replaced by a new keeper process, which serves every token still presented', async () => {
  const port = await freePort();
  const keeper = await fakeKeeper(port);
  const k = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 10_000, reconnectDelayMs: 10 });
  await k.present('a', 'a.k');
  await k.present('b', 'b.k');
  await k.cleanUp('a');
  await keeper.die();
  await until('a new keeper serving b', () => getToken(port, 'b').then((r) => r.status === 200 && r.body === 'b.k', () => false));
  assert.equal((await getToken(port, 'a')).status, 404);
  await k.present('c', 'c.k');
  assert.equal((await getToken(port, 'c')).body, 'c.k');
  await k.cleanUp('b');
  await k.cleanUp('c');
  await k.close(); // nothing served: the new keeper exits
  await until('new keeper gone', () => getToken(port, 'x').then(() => false, () => true));
});

test('replacing a keeper is bounded: with the port taken, a present fails after the tries; the next one tries again', async () => {
  const port = await freePort();
  const keeper = await fakeKeeper(port);
  const k = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 10_000, reconnectTries: 3, reconnectDelayMs: 10 });
  await k.present('a', 'a.k');
  // the keeper dies and something else takes its port: no keeper can be started
  const squatter = http.createServer((_, res) => res.end('squatter'));
  await new Promise<void>((r) => squatter.listen(port, '127.0.0.1', () => r()));
  await keeper.die();
  await assert.rejects(Promise.resolve(k.present('b', 'b.k')), /EADDRINUSE|keeper/);
  await new Promise((r) => squatter.close(r));
  // the port is free again: the next operation starts a keeper, which is given a first
  await k.present('c', 'c.k');
  assert.equal((await getToken(port, 'a')).body, 'a.k');
  assert.equal((await getToken(port, 'c')).body, 'c.k');
  assert.equal((await getToken(port, 'b')).status, 404, 'a present that failed is not served later');
  await k.cleanUp('a');
  await k.cleanUp('c');
  await k.close();
  await until('new keeper gone', () => getToken(port, 'x').then(() => false, () => true));
});
