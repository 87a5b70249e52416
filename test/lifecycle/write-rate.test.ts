// Hardening (issue 12, findings 2 and 12): no Certificate, however it reached the store, can make
// the controllers write without bound. Writes are counted with the store's global revision while
// a fake clock steps through simulated time; nothing here sleeps on the wall clock, and a settle
// gives up as soon as the count passes the bound (a loop never idles, so waiting would hang).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startLifecycle, withCA, certificate, condition, type Lifecycle } from './harness.ts';
import { Certificate } from '../../src/api/resources.ts';
import type { Store } from '../../src/store/store.ts';
import { createCSR } from '../../src/pki/csr.ts';
import { generatePrivateKey } from '../../src/pki/keys.ts';

const S = 1000;
const MIN = 60 * S;

/** The store's global revision: one per write of any object, Events included. */
async function revision(lc: Lifecycle): Promise<number> {
  return Number((await lc.store.list(Certificate, { limit: 1 })).resourceVersion);
}

/** Settles, or fails as soon as more than `limit` writes happened since `from`. */
async function settleWithin(lc: Lifecycle, from: number, limit: number, what: string): Promise<void> {
  let done = false;
  const idle = lc.running.manager.whenIdle({ timeoutMs: 60_000 }).finally(() => { done = true; });
  while (!done) {
    const writes = (await revision(lc)) - from;
    if (writes > limit) {
      idle.catch(() => {}); // a loop never idles: do not wait for it, stop() ends it
      assert.fail(`${what}: ${writes} writes, more than the bound of ${limit}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await idle;
}

/** Steps the fake clock timer by timer (as harness.advance does), checking the bound at each step. */
async function advanceWithin(lc: Lifecycle, ms: number, from: number, limit: number, what: string): Promise<void> {
  const end = lc.clock.now().getTime() + ms;
  for (;;) {
    const next = lc.clock.nextTimerAt();
    if (!next || next.getTime() > end) break;
    lc.clock.set(next);
    await settleWithin(lc, from, limit, what);
  }
  lc.clock.set(end);
  await settleWithin(lc, from, limit, what);
}

// The embedded store now refuses lone surrogates itself, but a Kubernetes cluster with only the
// CRDs installed has no webhook, and the class fix must hold for any object the controllers get.
// This view stands for such a backend: it keeps each lone surrogate as a marker in SQLite and
// hands the controllers the string with the surrogate, in reads, lists, watches and write results.
const MARKER = /<<lone:([0-9a-f]{4})>>/g;
function mapStrings(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f));
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [f(k), mapStrings(x, f)]));
  }
  return v;
}
const toStored = <T>(v: T): T => mapStrings(v, (s) => s.replace(/\p{Cs}/gu, (c) => `<<lone:${c.charCodeAt(0).toString(16)}>>`)) as T;
const toSeen = <T>(v: T): T => mapStrings(v, (s) => s.replace(MARKER, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))) as T;

function surrogatePreservingStore(store: Store): Store {
  return storeView(store, toStored, toSeen);
}

/** The store as the controllers see it: arguments mapped by `in`, results and watch events by `out`. */
function storeView(store: Store, into: <T>(v: T) => T, out: <T>(v: T) => T): Store {
  const toStored = into;
  const toSeen = out;
  return new Proxy(store, {
    get(target, prop) {
      const f = Reflect.get(target, prop) as unknown;
      if (typeof f !== 'function') return f;
      if (prop === 'watch') {
        return (type: unknown, opts: unknown, onEvent: (e: { object: unknown }) => void, onError: unknown) =>
          f.call(target, type, opts, (e: { object: unknown }) => onEvent({ ...e, object: toSeen(e.object) }), onError);
      }
      return (...args: unknown[]) => {
        const out = f.apply(target, args.map((a) => (typeof a === 'function' ? a : toStored(a))));
        return out instanceof Promise ? out.then(toSeen) : out;
      };
    },
  });
}

// Bounds stated for the README and the issue: one Certificate may cause at most 40 writes in its
// first simulated minute (its own issuance attempt, key, request, status and Events: about 15 in
// practice) and at most 40 in each following ten minutes (replacements back off to one per 5
// minutes; each costs about 9 writes: delete, create, approval, signing, Events). On 6d0b77e the same object caused
// ~1,150 writes per real second without the clock moving at all.
const FIRST_MINUTE_LIMIT = 40;
const LATER_TEN_MINUTES_LIMIT = 40;

for (const [field, spec] of [
  ['commonName', { commonName: 'bad\ud800name', dnsNames: ['ok.example.test'] }],
  ['dnsNames', { dnsNames: ['ok.example.test', 'x\ud800.example.test'] }],
  ['subject.organizations', { dnsNames: ['ok.example.test'], subject: { organizations: ['Acme\ud800'] } }],
  ['subject.serialNumber', { dnsNames: ['ok.example.test'], subject: { serialNumber: '\udc00' } }],
] as const) {
  test(`a lone surrogate in ${field}, stored without admission, keeps the write rate bounded`, async (t) => {
    // no admission: this stands for a cluster with only the CRDs installed
    const lc = await startLifecycle({ storeView: surrogatePreservingStore, admission: false });
    try {
      await withCA(lc);
      const before = await revision(lc);
      // Straight into storage, as on a cluster where only the CRDs are installed: no webhook.
      await lc.store.create(Certificate, toStored(certificate('loop', spec)));
      await advanceWithin(lc, MIN, before, FIRST_MINUTE_LIMIT, 'first simulated minute');
      const afterMinute = await revision(lc);
      await advanceWithin(lc, 10 * MIN, afterMinute, LATER_TEN_MINUTES_LIMIT, 'next ten simulated minutes');
      t.diagnostic(`writes: ${afterMinute - before} in the first simulated minute, ${(await revision(lc)) - afterMinute} in the next ten`);
      // It is a failed issuance the user can see, not a silent loop.
      const crt = await lc.certificate('loop');
      assert.equal(condition(crt, 'Ready')?.status, 'False');
      assert.ok((crt.status?.issuanceAttempts ?? 0) >= 1, `a failure is recorded: ${JSON.stringify(crt.status)}`);
      assert.equal(condition(crt, 'Issuing')?.status, 'False');
      const issuing = crt.status?.conditions?.find((c) => c.type === 'Issuing');
      assert.match(issuing?.message ?? '', /not well-formed Unicode/);
    } finally {
      await lc.stop();
    }
  });
}

test('a request that can never match its Certificate is replaced with backoff, not in a loop', async (t) => {
  // Stands for any cause of a permanent mismatch (an encoding quirk, a bug, another writer): the
  // controllers are shown a CSR for another name and key whenever they read the Certificate's requests.
  const otherKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const foreign = Buffer.from(await createCSR({ commonName: 'someone-else.example.test' }, otherKey)).toString('base64');
  const swap = <T>(v: T): T => {
    const o = v as { kind?: string; metadata?: { name?: string }; spec?: { request?: string }; items?: unknown[] };
    if (o && Array.isArray(o.items)) return { ...o, items: o.items.map(swap) } as T;
    if (o?.kind === 'CertificateRequest' && o.metadata?.name?.startsWith('never-') && o.spec) return { ...o, spec: { ...o.spec, request: foreign } } as T;
    return v;
  };
  const lc = await startLifecycle({ storeView: (store) => storeView(store, (v) => v, swap) });
  try {
    await withCA(lc);
    const before = await revision(lc);
    await lc.apply(certificate('never', { dnsNames: ['never.example.test'] }));
    await advanceWithin(lc, MIN, before, FIRST_MINUTE_LIMIT, 'first simulated minute');
    const afterMinute = await revision(lc);
    await advanceWithin(lc, 10 * MIN, afterMinute, LATER_TEN_MINUTES_LIMIT, 'next ten simulated minutes');
    const afterEleven = await revision(lc);
    t.diagnostic(`writes: ${afterMinute - before} in the first simulated minute, ${afterEleven - afterMinute} in the next ten`);
    // steady state: at most one replacement per 5 minutes
    await advanceWithin(lc, 10 * MIN, afterEleven, LATER_TEN_MINUTES_LIMIT, 'minutes 11 to 21');
  } finally {
    await lc.stop();
  }
});

test('a next private key that can never fit its Certificate is replaced with backoff, not in a loop', async (t) => {
  // The key manager's replace cycle: the controllers are shown an RSA key in every next-key
  // Secret of an ECDSA Certificate, so each new key "does not fit" and is deleted again.
  const rsa = Buffer.from(await generatePrivateKey({ algorithm: 'RSA', size: 2048 })).toString('base64');
  const swap = <T>(v: T): T => {
    const o = v as { kind?: string; metadata?: { name?: string; labels?: Record<string, string> }; data?: Record<string, string>; items?: unknown[] };
    if (o && Array.isArray(o.items)) return { ...o, items: o.items.map(swap) } as T;
    if (o?.kind === 'Secret' && o.metadata?.name?.startsWith('misfit-') && o.metadata.labels?.['cert-manager.io/next-private-key'] === 'true' && o.data) {
      return { ...o, data: { ...o.data, 'tls.key': rsa } } as T;
    }
    return v;
  };
  const lc = await startLifecycle({ storeView: (store) => storeView(store, (v) => v, swap) });
  try {
    await withCA(lc);
    const before = await revision(lc);
    await lc.apply(certificate('misfit', { dnsNames: ['misfit.example.test'], privateKey: { algorithm: 'ECDSA' } }));
    await advanceWithin(lc, MIN, before, FIRST_MINUTE_LIMIT, 'first simulated minute');
    const afterMinute = await revision(lc);
    await advanceWithin(lc, 10 * MIN, afterMinute, LATER_TEN_MINUTES_LIMIT, 'next ten simulated minutes');
    t.diagnostic(`writes: ${afterMinute - before} in the first simulated minute, ${(await revision(lc)) - afterMinute} in the next ten`);
  } finally {
    await lc.stop();
  }
});

test('duration 1h with renewBefore 59m59s re-issues at most once per minimum interval, not every second', async () => {
  const lc = await startLifecycle();
  try {
    await withCA(lc);
    await lc.apply(certificate('churn', { dnsNames: ['churn.example.test'], duration: '1h', renewBefore: '59m59s' }));
    await lc.settle();
    assert.equal((await lc.certificate('churn')).status?.revision, 1);
    await lc.advance(10 * MIN);
    // The minimum interval for a 1h certificate is max(5m, 10% of 1h = 6m): one renewal at
    // +6m in these ten minutes (the next is due at +12m), instead of ~600.
    assert.equal((await lc.certificate('churn')).status?.revision, 2);
    await lc.advance(50 * MIN);
    const rev = (await lc.certificate('churn')).status?.revision ?? 0;
    assert.ok(rev >= 10 && rev <= 11, `one issuance per 6 minutes over the hour, got revision ${rev}`);
    assert.equal(condition(await lc.certificate('churn'), 'Ready')?.status, 'True');
  } finally {
    await lc.stop();
  }
});
