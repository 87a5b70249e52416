// Each doctor check's sentence and fix for the facts it is given (no network: the gatherer's job).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkResolution } from './resolution.ts';
import { checkHTTP01 } from './http01.ts';
import { caaClimb, checkCAA } from './caa.ts';
import { txtFindings } from './txt.ts';
import { checkAccount, checkIssuerReady } from './issuer.ts';
import { checkLastProblem, parseProblem } from './problem.ts';
import { checkRateLimits } from './rate-limit.ts';
import { checkBackoff } from './backoff.ts';
import { checkDelivery } from './delivery.ts';
import { checkApproval } from './approval.ts';
import { ACMEOrderAnnotation } from '../../api/annotations.ts';
import { relative } from '../finding.ts';

const now = new Date('2026-03-01T00:00:00Z');
const servers = ['127.0.0.1:8053'];

test('resolution: addresses, SERVFAIL, NXDOMAIN for HTTP-01 and DNS-01, no answer', () => {
  assert.deepEqual(checkResolution({ name: 'a.example.test', addresses: ['127.0.0.1'], servers }, true),
    { check: 'dns', severity: 'ok', sentence: 'a.example.test resolves to 127.0.0.1 (asked 127.0.0.1:8053).' });
  const sf = checkResolution({ name: 'a.example.test', addresses: [], error: 'ESERVFAIL', servers }, false);
  assert.equal(sf.severity, 'error');
  assert.equal(sf.sentence, 'a.example.test does not resolve: 127.0.0.1:8053 answered SERVFAIL, so the CA\'s own lookups (address and CAA) fail too and it will refuse the name.');
  assert.match(sf.fix!, /dig a\.example\.test @<nameserver>/);
  assert.equal(checkResolution({ name: 'a.example.test', addresses: [], error: 'ENOTFOUND', servers }, true).severity, 'error');
  assert.equal(checkResolution({ name: 'a.example.test', addresses: [], error: 'ENOTFOUND', servers }, false).severity, 'info');
  const none = checkResolution({ name: 'a.example.test', addresses: [], servers }, true);
  assert.equal(none.sentence, 'a.example.test has no A or AAAA record (asked 127.0.0.1:8053), so the CA has nowhere to connect for HTTP-01.');
  assert.match(checkResolution({ name: 'a.example.test', addresses: [], error: 'ECONNREFUSED', servers }, true).sentence, /gave no usable answer \(ECONNREFUSED\)/);
});

test('HTTP-01: refused, probe answered 404, wrong body for a pending challenge, redirect', () => {
  const url = 'http://a.example.test:5002/.well-known/acme-challenge/t';
  const refused = checkHTTP01({ name: 'a.example.test', url, expected: 't.thumb', outcome: { kind: 'failed', address: '127.0.0.1', port: 5002, code: 'ECONNREFUSED' } });
  assert.equal(refused.severity, 'error');
  assert.equal(refused.sentence, `The CA cannot fetch ${url}: nothing listens on 127.0.0.1:5002 (connection refused).`);
  assert.match(refused.fix!, /--acme-http01-listen/);
  const notYet = checkHTTP01({ name: 'a.example.test', url, outcome: { kind: 'failed', address: '127.0.0.1', port: 5002, code: 'ECONNREFUSED' } });
  assert.equal(notYet.severity, 'warning');
  assert.equal(notYet.sentence, `Nothing listens on 127.0.0.1:5002 for ${url} yet (connection refused); certsmith starts its HTTP-01 responder with the first challenge, so this blocks issuance only if that address does not lead to this server.`);
  assert.equal(checkHTTP01({ name: 'a.example.test', url, outcome: { kind: 'failed', address: '127.0.0.1', port: 5002, code: 'ETIMEDOUT' } }).severity, 'error');
  const probe = checkHTTP01({ name: 'a.example.test', url, outcome: { kind: 'answered', address: '127.0.0.1', port: 5002, status: 404, body: '' } });
  assert.equal(probe.severity, 'ok');
  assert.match(probe.sentence, /answered 404 to a token that does not exist, as certsmith's responder does/);
  const wrong = checkHTTP01({ name: 'a.example.test', url, expected: 't.thumb', outcome: { kind: 'answered', address: '127.0.0.1', port: 5002, status: 200, server: 'nginx', body: 'hello' } });
  assert.equal(wrong.severity, 'error');
  assert.equal(wrong.sentence, `${url} answered HTTP 200 with "hello" from 127.0.0.1:5002 (Server: nginx) instead of the pending challenge's key authorization.`);
  assert.equal(checkHTTP01({ name: 'a.example.test', url, expected: 't.thumb', outcome: { kind: 'answered', address: '127.0.0.1', port: 5002, status: 200, body: 't.thumb' } }).severity, 'ok');
  assert.equal(checkHTTP01({ name: 'a.example.test', url, outcome: { kind: 'answered', address: '127.0.0.1', port: 5002, status: 301, location: 'https://x/', body: '' } }).severity, 'info');
  assert.equal(checkHTTP01({ name: 'a.example.test', url, outcome: { kind: 'answered', address: '127.0.0.1', port: 5002, status: 200, body: 'index' } }).severity, 'warning');
});

test('CAA: climbs to the first non-empty set; issue vs issuewild; identities; SERVFAIL; critical unknown tag', () => {
  assert.deepEqual(caaClimb('*.a.b.example.test'), ['a.b.example.test', 'b.example.test', 'example.test', 'test']);
  const empty = (domain: string) => ({ domain, records: [] });
  const le = { domain: 'example.test', records: [{ flags: 0, tag: 'issue', value: 'letsencrypt.org; validationmethods=dns-01' }] };
  const forbid = checkCAA('a.example.test', [empty('a.example.test'), le], ['pebble.test']);
  assert.equal(forbid.severity, 'error');
  assert.equal(forbid.sentence, 'The CAA issue records at example.test allow only letsencrypt.org to issue for a.example.test; this CA identifies as pebble.test, so it must refuse.');
  assert.equal(forbid.fix, 'Add example.test. CAA 0 issue "pebble.test" next to the existing records, or remove the CAA restriction.');
  assert.equal(checkCAA('a.example.test', [le], ['LetsEncrypt.org']).severity, 'ok');
  assert.equal(checkCAA('a.example.test', [le], undefined).severity, 'warning');
  assert.match(checkCAA('a.example.test', [le], []).sentence, /publishes no meta\.caaIdentities/);
  const wild = { domain: 'example.test', records: [{ flags: 0, tag: 'issue', value: 'pebble.test' }, { flags: 0, tag: 'issuewild', value: ';' }] };
  assert.equal(checkCAA('a.example.test', [wild], ['pebble.test']).severity, 'ok');
  assert.match(checkCAA('*.example.test', [wild], ['pebble.test']).sentence, /issuewild records at example.test allow only no CA at all/);
  const sf = checkCAA('a.example.test', [{ domain: 'a.example.test', records: [], error: 'ESERVFAIL' }], ['pebble.test']);
  assert.equal(sf.severity, 'error');
  assert.equal(sf.sentence, 'The CAA lookup for a.example.test failed (SERVFAIL); a CA must not issue for a.example.test when it cannot read the CAA records (RFC 8659 §3).');
  assert.equal(checkCAA('a.example.test', [{ domain: 'a.example.test', records: [{ flags: 128, tag: 'tbs', value: 'x' }] }], ['pebble.test']).severity, 'error');
  assert.equal(checkCAA('a.example.test', [{ domain: 'a.example.test', records: [{ flags: 0, tag: 'iodef', value: 'mailto:x' }] }], ['pebble.test']).severity, 'ok');
  assert.equal(checkCAA('a.example.test', [empty('a.example.test'), empty('example.test'), empty('test')], ['pebble.test']).sentence,
    'No CAA records from a.example.test up to test: any CA may issue.');
});

test('DNS-01 TXT: per server, the value, a wrong value, none, a failed lookup', () => {
  const f = txtFindings({ fqdn: '_acme-challenge.a.example.test', expected: 'good', where: 'recursive', seen: { 'r1:53': ['good'], 'r2:53': ['wrong'], 'r3:53': [] } });
  assert.deepEqual(f.map((x) => x.severity), ['ok', 'error', 'error']);
  assert.equal(f[1].sentence, 'The recursive resolver r2:53 has "wrong" at _acme-challenge.a.example.test, not the challenge value "good".');
  assert.equal(f[2].sentence, 'The recursive resolver r3:53 has no TXT record at _acme-challenge.a.example.test, not the challenge value "good".');
  const e = txtFindings({ fqdn: '_acme-challenge.a.example.test', expected: 'good', where: 'authoritative', seen: {}, error: 'no zone found' });
  assert.equal(e[0].sentence, 'The TXT record _acme-challenge.a.example.test could not be checked at the authoritative nameservers: no zone found.');
});

test('issuer readiness and ACME account', () => {
  assert.equal(checkIssuerReady({ kind: 'ClusterIssuer', name: 'le' }).sentence, 'ClusterIssuer le does not exist.');
  const notReady = { kind: 'Issuer', name: 'le', issuer: { spec: { acme: {} }, status: { conditions: [{ type: 'Ready', status: 'False' as const, reason: 'ErrRegisterACMEAccount', message: 'Failed to register ACME account: ECONNREFUSED' }] } } };
  assert.equal(checkIssuerReady(notReady).sentence, 'Issuer le is not Ready (ErrRegisterACMEAccount): Failed to register ACME account: ECONNREFUSED');
  assert.equal(checkAccount(notReady)?.severity, 'error');
  assert.match(checkAccount(notReady)!.sentence, /^Issuer le has no usable ACME account: Failed to register/);
  const ok = { kind: 'Issuer', name: 'le', issuer: { spec: { acme: {} }, status: { acme: { uri: 'https://ca/acct/1', lastRegisteredEmail: 'ops@x' }, conditions: [{ type: 'Ready', status: 'True' as const }] } } };
  assert.equal(checkIssuerReady(ok).severity, 'ok');
  assert.equal(checkAccount(ok)?.sentence, 'The ACME account of Issuer le is registered at https://ca/acct/1 with contact ops@x.');
  assert.equal(checkAccount({ kind: 'Issuer', name: 'ca', issuer: { spec: { ca: {} } } }), undefined);
});

test('an ACME server that does not answer: the issuer check says so (not "correct the spec"), and a known account is not called unusable', () => {
  for (const message of [
    'Failed to verify ACME account: GET https://127.0.0.1:14000/dir: connect ECONNREFUSED 127.0.0.1:14000',
    'Failed to register ACME account: GET https://acme.example/dir: timed out',
    'Failed to verify ACME account: getaddrinfo ENOTFOUND acme.example',
    'Failed to verify ACME account: urn:ietf:params:acme:error:serverInternal: oops (HTTP 503)',
  ]) {
    const down = { kind: 'ClusterIssuer', name: 'le', issuer: { spec: { acme: { server: 'https://acme.example/dir' } }, status: { acme: { uri: 'https://acme.example/acct/7' }, conditions: [{ type: 'Ready', status: 'False' as const, reason: 'ErrVerifyACMEAccount', message }] } } };
    const issuer = checkIssuerReady(down);
    assert.equal(issuer.severity, 'error', message);
    assert.match(issuer.fix!, /^The ACME server does not answer: check that it runs and that this host reaches it\. The issuer asks again with backoff \(5 s doubling to 5 minutes\) and is Ready with the same account once it answers; its spec need not change\.$/, message);
    const account = checkAccount(down)!;
    assert.equal(account.severity, 'warning', message);
    assert.equal(account.sentence, 'The ACME account of ClusterIssuer le is registered at https://acme.example/acct/7; the ACME server does not answer now.');
  }
});

test('last ACME problem with subproblems, parsed back from the reason', () => {
  const reason = 'Failed to create Order: urn:ietf:params:acme:error:rejectedIdentifier: Error creating new order (HTTP 400) [a.example.test: urn:ietf:params:acme:error:caa: CAA forbids; b.example.test: urn:ietf:params:acme:error:dns: SERVFAIL]';
  assert.deepEqual(parseProblem(reason), {
    type: 'rejectedIdentifier', detail: 'Error creating new order', status: 400,
    subproblems: [{ identifier: 'a.example.test', type: 'caa', detail: 'CAA forbids' }, { identifier: 'b.example.test', type: 'dns', detail: 'SERVFAIL' }],
  });
  const f = checkLastProblem([
    { kind: 'Order', name: 'old', state: 'errored', reason: 'urn:ietf:params:acme:error:serverInternal: boom', at: '2026-01-01T00:00:00Z' },
    { kind: 'Order', name: 'new', state: 'errored', reason, at: '2026-02-01T00:00:00Z' },
  ], false)!;
  assert.equal(f.severity, 'error');
  assert.equal(f.sentence, 'The last ACME problem, on Order new (HTTP 400), was rejectedIdentifier: Error creating new order. Subproblems: a.example.test: caa: CAA forbids. b.example.test: dns: SERVFAIL.');
  assert.match(f.fix!, /CAA records/);
  assert.equal(checkLastProblem([{ kind: 'Challenge', name: 'c', state: 'pending' }], false), undefined);
  assert.equal(checkLastProblem([{ kind: 'Order', name: 'o', state: 'invalid', reason: 'odd' }], true)?.sentence, 'Order o is invalid: odd');
});

test('rate limits: until a future time blocks, a past one does not', () => {
  const f = checkRateLimits([
    { order: 'o1', annotations: { [ACMEOrderAnnotation.rateLimitedUntil]: '2026-03-01T01:30:00Z' }, reason: 'Rate limited by the ACME server until 2026-03-01T01:30:00Z: too many new orders' },
    { order: 'o2', annotations: { [ACMEOrderAnnotation.rateLimitedUntil]: '2026-02-28T23:00:00Z' } },
    { order: 'o3' },
  ], now);
  assert.equal(f.length, 2);
  assert.equal(f[0].severity, 'error');
  assert.equal(f[0].sentence, 'The ACME server rate-limited Order o1 (too many new orders); its Retry-After says to wait, so certsmith sends nothing for this order before 2026-03-01T01:30:00Z (in 1h 30m).');
  assert.equal(f[1].severity, 'info');
});

test('backoff: attempts, last failure and the next attempt', () => {
  const f = checkBackoff({ certificate: 'web', ready: false, failedAttempts: 3, lastFailureTime: '2026-02-28T23:00:00Z', nextAttempt: new Date('2026-03-01T03:00:00Z') }, now)!;
  assert.equal(f.severity, 'error');
  assert.equal(f.sentence, 'Issuance of web failed 3 times in a row, last at 2026-02-28T23:00:00Z; certsmith tries again at 2026-03-01T03:00:00.000Z (in 3h).');
  assert.equal(f.fix, 'Fix the cause above, then run "certsmith renew web" to try at once instead of waiting.');
  assert.equal(checkBackoff({ certificate: 'web', ready: true, failedAttempts: 1, lastFailureTime: '2026-02-28T23:00:00Z', nextAttempt: new Date('2026-03-01T00:00:00Z') }, now)?.severity, 'warning');
  assert.equal(checkBackoff({ certificate: 'web', ready: true, failedAttempts: 0 }, now), undefined);
});

test('relative times', () => {
  assert.equal(relative(new Date('2026-03-01T00:00:40Z'), now), 'in 40s');
  assert.equal(relative(new Date('2026-02-28T23:57:00Z'), now), '3m ago');
  assert.equal(relative(new Date('2026-03-03T05:00:00Z'), now), 'in 2d 5h');
});

test('the report: one line per finding, a fix under each that is not ok, and whether issuance is blocked', async () => {
  const { formatDiagnosis } = await import('../diagnose.ts');
  const text = formatDiagnosis({ certificate: 'default/web', headline: 'Certificate default/web: Ready', findings: [
    { check: 'issuer', severity: 'ok', sentence: 'ClusterIssuer le is Ready.', fix: 'never shown' },
    { check: 'caa', severity: 'error', sentence: 'CAA forbids.', fix: 'Add a record.' },
  ] });
  assert.equal(text, 'Certificate default/web: Ready\n  [ok] issuer: ClusterIssuer le is Ready.\n  [ERROR] caa: CAA forbids.\n      fix: Add a record.\n  1 problem blocks issuance.\n');
  assert.match(formatDiagnosis({ certificate: 'x', headline: 'h', findings: [] }), /Nothing blocks issuance\.\n$/);
});

test('delivery: files under --secrets-dir not written and a failing deploy hook are errors; none of either, nothing to say', () => {
  assert.deepEqual(checkDelivery({}), []);
  assert.deepEqual(checkDelivery({ filesMirrored: { type: 'FilesMirrored', status: 'True', reason: 'Mirrored', message: '' }, hook: { failed: false, message: 'Deploy hook for revision 2 succeeded' } }), []);
  const [files, hook] = checkDelivery({
    filesMirrored: { type: 'FilesMirrored', status: 'False', reason: 'FilesPublishFailed', message: 'Files under --secrets-dir not written: EROFS on mkdir /etc/certsmith/live/default/web-tls' },
    hook: { failed: true, message: 'Deploy hook for revision 2 failed: exited with status 3' },
  });
  assert.deepEqual([files.check, files.severity], ['files', 'error']);
  assert.equal(files.sentence, 'The issued certificate is not in its files, so what reads them serves an older one: Files under --secrets-dir not written: EROFS on mkdir /etc/certsmith/live/default/web-tls.');
  assert.match(files.fix!, /--secrets-dir/);
  assert.deepEqual([hook.check, hook.severity], ['deploy-hook', 'error']);
  assert.equal(hook.sentence, 'Deploy hook for revision 2 failed: exited with status 3.');
  assert.match(hook.fix!, /--deploy-hook/);
});

test('the report tells problems that block issuance from those that keep an issued certificate from use', async () => {
  const { formatDiagnosis } = await import('../diagnose.ts');
  const text = formatDiagnosis({ certificate: 'default/web', headline: 'Certificate default/web: Ready', findings: [
    { check: 'issuer', severity: 'ok', sentence: 'ClusterIssuer le is Ready.' },
    { check: 'deploy-hook', severity: 'error', sentence: 'Deploy hook for revision 2 failed.', fix: 'Run it.' },
  ] });
  assert.match(text, /\n {2}Nothing blocks issuance\.\n {2}1 problem keeps the issued certificate from use \(files, deploy hook\)\.\n$/);
});

test('an Order its request already replaced with a newer one (a retry that does not count) is no problem of the Certificate; the newest Order of each request is', async () => {
  const { currentOrders } = await import('./problem.ts');
  const order = (name: string, request: string, created: string) => ({ metadata: { name, creationTimestamp: created, ownerReferences: [{ uid: request, controller: true }] } });
  const orders = [order('a-1-old', 'r1', '2026-03-01T00:00:00Z'), order('a-1-new', 'r1', '2026-03-01T00:05:00Z'), order('b-1', 'r2', '2026-03-01T00:00:00Z')];
  assert.deepEqual(currentOrders(orders).map((o) => o.metadata.name).sort(), ['a-1-new', 'b-1']);
  // within one second the retry count the controllers stamp decides
  const retry = { ...order('c-1-a', 'r3', '2026-03-01T00:00:00Z'), metadata: { ...order('c-1-a', 'r3', '2026-03-01T00:00:00Z').metadata, annotations: { [ACMEOrderAnnotation.retry]: '1' } } };
  assert.deepEqual(currentOrders([retry, order('c-1-x', 'r3', '2026-03-01T00:00:00Z')]).map((o) => o.metadata.name), ['c-1-a']);
});

test('approval: the current request denied is an error naming who said what; one waiting for approval is a warning naming the command; an approved one, nothing', () => {
  const request = (conditions: { type: string; status: 'True' | 'False'; reason?: string; message?: string }[]) => ({ name: 'web-1', conditions });
  const [denied] = checkApproval('default/web', request([{ type: 'Denied', status: 'True', reason: 'Policy', message: 'not allowed by on-call' }, { type: 'Ready', status: 'False', reason: 'Denied', message: 'The CertificateRequest was denied by an approval controller' }]));
  assert.equal(denied.severity, 'error');
  assert.equal(denied.sentence, 'CertificateRequest web-1 was denied (Policy: not allowed by on-call), so it is never issued.');
  assert.match(denied.fix ?? '', /certsmith renew -n default web/);
  const [waiting] = checkApproval('default/web', request([]));
  assert.equal(waiting.severity, 'warning');
  assert.equal(waiting.sentence, 'CertificateRequest web-1 is neither approved nor denied: no issuer signs it until it is approved.');
  assert.match(waiting.fix ?? '', /certsmith approve -n default web-1/);
  assert.deepEqual(checkApproval('default/web', request([{ type: 'Approved', status: 'True', reason: 'cert-manager.io', message: 'auto' }])), []);
  assert.deepEqual(checkApproval('default/web', undefined), []);
});
