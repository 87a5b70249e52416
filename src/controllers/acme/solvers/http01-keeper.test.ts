// The HTTP-01 keeper outlives the certsmith that started it, is adopted by the next one, and
// goes away when released with nothing to serve or when nobody adopts it within the grace period.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { keeperSocketPath, startHTTP01Keeper } from './http01-keeper.ts';
import { getToken } from './testing/http01-probe.ts';
import { freePort } from '../../../../test/rig/ports.ts';

async function until(what: string, fn: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(what);
}

test('a token survives the controller that presented it; the next one adopts the keeper; release with no token stops it', async () => {
  const port = await freePort();
  const first = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 10_000 });
  await first.present('tok1', 'tok1.thumb');
  assert.deepEqual(await getToken(port, 'tok1'), { status: 200, body: 'tok1.thumb' });
  assert.equal((await getToken(port, 'other')).status, 404);
  // certsmith "killed": its control connection just drops, the keeper keeps serving
  const sock = keeperSocketPath('127.0.0.1', port);
  await first.close(); // tok1 is still presented: release does not stop the keeper
  assert.deepEqual(await getToken(port, 'tok1'), { status: 200, body: 'tok1.thumb' });
  // the restarted certsmith adopts it (no second bind) and cleans up
  const second = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 10_000 });
  await second.present('tok2', 'tok2.thumb');
  assert.equal((await getToken(port, 'tok2')).body, 'tok2.thumb');
  await second.cleanUp('tok1');
  await second.cleanUp('tok2');
  await second.close();
  await until('keeper gone after release with no token', async () => !fs.existsSync(sock) && (await getToken(port, 'x').then(() => false, () => true)));
});

test('a keeper nobody adopts exits after its grace period', async () => {
  const port = await freePort();
  const k = await startHTTP01Keeper({ host: '127.0.0.1', port, graceMs: 300 });
  await k.present('t', 't.k');
  await k.close();
  assert.equal((await getToken(port, 't')).status, 200);
  await until('keeper gone after the grace period', async () => getToken(port, 't').then(() => false, () => true));
});
