import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LoopShare } from './loop-share.ts';
import { Controller } from './controller.ts';

test('with no request coming in, the whole slice is the budget of a turn', () => {
  let now = 1000;
  const share = new LoopShare({ sliceMs: 20, foregroundSliceMs: 2, foregroundWindowMs: 250, now: () => now });
  now = 1010;
  assert.equal(share.used(), false, 'within the slice');
  now = 1021;
  assert.equal(share.used(), true, 'slice used up');
});

test('a busy client (foregroundRequests within the window) shrinks the budget until the window after its last requests has passed', async () => {
  let now = 0;
  const share = new LoopShare({ sliceMs: 20, foregroundSliceMs: 2, foregroundWindowMs: 250, foregroundRequests: 3, foregroundGapMs: 0, now: () => now });
  share.noteRequest();
  share.noteRequest();
  now = 3;
  assert.equal(share.used(), false, 'two requests are someone polling: the whole slice');
  share.noteRequest();
  now = 1;
  assert.equal(share.used(), false, '1 ms of 2');
  now = 3;
  assert.equal(share.used(), true, 'the third request: past the foreground slice');
  now = 200;
  share.noteRequest();
  now = 300;
  await share.nextTurn();
  now = 310;
  assert.equal(share.used(), false, 'three requests no longer fall within 250 ms: 10 ms of the whole slice of 20');
  share.noteRequest();
  share.noteRequest();
  assert.equal(share.used(), true, 'three within the window again: 10 ms is past the foreground slice');
});

test('one turn for every waiter, and the budget starts again in it', async () => {
  let now = 0;
  const share = new LoopShare({ sliceMs: 5, now: () => now });
  now = 10;
  assert.equal(share.used(), true);
  const a = share.nextTurn();
  assert.equal(share.nextTurn(), a, 'one promise for all who wait in a turn');
  await a;
  assert.equal(share.used(), false, 'a fresh budget');
  assert.notEqual(share.nextTurn(), a, 'the next turn is another');
});

/**
 * Reconciles that never leave the microtask queue (decisions from the caches) of two controllers
 * with four workers each: the event loop must still turn after about one budget of their time,
 * shared by all eight workers (each worker counting its own time let one turn run them all).
 * Time is a fake the reconciles advance by 1 ms each; a setImmediate probe runs once per turn.
 */
async function reconcilesPerTurn(foreground: boolean): Promise<{ max: number; total: number }> {
  let now = 0;
  const share = new LoopShare({ sliceMs: 5, foregroundSliceMs: 1, foregroundWindowMs: 1e9, foregroundRequests: 1, foregroundGapMs: 0, now: () => now });
  if (foreground) share.noteRequest();
  let sinceTurn = 0;
  let max = 0;
  let total = 0;
  const controllers = ['a', 'b'].map((name) => new Controller({
    name, workers: 4, loopShare: share,
    reconcile: async () => {
      now += 1;
      sinceTurn++;
      total++;
    },
  }));
  for (const c of controllers) {
    for (let i = 0; i < 200; i++) c.enqueue(`ns/${i}`);
    c.start();
  }
  await new Promise<void>((resolve) => {
    const probe = () => {
      max = Math.max(max, sinceTurn);
      sinceTurn = 0;
      if (total >= 400) resolve();
      else setImmediate(probe);
    };
    setImmediate(probe);
  });
  await Promise.all(controllers.map((c) => c.stop()));
  return { max, total };
}

test('eight busy workers of two controllers get one budget per turn of the event loop between them', async () => {
  const { max, total } = await reconcilesPerTurn(false);
  assert.equal(total, 400);
  assert.ok(max >= 5 && max <= 7, `reconciles in one turn: ${max} (5 ms budget, 1 ms each)`);
});

test('while requests come in, the controllers get the foreground budget per turn', async () => {
  const { max, total } = await reconcilesPerTurn(true);
  assert.equal(total, 400);
  assert.ok(max <= 3, `reconciles in one turn: ${max} (1 ms budget, 1 ms each)`);
});

/**
 * Requests keep coming (a client with requests in flight, as `certsmith apply` keeps 16): each
 * turn of the loop answers one, then the controllers may start reconciles. Requests and
 * reconciles both take real time here (a busy loop), so the share is what the loop gives. The
 * share is measured after a warm-up of `warmMs`: until the client has sent foregroundRequests,
 * it is someone polling.
 */
async function controllerShare(share: LoopShare, warmMs: number, ms: number): Promise<number> {
  const spin = (n: number) => { const end = performance.now() + n; while (performance.now() < end); };
  let measuring = false;
  let controllerMs = 0;
  const c = new Controller({
    name: 'busy', workers: 4, loopShare: share,
    reconcile: async () => {
      const t = performance.now();
      spin(0.5);
      if (measuring) controllerMs += performance.now() - t;
      return { requeueAfter: 0 };
    },
  });
  for (let i = 0; i < 50; i++) c.enqueue(`ns/${i}`);
  c.start();
  const start = performance.now();
  let measuredFrom = 0;
  await new Promise<void>((resolve) => {
    const request = () => {
      share.noteRequest();
      spin(0.4);
      const now = performance.now();
      if (!measuring && now - start >= warmMs) {
        measuring = true;
        measuredFrom = now;
      }
      if (now - start >= warmMs + ms) resolve();
      else setImmediate(request);
    };
    setImmediate(request);
  });
  const elapsed = performance.now() - measuredFrom;
  await c.stop();
  return controllerMs / elapsed;
}

test('while a client keeps requests coming, the controllers get a bounded share of the loop, not most of it', async () => {
  const foreground = await controllerShare(new LoopShare({ foregroundSliceMs: 2, foregroundGapMs: 8, foregroundWindowMs: 250 }), 300, 600);
  // 2 ms of every 10 at most, plus the reconcile that overruns a slice (without the gap: about 80 %)
  assert.ok(foreground < 0.3, `controllers' share with requests coming in: ${(foreground * 100).toFixed(0)} %`);
  assert.ok(foreground > 0.02, `the controllers still make progress: ${(foreground * 100).toFixed(0)} %`);
});

/** Reconciles that wait (a store write, a key from the thread pool) for 5 ms each: how many are under way at once, at most. */
async function reconcilesAtOnce(busyClient: boolean): Promise<number> {
  const share = new LoopShare({ foregroundReconciles: 3, foregroundGapMs: 1, foregroundRequests: 1, foregroundWindowMs: 1e9 });
  if (busyClient) share.noteRequest();
  let running = 0;
  let max = 0;
  let done = 0;
  const controllers = ['a', 'b'].map((name) => new Controller({
    name, workers: 8, loopShare: share,
    reconcile: async () => {
      max = Math.max(max, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      done++;
    },
  }));
  for (const c of controllers) {
    for (let i = 0; i < 30; i++) c.enqueue(`ns/${i}`);
    c.start();
  }
  while (done < 60) await new Promise((r) => setTimeout(r, 5));
  await Promise.all(controllers.map((c) => c.stop()));
  return max;
}

test('while a client keeps requests coming, at most foregroundReconciles reconciles are under way in all controllers together', async () => {
  assert.equal(await reconcilesAtOnce(true), 3);
  assert.equal(await reconcilesAtOnce(false), 16, 'with no busy client, every worker of both controllers');
});
