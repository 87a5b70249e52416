// A token cleaned up is never served again by this process: a takeover's "serve every token
// again" (serveAll) reads the cache, which can still show a Challenge another worker has just
// cleaned up; its late present used to put the token back into the keeper, where it stayed
// (and kept the keeper alive) after every Challenge was gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ControllerContext } from '../context.ts';
import { createAcmeRuntime } from './runtime.ts';
import { fakeKeeper } from './solvers/testing/fake-keeper.ts';
import { fixedClock } from '../testing/fixtures.ts';
import { freePort } from '../../../test/rig/ports.ts';

test('present after cleanUp of the same token does nothing; other tokens are still served', async () => {
  const port = await freePort();
  const keeper = await fakeKeeper(port);
  const ctx = { clock: fixedClock(), options: { acmeHTTP01Listen: `127.0.0.1:${port}` }, logger: { info() {}, warn() {}, error() {}, debug() {} } } as unknown as ControllerContext;
  const rt = createAcmeRuntime(ctx);
  try {
    const server = await rt.http01();
    await server.present('done', 'done.k');
    await server.cleanUp('done');
    await server.present('done', 'done.k'); // the late restore
    await server.present('next', 'next.k');
    assert.deepEqual(keeper.told(0), ['present done', 'cleanup done', 'present next']);
  } finally {
    await rt.close();
    await keeper.die();
  }
});
