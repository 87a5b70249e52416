// Admission webhooks registered through the API of the embedded server's stack (compose(), as
// `certsmith server` builds it) and served by a real HTTPS webhook with a throwaway CA: denial,
// patches, failurePolicy, timeoutSeconds, rules and selectors, dry run and sideEffects, service
// references, deletes, the controllers' own writes and the configuration cache's watch.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compose } from '../../composition/index.ts';
import { openSqliteStore } from '../../store/sqlite/index.ts';
import { realClock } from '../../runtime/clock.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { ensureServingCertificate } from '../tls.ts';
import { requestJSON } from '../testing/test-api-server.ts';
import { SecretType, ValidatingWebhookConfigurationType } from '../../api/resources.ts';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-admission-webhooks-'));
const stack = compose({ store: openSqliteStore({ path: join(dir, 'state.db') }), clock: realClock, logger: silentLogger });
const api = await stack.serveApi({});
// the webhook's certificate names 127.0.0.1 and the Service it is reached through
const pki = await ensureServingCertificate(join(dir, 'hook'), { hosts: ['hook.default.svc'] });
const caBundle = Buffer.from(pki.caPem).toString('base64');

interface Review { request: Record<string, any> }
const received: Array<{ path: string; review: Review }> = [];
const slowTimers = new Set<NodeJS.Timeout>();
const held: Array<() => void> = [];
let stamps = 0;
const hook = https.createServer({ cert: pki.certPem, key: pki.keyPem }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (d: Buffer) => chunks.push(d));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
    const path = (req.url ?? '').split('?')[0];
    received.push({ path: req.url ?? '', review });
    const answer = (response: Record<string, unknown>) => {
      const text = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, ...response } });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(text);
    };
    switch (path) {
      case '/deny': return answer({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'spec.selfSigned: Forbidden: not here' } });
      case '/deny-plain': return answer({ allowed: false });
      case '/warn': return answer({ allowed: true, warnings: ['this webhook warns', 'naïve "quoted" text', 'this webhook warns'] });
      case '/warn-deny': return answer({ allowed: false, warnings: ['warned before the refusal'], status: { message: 'no' } });
      case '/patch': {
        const ops = [{ op: 'add', path: '/metadata/labels', value: { ...(review.request.object?.metadata?.labels ?? {}), patched: 'yes' } }];
        return answer({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });
      }
      case '/rename': {
        const ops = [{ op: 'add', path: '/metadata/name', value: 'someone-else' }, { op: 'add', path: '/metadata/annotations', value: { renamed: 'tried' } }];
        return answer({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });
      }
      case '/stamp-a': case '/stamp-b': {
        // a change every time: a new value under the path's own annotation
        const annotations = { ...(review.request.object?.metadata?.annotations ?? {}), [path.slice(1)]: String(++stamps) };
        const ops = [{ op: 'add', path: '/metadata/annotations', value: annotations }];
        return answer({ allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });
      }
      case '/need-patched': {
        if (review.request.object?.metadata?.labels?.patched === 'yes') return answer({ allowed: true });
        return answer({ allowed: false, status: { message: 'called before the patch' } });
      }
      case '/huge': {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(`{"pad":"${'x'.repeat(4 * 1024 * 1024)}"}`);
      }
      case '/together': {
        // answers only once two reviews wait: calls made one after the other would time out
        held.push(() => answer({ allowed: true }));
        if (held.length >= 2) for (const release of held.splice(0)) release();
        return;
      }
      case '/wrong-uid': return res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'not-it', allowed: true } }));
      case '/slow': {
        const t = setTimeout(() => { slowTimers.delete(t); answer({ allowed: true }); }, 20_000);
        slowTimers.add(t);
        return;
      }
      default: return answer({ allowed: true });
    }
  });
});
await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
const hookPort = (hook.address() as AddressInfo).port;
// a port nothing listens on: a webhook that is down
const closed = http.createServer();
await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
const downPort = (closed.address() as AddressInfo).port;
await new Promise<void>((resolve) => closed.close(() => resolve()));

after(async () => {
  for (const t of slowTimers) clearTimeout(t);
  for (const release of held.splice(0)) release();
  hook.closeAllConnections();
  await new Promise<void>((resolve) => hook.close(() => resolve()));
  await stack.stop();
  rmSync(dir, { recursive: true, force: true });
});

const request = (method: string, path: string, body?: unknown, contentType?: string) => requestJSON(api, method, path, body, contentType);

/** a request's Warning headers, each as sent (Node would join them) */
function warningsOf(method: string, path: string, body: unknown): Promise<{ status: number; warnings: string[] }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, api.url), { method, headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, warnings: res.rawHeaders.filter((_, i) => i % 2 === 1 && res.rawHeaders[i - 1].toLowerCase() === 'warning') }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

const admissionPath = (kind: 'validating' | 'mutating') => `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations`;

/** registers one webhook through the API; removed again when the test ends */
async function register(t: { after: (fn: () => Promise<void>) => void }, kind: 'validating' | 'mutating', name: string, webhook: Record<string, unknown>) {
  const body = {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: kind === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration',
    metadata: { name },
    webhooks: [{ admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { url: `https://127.0.0.1:${hookPort}/allow`, caBundle }, ...webhook }],
  };
  const r = await request('POST', admissionPath(kind), body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  t.after(async () => { await request('DELETE', `${admissionPath(kind)}/${name}`); });
}

/**
 * A validating configuration written straight to the backing store, bypassing admission: one
 * stored before configurations were validated on write. Removed again when the test ends.
 */
async function storedBeforeValidation(t: { after: (fn: () => Promise<void>) => void }, name: string, webhook: Record<string, unknown>) {
  await stack.backend.create(ValidatingWebhookConfigurationType, {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name },
    webhooks: [{ admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { url: `https://127.0.0.1:${hookPort}/allow`, caBundle }, ...webhook }],
  } as never);
  t.after(async () => { await stack.backend.delete(ValidatingWebhookConfigurationType, undefined, name); });
}

/** the dispatcher learns of a configuration in the backend through its watch: asks again until the answer has `status` */
async function untilStatus(status: number, ask: (attempt: number) => Promise<{ status: number; body: any }>) {
  let r = await ask(0);
  for (let i = 1; i < 200 && r.status !== status; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    r = await ask(i);
  }
  assert.equal(r.status, status, JSON.stringify(r.body));
  return r;
}

const issuerRule = (ops = ['CREATE', 'UPDATE'], resources = ['issuers']) => [{ operations: ops, apiGroups: ['cert-manager.io'], apiVersions: ['v1'], resources }];
const secretRule = (ops = ['CREATE']) => [{ operations: ops, apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }];
const issuer = (name: string, labels?: Record<string, string>) => ({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name, ...(labels ? { labels } : {}) }, spec: { selfSigned: {} } });
const secret = (name: string, labels?: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, ...(labels ? { labels } : {}) }, data: { a: 'Yg==' } });
const issuers = '/apis/cert-manager.io/v1/namespaces/default/issuers';
const secrets = '/api/v1/namespaces/default/secrets';

test('a validating webhook that denies: kube\'s message, the webhook\'s code and reason; nothing stored', async (t) => {
  await register(t, 'validating', 'deny-issuers', { name: 'deny.example.com', rules: issuerRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle } });
  const r = await request('POST', issuers, issuer('denied'));
  assert.equal(r.status, 403);
  assert.equal(r.body.reason, 'Forbidden');
  assert.equal(r.body.message, 'admission webhook "deny.example.com" denied the request: spec.selfSigned: Forbidden: not here');
  assert.equal((await request('GET', `${issuers}/denied`)).status, 404);
});

test('a denial without a status is a 400 "without explanation"', async (t) => {
  await register(t, 'validating', 'deny-plain', { name: 'plain.example.com', rules: issuerRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/deny-plain`, caBundle } });
  const r = await request('POST', issuers, issuer('plain'));
  assert.equal(r.status, 400);
  assert.equal(r.body.message, 'admission webhook "plain.example.com" denied the request without explanation');
});

test('a mutating webhook\'s JSON patch is stored; the review carries what kube-apiserver sends', async (t) => {
  await register(t, 'mutating', 'patch-secrets', { name: 'patch.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/patch`, caBundle } });
  received.length = 0;
  const r = await request('POST', `${secrets}?fieldManager=tester`, secret('patched', { keep: 'me' }));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(r.body.metadata.labels, { keep: 'me', patched: 'yes' });
  const stored = await stack.backend.get(SecretType, 'default', 'patched');
  assert.deepEqual(stored?.metadata.labels, { keep: 'me', patched: 'yes' });
  assert.equal(received.length, 1);
  assert.match(received[0].path, /^\/patch\?timeout=10s$/);
  const req = received[0].review.request;
  assert.match(req.uid, /^[0-9a-f-]{36}$/);
  assert.deepEqual(req.kind, { group: '', version: 'v1', kind: 'Secret' });
  assert.deepEqual(req.resource, { group: '', version: 'v1', resource: 'secrets' });
  assert.deepEqual(req.requestKind, req.kind);
  assert.equal(req.name, 'patched');
  assert.equal(req.namespace, 'default');
  assert.equal(req.operation, 'CREATE');
  assert.equal(req.userInfo.username, 'admin');
  assert.equal(req.object.metadata.name, 'patched');
  assert.equal(req.oldObject, null);
  assert.equal(req.dryRun, false);
  assert.deepEqual(req.options, { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions', fieldManager: 'tester' });
});

test('a patch cannot move the object: the request\'s name is kept; a generateName create is patched too', async (t) => {
  await register(t, 'mutating', 'rename-secrets', { name: 'rename.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/rename`, caBundle } });
  const r = await request('POST', secrets, secret('keep-name'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.metadata.name, 'keep-name');
  assert.deepEqual(r.body.metadata.annotations, { renamed: 'tried' });
  assert.equal(await stack.backend.get(SecretType, 'default', 'someone-else'), undefined);
  const generated = await request('POST', secrets, { ...secret('x'), metadata: { generateName: 'gen-' } });
  assert.equal(generated.status, 201, JSON.stringify(generated.body));
  assert.match(generated.body.metadata.name, /^gen-/);
  assert.deepEqual(generated.body.metadata.annotations, { renamed: 'tried' });
});

test('webhook warnings reach the client as Warning: 299 headers, once each, beside fieldValidation\'s; a refusal carries them too', async (t) => {
  await register(t, 'mutating', 'warn-secrets', { name: 'warn.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/warn`, caBundle } });
  await register(t, 'validating', 'warn-secrets-too', { name: 'warntoo.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/warn`, caBundle } });
  const r = await warningsOf('POST', `${secrets}?fieldValidation=Warn`, { ...secret('warned'), extra: 1 });
  assert.equal(r.status, 201);
  assert.deepEqual(r.warnings, ['299 - "unknown field \\"extra\\""', '299 - "this webhook warns"', '299 - "na\\u00efve \\"quoted\\" text"']);

  await register(t, 'validating', 'warn-deny', { name: 'warndeny.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/warn-deny`, caBundle } });
  const refused = await warningsOf('POST', secrets, secret('warned-refused'));
  assert.equal(refused.status, 400);
  assert.ok(refused.warnings.includes('299 - "warned before the refusal"'), refused.warnings.join('\n'));
});

test('mutating webhooks run in configuration-name order, each seeing the patches before it', async (t) => {
  await register(t, 'mutating', 'b-second', { name: 'second.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/need-patched`, caBundle } });
  await register(t, 'mutating', 'a-first', { name: 'first.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/patch`, caBundle } });
  const r = await request('POST', secrets, secret('ordered'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.metadata.labels.patched, 'yes');
});

/** the reviews a path received since `received` was last emptied */
const reviewsAt = (path: string) => received.filter((r) => r.path.split('?')[0] === path).map((r) => r.review.request);

test('reinvocationPolicy IfNeeded: a webhook is called again, on the changed object, when one after it changed it; Never is not', async (t) => {
  await register(t, 'mutating', 'r1-again', { name: 'again.example.com', reinvocationPolicy: 'IfNeeded', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/seen-again`, caBundle } });
  await register(t, 'mutating', 'r2-once', { name: 'once.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/seen-once`, caBundle } });
  await register(t, 'mutating', 'r3-patch', { name: 'patcher.example.com', reinvocationPolicy: 'IfNeeded', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/patch`, caBundle } });
  received.length = 0;
  const r = await request('POST', secrets, secret('reinvoked'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const again = reviewsAt('/seen-again');
  assert.equal(again.length, 2);
  assert.equal(again[0].object.metadata.labels, undefined);
  assert.equal(again[1].object.metadata.labels.patched, 'yes');
  // each call is a review of its own, with its own uid, as kube's
  assert.notEqual(again[0].uid, again[1].uid);
  assert.equal(reviewsAt('/seen-once').length, 1, 'reinvocationPolicy Never');
  // the webhook that changed the object is not called again for its own change
  assert.equal(reviewsAt('/patch').length, 1);

  // a patch that changes nothing is no reason to call anyone again
  received.length = 0;
  const unchanged = await request('POST', secrets, secret('already-patched', { patched: 'yes' }));
  assert.equal(unchanged.status, 201, JSON.stringify(unchanged.body));
  assert.equal(reviewsAt('/seen-again').length, 1);
});

test('reinvocationPolicy IfNeeded: in the second round only the webhooks due again are considered; the others\' matchConditions are not evaluated again', async (t) => {
  await register(t, 'mutating', 'q1-again', { name: 'again.example.com', reinvocationPolicy: 'IfNeeded', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/seen-again`, caBundle } });
  // true on the object as sent; an error (no such key) once the object carries labels, which with
  // failurePolicy Fail would refuse the write if it were evaluated in the second round
  await register(t, 'mutating', 'q2-guarded', {
    name: 'guarded.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/seen-once`, caBundle },
    matchConditions: [{ name: 'unlabelled', expression: "!has(object.metadata.labels) || object.metadata.labels.missing == 'x'" }],
  });
  await register(t, 'mutating', 'q3-patch', { name: 'patcher.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/patch`, caBundle } });
  received.length = 0;
  const r = await request('POST', secrets, secret('guarded'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.deepEqual(received.map((x) => x.path.split('?')[0]), ['/seen-again', '/seen-once', '/patch', '/seen-again']);
});

test('reinvocationPolicy IfNeeded: no webhook is called more than twice, however often the others change the object', async (t) => {
  await register(t, 'mutating', 's1-stamp', { name: 'stamp-a.example.com', reinvocationPolicy: 'IfNeeded', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/stamp-a`, caBundle } });
  await register(t, 'mutating', 's2-stamp', { name: 'stamp-b.example.com', reinvocationPolicy: 'IfNeeded', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/stamp-b`, caBundle } });
  received.length = 0;
  const r = await request('POST', secrets, secret('stamped'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  // a: changes; b: changes, so a is due; round 2: a changes again, so b (invoked after the last change) is due too
  assert.deepEqual(received.map((x) => x.path.split('?')[0]), ['/stamp-a', '/stamp-b', '/stamp-a', '/stamp-b']);
  const last = reviewsAt('/stamp-b')[1].object.metadata.annotations;
  assert.deepEqual(Object.keys(r.body.metadata.annotations).sort(), ['stamp-a', 'stamp-b']);
  assert.equal(r.body.metadata.annotations['stamp-a'], last['stamp-a'], 'round 2 sees round 2\'s changes');
});

test('matchConditions: the webhook is called only when every condition is true', async (t) => {
  await register(t, 'validating', 'conditional-deny', {
    name: 'conditional.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle },
    matchConditions: [
      { name: 'labelled', expression: "has(object.metadata.labels) && 'deny' in object.metadata.labels" },
      { name: 'not-admin-exempt', expression: "request.userInfo.username == 'admin' && oldObject == null" },
    ],
  });
  received.length = 0;
  const skipped = await request('POST', secrets, secret('not-labelled'));
  assert.equal(skipped.status, 201, JSON.stringify(skipped.body));
  assert.equal(received.length, 0);
  const denied = await request('POST', secrets, secret('labelled', { deny: 'yes' }));
  assert.equal(denied.status, 403, JSON.stringify(denied.body));
  assert.equal(denied.body.message, 'admission webhook "conditional.example.com" denied the request: spec.selfSigned: Forbidden: not here');
});

test('matchConditions that cannot be evaluated: failurePolicy Fail refuses with kube\'s 403, Ignore skips the webhook', async (t) => {
  const conditions = [{ name: 'team', expression: "object.metadata.labels.team == 'web'" }];
  await register(t, 'validating', 'condition-error-ignore', { name: 'ignore.example.com', failurePolicy: 'Ignore', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle }, matchConditions: conditions });
  received.length = 0;
  const through = await request('POST', secrets, secret('no-labels-ignored'));
  assert.equal(through.status, 201, JSON.stringify(through.body));
  assert.equal(received.length, 0);

  await register(t, 'validating', 'condition-error-fail', { name: 'fail.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/allow`, caBundle }, matchConditions: conditions });
  const refused = await request('POST', secrets, secret('no-labels-refused'));
  assert.equal(refused.status, 403, JSON.stringify(refused.body));
  assert.equal(refused.body.reason, 'Forbidden');
  assert.match(refused.body.message, /^secrets "no-labels-refused" is forbidden: expression 'object\.metadata\.labels\.team == 'web'' resulted in error: /);
  assert.equal(await stack.backend.get(SecretType, 'default', 'no-labels-refused'), undefined);
});

test('matchConditions of a mutating webhook see the patches of the webhooks before it', async (t) => {
  await register(t, 'mutating', 'c1-patch', { name: 'patch-first.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/patch`, caBundle } });
  await register(t, 'mutating', 'c2-deny-patched', {
    name: 'deny-patched.example.com', rules: secretRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle },
    matchConditions: [{ name: 'patched', expression: "object.metadata.labels.patched == 'yes'" }],
  });
  const r = await request('POST', secrets, secret('seen-patched'));
  assert.equal(r.status, 403, JSON.stringify(r.body));
  assert.match(r.body.message, /deny-patched\.example\.com" denied the request/);
});

test('validating webhooks are called in parallel', async (t) => {
  for (const n of ['one', 'two']) {
    await register(t, 'validating', `together-${n}`, { name: `${n}.example.com`, timeoutSeconds: 5, rules: issuerRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/together`, caBundle } });
  }
  const r = await request('POST', issuers, issuer('together'));
  assert.equal(r.status, 201, JSON.stringify(r.body));
});

test('an answer over the size limit is a call failure', async (t) => {
  await register(t, 'validating', 'huge', { name: 'huge.example.com', rules: issuerRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/huge`, caBundle } });
  const r = await request('POST', issuers, issuer('huge'));
  assert.equal(r.status, 500);
  assert.match(r.body.message, /failed calling webhook "huge.example.com": failed to call webhook: .*larger than 3145728 bytes/);
});

test('failurePolicy Fail with the webhook down refuses the write; Ignore lets it through', async (t) => {
  const down = `https://127.0.0.1:${downPort}/validate`;
  await register(t, 'validating', 'down-fail', { name: 'down.example.com', rules: issuerRule(), clientConfig: { url: down, caBundle } });
  const r = await request('POST', issuers, issuer('while-down'));
  assert.equal(r.status, 500);
  assert.equal(r.body.reason, 'InternalError');
  assert.match(r.body.message, new RegExp(`^Internal error occurred: failed calling webhook "down.example.com": failed to call webhook: Post "https://127.0.0.1:${downPort}/validate\\?timeout=10s": .*ECONNREFUSED`));
  assert.equal((await request('GET', `${issuers}/while-down`)).status, 404);

  const flipped = await request('PATCH', `${admissionPath('validating')}/down-fail`, [{ op: 'add', path: '/webhooks/0/failurePolicy', value: 'Ignore' }], 'application/json-patch+json');
  assert.equal(flipped.status, 200, JSON.stringify(flipped.body));
  assert.equal((await request('POST', issuers, issuer('while-down'))).status, 201);
});

test('timeoutSeconds is honoured: a webhook slower than 1s fails the call with a deadline error', async (t) => {
  await register(t, 'validating', 'slow', { name: 'slow.example.com', timeoutSeconds: 1, rules: issuerRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/slow`, caBundle } });
  const started = Date.now();
  const r = await request('POST', issuers, issuer('slow'));
  // the webhook would answer after 20 s
  assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
  assert.equal(r.status, 500);
  assert.match(r.body.message, /failed calling webhook "slow.example.com": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\?timeout=1s": context deadline exceeded/);
});

test('a caBundle that did not sign the serving certificate fails the call', async (t) => {
  const other = await ensureServingCertificate(join(dir, 'other-ca'));
  await register(t, 'validating', 'wrong-ca', { name: 'wrongca.example.com', rules: issuerRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/allow`, caBundle: Buffer.from(other.caPem).toString('base64') } });
  const r = await request('POST', issuers, issuer('wrong-ca'));
  assert.equal(r.status, 500);
  assert.match(r.body.message, /failed calling webhook "wrongca.example.com": failed to call webhook: .*(self.signed|unable to verify|certificate)/i);
});

test('a webhook URL that is not https is refused at write; one stored before that check is a call failure', async (t) => {
  const refused = await request('POST', admissionPath('validating'), {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'plain-http' },
    webhooks: [{ name: 'http.example.com', admissionReviewVersions: ['v1'], sideEffects: 'None', rules: issuerRule(), clientConfig: { url: `http://127.0.0.1:${hookPort}/allow` } }],
  });
  assert.equal(refused.status, 422);
  assert.match(refused.body.message, /webhooks\[0\]\.clientConfig\.url: Invalid value: "http": 'https' is the only allowed URL scheme/);

  await storedBeforeValidation(t, 'plain-http', { name: 'http.example.com', rules: issuerRule(), clientConfig: { url: `http://127.0.0.1:${hookPort}/allow` } });
  const r = await untilStatus(500, (i) => request('POST', issuers, issuer(`http-${i}`)));
  assert.match(r.body.message, /'https' is the only allowed URL scheme/);
});

test('a response for another request (uid) is refused', async (t) => {
  await register(t, 'validating', 'wrong-uid', { name: 'uid.example.com', rules: issuerRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/wrong-uid`, caBundle } });
  const r = await request('POST', issuers, issuer('uid'));
  assert.equal(r.status, 500);
  assert.match(r.body.message, /failed calling webhook "uid.example.com": expected response.uid="[0-9a-f-]+", got "not-it"/);
});

test('rules: an operation, resource or subresource the rules do not name skips the webhook', async (t) => {
  await register(t, 'validating', 'deny-issuer-status', { name: 'status.example.com', rules: issuerRule(['UPDATE'], ['issuers/status']), clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle } });
  // CREATE and main-resource UPDATE are not matched
  const created = await request('POST', issuers, issuer('rules'));
  assert.equal(created.status, 201);
  const labelled = await request('PATCH', `${issuers}/rules`, { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json');
  assert.equal(labelled.status, 200);
  // a status write is
  const status = await request('PATCH', `${issuers}/rules/status`, { status: { conditions: [] } }, 'application/merge-patch+json');
  assert.equal(status.status, 403);
  assert.match(status.body.message, /admission webhook "status.example.com" denied the request/);
});

test('objectSelector and namespaceSelector choose which writes go to the webhook', async (t) => {
  await register(t, 'validating', 'by-object', {
    name: 'object.example.com', rules: secretRule(), objectSelector: { matchLabels: { check: 'yes' } },
    clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle },
  });
  assert.equal((await request('POST', secrets, secret('unchecked'))).status, 201);
  assert.equal((await request('POST', secrets, secret('checked', { check: 'yes' }))).status, 403);

  assert.equal((await request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'guarded', labels: { guard: 'on' } } })).status, 201);
  await register(t, 'validating', 'by-namespace', {
    name: 'namespace.example.com', rules: issuerRule(), namespaceSelector: { matchLabels: { guard: 'on' } },
    clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle },
  });
  assert.equal((await request('POST', issuers, issuer('elsewhere'))).status, 201);
  const guarded = await request('POST', '/apis/cert-manager.io/v1/namespaces/guarded/issuers', issuer('guarded'));
  assert.equal(guarded.status, 403);
  assert.match(guarded.body.message, /namespace.example.com/);
});

test('dry run: a webhook with sideEffects Unknown refuses it as kube does; None is called with dryRun true', async (t) => {
  // v1 refuses Unknown at write: this is a configuration stored before that check
  await storedBeforeValidation(t, 'side-effects', { name: 'unknown.example.com', sideEffects: 'Unknown', rules: issuerRule() });
  const refused = await untilStatus(400, () => request('POST', `${issuers}?dryRun=All`, issuer('dry')));
  assert.equal(refused.body.message, 'admission webhook "unknown.example.com" does not support dry run');

  const none = await request('PATCH', `${admissionPath('validating')}/side-effects`, [{ op: 'replace', path: '/webhooks/0/sideEffects', value: 'None' }], 'application/json-patch+json');
  assert.equal(none.status, 200);
  received.length = 0;
  const dry = await request('POST', `${issuers}?dryRun=All`, issuer('dry'));
  assert.equal(dry.status, 201, JSON.stringify(dry.body));
  assert.equal(received.length, 1);
  assert.equal(received[0].review.request.dryRun, true);
  assert.deepEqual(received[0].review.request.options.dryRun, ['All']);
  assert.equal((await request('GET', `${issuers}/dry`)).status, 404);
});

test('DELETE goes to webhooks with the old object; the webhook configurations themselves never do', async (t) => {
  assert.equal((await request('POST', issuers, issuer('to-delete'))).status, 201);
  await register(t, 'validating', 'deny-everything', {
    name: 'everything.example.com', rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }],
    clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle },
  });
  received.length = 0;
  const del = await request('DELETE', `${issuers}/to-delete`);
  assert.equal(del.status, 403);
  assert.equal(received[0].review.request.operation, 'DELETE');
  assert.equal(received[0].review.request.object, null);
  assert.equal(received[0].review.request.oldObject.metadata.name, 'to-delete');
  assert.equal(received[0].review.request.options.kind, 'DeleteOptions');
  // the deny-everything configuration can still be changed and removed
  const removed = await request('DELETE', `${admissionPath('validating')}/deny-everything`);
  assert.equal(removed.status, 200);
  assert.equal((await request('DELETE', `${issuers}/to-delete`)).status, 200);
});

test('the in-process controllers\' writes go through webhooks too (they use the same admitted store)', async (t) => {
  await register(t, 'validating', 'deny-controller', { name: 'controller.example.com', rules: secretRule(), objectSelector: { matchLabels: { from: 'controller' } }, clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle } });
  received.length = 0;
  await assert.rejects(stack.store.create(SecretType, { ...secret('from-controller', { from: 'controller' }), metadata: { name: 'from-controller', namespace: 'default', labels: { from: 'controller' } } }),
    /admission webhook "controller.example.com" denied the request/);
  // as the service account cert-manager's controller runs as: a webhook tells them from people
  assert.deepEqual(received.at(-1)?.review.request.userInfo,
    { username: 'system:serviceaccount:certsmith:certsmith', groups: ['system:serviceaccounts', 'system:serviceaccounts:certsmith', 'system:authenticated'] });
});

test('clientConfig.service: the Service\'s cluster IP and target port, the certificate checked for <name>.<namespace>.svc', async (t) => {
  const svc = await request('POST', '/api/v1/namespaces/default/services', {
    apiVersion: 'v1', kind: 'Service', metadata: { name: 'hook' }, spec: { clusterIP: '127.0.0.1', ports: [{ port: 443, targetPort: hookPort }] },
  });
  assert.equal(svc.status, 201, JSON.stringify(svc.body));
  await register(t, 'validating', 'by-service', { name: 'service.example.com', rules: issuerRule(), clientConfig: { service: { namespace: 'default', name: 'hook', path: '/deny' }, caBundle } });
  received.length = 0;
  const r = await request('POST', issuers, issuer('via-service'));
  assert.equal(r.status, 403);
  assert.equal(received.length, 1);
  assert.equal(received[0].path, '/deny?timeout=10s');

  await register(t, 'validating', 'by-missing-service', { name: 'missing.example.com', rules: issuerRule(), clientConfig: { service: { namespace: 'default', name: 'nope' }, caBundle } });
  const missing = await request('POST', issuers, issuer('via-missing'));
  assert.equal(missing.status, 500);
  assert.match(missing.body.message, /failed calling webhook "(service|missing).example.com"/);
});

test('a configuration written straight to the backend reaches the dispatcher through its watch', async (t) => {
  await stack.backend.create(ValidatingWebhookConfigurationType, {
    apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'backend-only' },
    webhooks: [{ name: 'backend.example.com', admissionReviewVersions: ['v1'], sideEffects: 'None', rules: issuerRule(), clientConfig: { url: `https://127.0.0.1:${hookPort}/deny`, caBundle } }],
  } as never);
  t.after(async () => { await stack.backend.delete(ValidatingWebhookConfigurationType, undefined, 'backend-only'); });
  let status = 0;
  for (let i = 0; i < 100 && status !== 403; i++) {
    status = (await request('POST', issuers, issuer(`watched-${i}`))).status;
    if (status !== 403) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(status, 403);
});
