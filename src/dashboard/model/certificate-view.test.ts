// The dashboard's derivations: states against a fixed time (backing off turns into failed when
// the next attempt comes), the request → order → challenge chain by owner, and a Secret's key
// never reaching what is sent to the browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import type { Secret } from '../../api/meta.ts';
import { defaultBackoff } from '../../shared/backoff.ts';
import { detail, summarize } from './certificate-view.ts';
import { leafOf } from './public-certificate.ts';

const HOUR = 3_600_000;
const t0 = new Date('2026-03-01T10:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

function certificate(status: CertificateObj['status'] = {}): CertificateObj {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
    metadata: { name: 'web', namespace: 'default', uid: 'crt-uid', resourceVersion: '7' },
    spec: { secretName: 'web-tls', dnsNames: ['web.example.test'], issuerRef: { name: 'pebble', kind: 'ClusterIssuer' } },
    status,
  } as CertificateObj;
}

test('a failed certificate backs off until its next attempt, then is failed (waiting to retry)', () => {
  const crt = certificate({
    lastFailureTime: t0.toISOString(), issuanceAttempts: 1,
    conditions: [{ type: 'Ready', status: 'False', reason: 'DoesNotExist' }, { type: 'Issuing', status: 'False', reason: 'Failed' }],
  });
  const before = summarize(crt, undefined, { now: at(HOUR / 2), backoff: defaultBackoff, certificates: [crt] });
  assert.deepEqual(before.states, ['backing-off', 'failed']);
  assert.equal(before.timeline.nextAttempt, at(HOUR).toISOString());
  assert.equal(before.timeline.failedAttempts, 1);
  const after = summarize(crt, undefined, { now: at(HOUR + 1000), backoff: defaultBackoff, certificates: [crt] });
  assert.deepEqual(after.states, ['failed']);
});

test('expiring: under 7 days left (of a long lifetime) or past the renewal time; Ready otherwise', () => {
  const ready = [{ type: 'Ready', status: 'True' as const, reason: 'Ready' }];
  const crt = certificate({ conditions: ready, notBefore: t0.toISOString(), notAfter: at(30 * 24 * HOUR).toISOString(), renewalTime: at(20 * 24 * HOUR).toISOString() });
  const ctx = (now: Date) => ({ now, backoff: defaultBackoff, certificates: [crt] });
  assert.deepEqual(summarize(crt, undefined, ctx(at(HOUR))).states, ['ready']);
  assert.deepEqual(summarize(crt, undefined, ctx(at(21 * 24 * HOUR))).states, ['expiring', 'ready']);
  const renewing = certificate({ ...crt.status, conditions: [...ready, { type: 'Issuing', status: 'True' as const, reason: 'Renewing' }] });
  assert.equal(summarize(renewing, undefined, ctx(at(21 * 24 * HOUR))).state, 'renewing');
  // a renewal still not done in the last tenth of the lifetime (a broken issuer, a pending
  // request) is first of all a certificate about to expire
  assert.deepEqual(summarize(renewing, undefined, ctx(at(28 * 24 * HOUR))).states, ['expiring', 'renewing', 'ready']);
});

test('expiring is judged by the lifetime too: a healthy 6-day certificate is Ready, not Expiring, until its last tenth or its renewal time', () => {
  const ready = [{ type: 'Ready', status: 'True' as const, reason: 'Ready' }];
  // Let's Encrypt's short-lived profile: 160 hours, renewed at half-life
  const crt = certificate({ conditions: ready, notBefore: t0.toISOString(), notAfter: at(160 * HOUR).toISOString(), renewalTime: at(80 * HOUR).toISOString() });
  const ctx = (now: Date) => ({ now, backoff: defaultBackoff, certificates: [crt] });
  assert.deepEqual(summarize(crt, undefined, ctx(at(HOUR))).states, ['ready'], 'fresh');
  assert.deepEqual(summarize(crt, undefined, ctx(at(79 * HOUR))).states, ['ready'], 'before its renewal time');
  assert.deepEqual(summarize(crt, undefined, ctx(at(81 * HOUR))).states, ['expiring', 'ready'], 'past its renewal time');
  const noRenewal = certificate({ ...crt.status, renewalTime: undefined });
  assert.deepEqual(summarize(noRenewal, undefined, ctx(at(140 * HOUR))).states, ['ready'], '20 h left of 160');
  assert.deepEqual(summarize(noRenewal, undefined, ctx(at(145 * HOUR))).states, ['expiring', 'ready'], 'the last tenth');
});

test('a certificate never issued is Not ready, not Renewing, and the Why is the failed issuance\'s cause, not Ready\'s "Secret does not exist"', () => {
  const waiting = certificate({ conditions: [
    { type: 'Ready', status: 'False', reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' },
    { type: 'Issuing', status: 'True', reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' },
  ] });
  const s = summarize(waiting, undefined, { now: t0, backoff: defaultBackoff, certificates: [waiting] });
  assert.deepEqual(s.states, ['not-ready']);
  const failed = certificate({ lastFailureTime: t0.toISOString(), issuanceAttempts: 2, conditions: [
    { type: 'Ready', status: 'False', reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' },
    { type: 'Issuing', status: 'False', reason: 'Failed', message: 'The certificate request has failed to complete and will be retried: rejectedIdentifier' },
  ] });
  assert.deepEqual(summarize(failed, undefined, { now: t0, backoff: defaultBackoff, certificates: [failed] }).why,
    { reason: 'Failed', message: 'The certificate request has failed to complete and will be retried: rejectedIdentifier' });
  // a denied request: the Issuing condition carries the denial's reason (cert-manager's), not "Failed"
  const denied = certificate({ lastFailureTime: t0.toISOString(), issuanceAttempts: 1, conditions: [
    { type: 'Ready', status: 'False', reason: 'DoesNotExist', message: 'Issuing certificate as Secret does not exist' },
    { type: 'Issuing', status: 'False', reason: 'Policy', message: 'not allowed by on-call' },
  ] });
  assert.deepEqual(summarize(denied, undefined, { now: t0, backoff: defaultBackoff, certificates: [denied] }).why, { reason: 'Policy', message: 'not allowed by on-call' });
  const ok = certificate({ conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'Certificate is up to date and has not expired' }] });
  assert.deepEqual(summarize(ok, undefined, { now: t0, backoff: defaultBackoff, certificates: [ok] }).why, { reason: 'Ready', message: 'Certificate is up to date and has not expired' });
});

test("a certificate's page follows owners from request to order to challenge and keeps their errors and events", () => {
  const crt = certificate({ revision: 1 });
  const own = (kind: string, name: string, uid: string) => [{ apiVersion: 'v1', kind, name, uid, controller: true }];
  const cr = { metadata: { name: 'web-1', namespace: 'default', uid: 'cr-uid', ownerReferences: own('Certificate', 'web', 'crt-uid'), annotations: { 'cert-manager.io/certificate-revision': '1' } }, spec: { request: '', issuerRef: { name: 'pebble' } } } as unknown as CertificateRequestObj;
  const other = { metadata: { name: 'other-1', namespace: 'default', uid: 'x', ownerReferences: own('Certificate', 'other', 'other-uid') }, spec: { request: '', issuerRef: { name: 'pebble' } } } as unknown as CertificateRequestObj;
  const order = { apiVersion: 'acme.cert-manager.io/v1', kind: 'Order', metadata: { name: 'web-1-1', namespace: 'default', uid: 'o-uid', ownerReferences: own('CertificateRequest', 'web-1', 'cr-uid') }, status: { state: 'invalid', reason: 'connection refused' } };
  const challenge = { apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', metadata: { name: 'web-1-1-1', namespace: 'default', uid: 'ch-uid', ownerReferences: own('Order', 'web-1-1', 'o-uid') }, spec: { type: 'HTTP-01', dnsName: 'web.example.test', key: 'token.thumbprint' }, status: { state: 'pending', reason: 'self-check: wrong status code 404', presented: true } };
  const event = (uid: string, reason: string) => ({ apiVersion: 'v1', kind: 'Event', metadata: { name: `e-${reason}`, namespace: 'default' }, involvedObject: { uid, kind: 'X', name: 'y' }, type: 'Warning', reason, message: reason, lastTimestamp: t0.toISOString() });
  const d = detail(crt, undefined, {
    requests: [cr, other], orders: [order], challenges: [challenge],
    events: [event('ch-uid', 'Failed'), event('crt-uid', 'DeployHookFailed'), event('x', 'Unrelated')],
  }, { now: t0, backoff: defaultBackoff, certificates: [crt] });
  assert.equal(d.requests.length, 1);
  assert.equal(d.requests[0].revision, '1');
  assert.deepEqual(d.requests[0].orders.map((o) => [o.name, o.state, o.reason]), [['web-1-1', 'invalid', 'connection refused']]);
  assert.deepEqual(d.requests[0].orders[0].challenges.map((c) => [c.dnsName, c.state, c.reason, c.presented]), [['web.example.test', 'pending', 'self-check: wrong status code 404', true]]);
  assert.deepEqual(d.events.map((e) => e.reason).sort(), ['DeployHookFailed', 'Failed']);
  assert.deepEqual(d.deployHooks.events.map((e) => e.reason), ['DeployHookFailed']);
  // the key authorization is the challenge's, not shown
  assert.ok(!JSON.stringify(d).includes('token.thumbprint'));
});

test("only the leaf's public fields come out of a Secret", () => {
  const pem = execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=leaf.example.test',
    '-addext', 'subjectAltName=DNS:leaf.example.test', '-days', '1', '-keyout', '-', '-out', '-'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const key = pem.slice(pem.indexOf('-----BEGIN PRIVATE KEY'), pem.indexOf('-----END PRIVATE KEY'));
  const crt = pem.slice(pem.indexOf('-----BEGIN CERTIFICATE'));
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'web-tls', namespace: 'default' }, data: { 'tls.crt': b64(crt), 'tls.key': b64(key), 'keystore.p12': b64('p12 bytes') } } as Secret;
  const leaf = leafOf(secret);
  assert.equal(leaf.public?.subject, 'CN=leaf.example.test');
  assert.deepEqual(leaf.public?.dnsNames, ['leaf.example.test']);
  const sent = JSON.stringify(leaf.public);
  assert.doesNotMatch(sent, /PRIVATE KEY/);
  for (const v of [b64(key), key.split('\n')[1], b64('p12 bytes')]) assert.ok(!sent.includes(v));
  assert.equal(leafOf(undefined).error, 'the Secret does not exist');
  assert.match(leafOf({ ...secret, data: { 'tls.crt': b64('junk') } }).error ?? '', /^tls.crt does not parse/);
});

test('the timeline carries the ARI window the CA suggested, its explanation and the last error', () => {
  const ari = {
    suggestedWindow: { start: at(30 * 24 * HOUR).toISOString(), end: at(31 * 24 * HOUR).toISOString() },
    explanationURL: 'https://ca.example/why', lastChecked: t0.toISOString(), nextCheck: at(6 * HOUR).toISOString(), lastError: 'HTTP 503',
  };
  const crt = certificate({ conditions: [{ type: 'Ready', status: 'True', reason: 'Ready' }], acme: { ari } } as CertificateObj['status']);
  const { timeline } = summarize(crt, undefined, { now: t0, backoff: defaultBackoff, certificates: [crt] });
  assert.deepEqual(timeline.ari, {
    start: ari.suggestedWindow.start, end: ari.suggestedWindow.end, explanationURL: ari.explanationURL,
    lastChecked: ari.lastChecked, nextCheck: ari.nextCheck, lastError: 'HTTP 503',
  });
  // a certificate of an issuer without ARI has none
  assert.equal(summarize(certificate(), undefined, { now: t0, backoff: defaultBackoff, certificates: [] }).timeline.ari, undefined);
});
