import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { KubeObject } from '../api/meta.ts';
import { CAInjectorAnnotation } from '../api/annotations.ts';
import { NamespaceType, SecretType } from '../api/resources.ts';
import { createCSR } from '../pki/csr.ts';
import { generatePrivateKey } from '../pki/keys.ts';
import { signCertificate } from '../pki/sign.ts';
import { FakeClock, type Clock } from '../runtime/clock.ts';
import { openTestStore } from '../runtime/testing/test-store.ts';
import { StoreError, type Store } from '../store/store.ts';
import {
  caFromSecret, createCA, ensureServingCA, issueServingCertificate, ServingCertificates,
  servingRenewalTime, type KeyPair,
} from './serving-ca.ts';

const DAY = 86_400_000;
/** real time with timers that keep the test's event loop alive (realClock's are unref'd) */
const realClock: Clock = {
  now: () => new Date(),
  setTimer(ms, fn) {
    const h = setTimeout(fn, ms);
    return () => clearTimeout(h);
  },
};
const b64 = (s: string) => Buffer.from(s).toString('base64');
const start = new Date('2026-03-01T00:00:00Z');
const ca = await createCA(start);
const otherCA = await createCA(start);

function secret(data: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ca', namespace: 'certsmith' }, type: 'kubernetes.io/tls', data } as KubeObject;
}
const pairSecret = (p: KeyPair) => secret({ 'ca.crt': b64(p.certPem), 'tls.crt': b64(p.certPem), 'tls.key': b64(p.keyPem) });

async function store(): Promise<Store> {
  const s = openTestStore();
  await s.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'certsmith' } });
  return s;
}

test('caFromSecret: what makes a Secret unusable as the webhook CA, and when it is due', async () => {
  const leafKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
  const leaf = await signCertificate({ csrPem: await createCSR({ commonName: 'leaf' }, leafKey), notBefore: start, durationMs: DAY, selfSignKeyPem: leafKey });
  const cases: Array<[string, KubeObject | undefined, Date, RegExp | undefined]> = [
    ['absent', undefined, start, /does not exist/],
    ['no ca.crt', secret({ 'tls.crt': b64(ca.certPem), 'tls.key': b64(ca.keyPem) }), start, /lacks one of ca\.crt, tls\.crt, tls\.key/],
    ['garbage tls.crt', secret({ 'ca.crt': 'eA==', 'tls.crt': b64('nope'), 'tls.key': b64(ca.keyPem) }), start, /tls\.crt is not a certificate/],
    ['garbage tls.key', secret({ 'ca.crt': 'eA==', 'tls.crt': b64(ca.certPem), 'tls.key': b64('nope') }), start, /tls\.key is not a private key/],
    ['key of another CA', secret({ 'ca.crt': 'eA==', 'tls.crt': b64(ca.certPem), 'tls.key': b64(otherCA.keyPem) }), start, /does not match/],
    ['not a CA', secret({ 'ca.crt': 'eA==', 'tls.crt': b64(leaf), 'tls.key': b64(leafKey) }), start, /not a CA certificate/],
    ['not yet valid', pairSecret(ca), new Date(start.getTime() - DAY), /not valid before/],
    ['valid', pairSecret(ca), new Date(start.getTime() + 100 * DAY), undefined],
    ['just before the last third', pairSecret(ca), new Date(start.getTime() + 243 * DAY), undefined],
    ['in the last third of its life', pairSecret(ca), new Date(start.getTime() + 244 * DAY), /due for renewal/],
  ];
  for (const [name, s, now, problem] of cases) {
    const r = caFromSecret(s, now);
    if (problem) {
      assert.ok('problem' in r, name);
      assert.match(r.problem, problem, name);
      assert.doesNotMatch(r.problem, /PRIVATE KEY/, `${name}: a problem never quotes the key`);
    } else {
      assert.ok('ca' in r, `${name}: ${JSON.stringify(r)}`);
      assert.deepEqual(r.ca, ca);
    }
  }
});

test('createCA: ECDSA P-256, one year, a CA', () => {
  const x = new X509Certificate(ca.certPem);
  assert.equal(x.ca, true);
  assert.equal(x.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  assert.equal(new Date(x.validTo).getTime() - new Date(x.validFrom).getTime(), 365 * DAY);
  assert.ok(x.verify(x.publicKey), 'self-signed');
});

test('ensureServingCA creates the Secret the CA injector reads, then reuses it', async () => {
  const s = await store();
  const clock = new FakeClock(start);
  let created = '';
  const first = await ensureServingCA({ store: s, namespace: 'certsmith', secretName: 'webhook-ca', clock, onCreated: (r) => (created = r) });
  assert.equal(created, 'the Secret does not exist');
  const stored = await s.get<KubeObject & { type: string; data: Record<string, string> }>(SecretType, 'certsmith', 'webhook-ca');
  assert.ok(stored);
  assert.equal(stored.type, 'kubernetes.io/tls');
  assert.equal(stored.metadata.annotations?.[CAInjectorAnnotation.allowDirectInjection], 'true');
  assert.equal(Buffer.from(stored.data['ca.crt'], 'base64').toString(), first.certPem);
  assert.equal(Buffer.from(stored.data['tls.crt'], 'base64').toString(), first.certPem);
  assert.equal(Buffer.from(stored.data['tls.key'], 'base64').toString(), first.keyPem);

  created = '';
  const again = await ensureServingCA({ store: s, namespace: 'certsmith', secretName: 'webhook-ca', clock, onCreated: (r) => (created = r) });
  assert.deepEqual(again, first, 'a valid CA is reused, not replaced');
  assert.equal(created, '');

  // in the last third of its life the CA is replaced in the same Secret; other keys and annotations stay
  await s.patch(SecretType, 'certsmith', 'webhook-ca', 'merge', { metadata: { annotations: { keep: 'me' } }, data: { extra: b64('x') } });
  clock.advance(250 * DAY);
  const renewed = await ensureServingCA({ store: s, namespace: 'certsmith', secretName: 'webhook-ca', clock, onCreated: (r) => (created = r) });
  assert.notEqual(renewed.certPem, first.certPem);
  assert.match(created, /due for renewal/);
  const after = await s.get<KubeObject & { data: Record<string, string> }>(SecretType, 'certsmith', 'webhook-ca');
  // the old CA stays in the bundle while it is valid: serving certificates it signed still verify
  assert.equal(Buffer.from(after!.data['ca.crt'], 'base64').toString(), `${renewed.certPem.trimEnd()}\n${first.certPem.trimEnd()}\n`);
  assert.equal(Buffer.from(after!.data['tls.crt'], 'base64').toString(), renewed.certPem);
  assert.equal(after!.metadata.annotations?.keep, 'me');
  assert.equal(after!.metadata.annotations?.[CAInjectorAnnotation.allowDirectInjection], 'true');
  assert.equal(Buffer.from(after!.data.extra, 'base64').toString(), 'x');

  // an expired CA is not carried along
  clock.advance(400 * DAY);
  const third = await ensureServingCA({ store: s, namespace: 'certsmith', secretName: 'webhook-ca', clock });
  const last = await s.get<KubeObject & { data: Record<string, string> }>(SecretType, 'certsmith', 'webhook-ca');
  assert.equal(Buffer.from(last!.data['ca.crt'], 'base64').toString(), third.certPem);
  await s.close();
});

test('ensureServingCA: a create that loses the race adopts the winner\'s CA', async () => {
  const s = await store();
  const rival = await createCA(new Date());
  let creates = 0;
  const racing: Store = {
    ...s,
    async create(type, obj, opts) {
      if (type === SecretType && creates++ === 0) {
        // another replica got there first
        await s.create(SecretType, { ...pairSecret(rival), metadata: { name: 'webhook-ca', namespace: 'certsmith' } });
        throw new StoreError('AlreadyExists', 'secrets "webhook-ca" already exists');
      }
      return s.create(type, obj, opts);
    },
  };
  const got = await ensureServingCA({ store: racing, namespace: 'certsmith', secretName: 'webhook-ca', clock: realClock, retryDelayMs: 1 });
  assert.deepEqual(got, rival);
  assert.equal(creates, 1);
  await s.close();
});

test('ensureServingCA: bounded when the Secret keeps changing, and other errors name the Secret', async () => {
  const s = await store();
  let writes = 0;
  const conflicting: Store = { ...s, create: async () => { writes++; throw new StoreError('Conflict', 'the object has been modified'); } };
  await assert.rejects(ensureServingCA({ store: conflicting, namespace: 'certsmith', secretName: 'webhook-ca', clock: realClock, maxAttempts: 3, retryDelayMs: 1 }),
    /cannot write the webhook CA to Secret certsmith\/webhook-ca: it kept changing under us \(3 attempts\)/);
  assert.equal(writes, 3);
  const forbidden: Store = { ...s, create: async () => { throw new StoreError('Forbidden', 'secrets is forbidden: User "x" cannot create resource "secrets"'); } };
  await assert.rejects(ensureServingCA({ store: forbidden, namespace: 'certsmith', secretName: 'webhook-ca', clock: realClock }),
    /cannot write the webhook CA to Secret certsmith\/webhook-ca: secrets is forbidden/);
  await s.close();
});

test('issueServingCertificate: DNS and IP SANs, server auth, 7 days, signed by the CA', async () => {
  const leaf = await issueServingCertificate(ca, ['certsmith-webhook.certsmith.svc', '127.0.0.1', '::1'], new Date(start.getTime() + DAY));
  const x = new X509Certificate(leaf.certPem);
  assert.equal(x.subjectAltName, 'DNS:certsmith-webhook.certsmith.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
  assert.ok(x.verify(new X509Certificate(ca.certPem).publicKey));
  assert.equal(x.ca, false);
  assert.deepEqual(x.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.equal(leaf.notAfter.getTime() - leaf.notBefore.getTime(), 7 * DAY);
  assert.equal(leaf.caPem, ca.certPem);
  assert.equal(servingRenewalTime(leaf).getTime(), leaf.notBefore.getTime() + 7 * DAY * 2 / 3);
  // never past the CA
  const late = await issueServingCertificate(ca, ['a'], new Date(start.getTime() + 362 * DAY));
  assert.equal(late.notAfter.getTime(), start.getTime() + 365 * DAY);
  await assert.rejects(issueServingCertificate(ca, [], start), /at least one DNS name or IP address \(--dns-names\)/);
});

test('ServingCertificates renews the serving certificate before it expires and follows a replaced CA (fake clock)', async () => {
  const s = await store();
  const clock = new FakeClock(start);
  const rotated: Array<{ notBefore: Date; caPem: string }> = [];
  const certs = new ServingCertificates({
    store: s, namespace: 'certsmith', secretName: 'webhook-ca', clock, dnsNames: ['localhost'],
    caCheckIntervalMs: DAY, onRotated: (c) => rotated.push(c),
  });
  const first = await certs.start();
  assert.equal(rotated.length, 1);
  const step = async () => {
    clock.set(clock.nextTimerAt()!);
    await certs.idle();
  };
  // daily checks leave the certificate alone until two thirds of its 7 days
  for (let i = 0; i < 4; i++) await step();
  assert.equal(rotated.length, 1);
  assert.equal(certs.current(), first);
  while (clock.now() < servingRenewalTime(first)) await step();
  assert.equal(rotated.length, 2);
  assert.equal(rotated[1].notBefore.getTime(), servingRenewalTime(first).getTime() - (servingRenewalTime(first).getTime() % 1000));
  assert.ok(certs.current()!.notAfter > first.notAfter);

  // someone replaces the CA in the Secret: the next check issues from the new one
  await s.delete(SecretType, 'certsmith', 'webhook-ca');
  await s.create(SecretType, { ...pairSecret(otherCA), metadata: { name: 'webhook-ca', namespace: 'certsmith' } });
  await step();
  assert.equal(rotated.length, 3);
  assert.equal(rotated[2].caPem, otherCA.certPem);
  assert.ok(new X509Certificate(certs.current()!.certPem).verify(new X509Certificate(otherCA.certPem).publicKey));

  certs.stop();
  assert.equal(clock.pendingTimers(), 0, 'stop cancels the timer');
  await s.close();
});

test('ServingCertificates: a failed round is retried with a doubling, capped delay while the old certificate serves', async () => {
  const s = await store();
  const clock = new FakeClock(start);
  let broken = false;
  const flaky: Store = { ...s, get: (type, ns, name) => (broken ? Promise.reject(new Error('connection refused')) : s.get(type, ns, name)) };
  const delays: number[] = [];
  const certs = new ServingCertificates({
    store: flaky, namespace: 'certsmith', secretName: 'webhook-ca', clock, dnsNames: ['localhost'],
    caCheckIntervalMs: 60_000, renewRetryDelayMs: 1000, maxRetryDelayMs: 8000,
    onError: (err, retryIn) => {
      assert.match(err.message, /connection refused/);
      delays.push(retryIn);
    },
  });
  const first = await certs.start();
  broken = true;
  for (let i = 0; i < 6; i++) {
    clock.set(clock.nextTimerAt()!);
    await certs.idle();
  }
  assert.deepEqual(delays, [1000, 2000, 4000, 8000, 8000, 8000]);
  assert.equal(certs.current(), first);
  broken = false;
  clock.set(clock.nextTimerAt()!);
  await certs.idle();
  assert.equal(delays.length, 6, 'recovered');
  assert.equal(clock.nextTimerAt()!.getTime() - clock.now().getTime(), 60_000, 'back to the regular check');
  certs.stop();
  await s.close();
});
