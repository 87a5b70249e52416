// `certsmith doctor` against a real server, Pebble (behind the fault proxy) and challtestsrv, each
// fault made real on loopback: SERVFAIL and CAA records from challtestsrv, a wrong DNS-01 TXT
// record written by the exec hook, Pebble answering 429, an HTTP-01 port nobody serves, an issuer
// whose ACME server is not there. Each test asserts the sentence printed and the exit status.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { freePort, startChallTestSrv, startNamed, startPebble, type ChallTestSrv, type Named, type Pebble } from '../rig/index.ts';
import { startFaultProxy, type FaultProxy } from '../rig/fault-proxy.ts';
import { makeTempDir, removeTempDir } from '../rig/processes.ts';
import { startServer, waitFor, type RunningServer } from './harness.ts';
import { ANN_RATE_LIMITED } from '../../src/controllers/acme/recovery.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('certsmith doctor', () => {
  let cts: ChallTestSrv;
  let named: Named;
  let pebble: Pebble;
  let proxy: FaultProxy;
  let server: RunningServer;
  let dir: string;
  let httpPort: number;

  /** challtestsrv's management API: the faults the rig's helpers do not cover (SERVFAIL, CAA) */
  const manage = (endpoint: string, body: unknown) => new Promise<void>((resolve, reject) => {
    const req = http.request(`${cts.managementUrl}${endpoint}`, { method: 'POST', agent: false }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`challtestsrv ${endpoint}: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });

  const apply = async (doc: unknown) => {
    const r = await server.cli(['apply', '-f', '-'], { input: JSON.stringify(doc) });
    assert.equal(r.code, 0, r.stderr);
  };
  const getJSON = async <T>(kind: string, name?: string): Promise<T | undefined> => {
    const r = await server.cli(['get', kind, ...(name ? [name] : []), '-o', 'json']);
    return r.code === 0 ? JSON.parse(r.stdout) as T : undefined;
  };
  const certificate = (name: string, dnsName: string, issuer = 'pebble') => apply({
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: 'default' },
    spec: { secretName: `${name}-tls`, dnsNames: [dnsName], issuerRef: { name: issuer, kind: 'ClusterIssuer' } },
  });
  /** doctor with the flags the server was started with (as a user would copy them) */
  const doctor = (args: string[]) => server.cli(['doctor', '--acme-http01-solver-nameservers', cts.dnsServer,
    '--dns01-recursive-nameservers', cts.dnsServer, '--dns01-recursive-nameservers-only', '--http01-port', String(httpPort), ...args]);
  type Conditioned = { status?: { conditions?: { type: string; status: string }[] } };
  const isReady = (o: Conditioned | undefined) => o?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

  before(async () => {
    cts = await startChallTestSrv();
    // authoritative for dns.example.test, where the DNS-01 names live; the hook writes to challtestsrv only
    named = await startNamed({ zone: 'dns.example.test', tsig: { name: 'doctor-key', algorithm: 'hmac-sha256' } });
    httpPort = await freePort();
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort });
    proxy = await startFaultProxy({ upstream: pebble.directoryUrl, upstreamCaPem: pebble.caPem });
    dir = await makeTempDir('doctor');
    // a DNS-01 hook that writes the wrong value: what a hook with a stale template or the wrong zone does
    const hook = path.join(dir, 'auth.sh');
    fs.writeFileSync(hook, `#!/bin/sh\nset -eu\ncurl -sf -X POST -d "{\\"host\\":\\"_acme-challenge.$CERTBOT_DOMAIN.\\",\\"value\\":\\"stale-value\\"}" ${cts.managementUrl}/set-txt\n`, { mode: 0o755 });
    server = await startServer({
      args: ['--acme-http01-listen', `127.0.0.1:${httpPort}`, '--acme-http01-self-check-port', String(httpPort), '--acme-http01-solver-nameservers', cts.dnsServer,
        '--dns01-recursive-nameservers', cts.dnsServer, '--dns01-recursive-nameservers-only', '--dns01-auth-hook', hook],
    });
    await apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: proxy.directoryUrl, email: 'ops@example.test', caBundle: b64(proxy.caPem), privateKeySecretRef: { name: 'pebble-account' },
          solvers: [
            { selector: { dnsZones: ['dns.example.test'] }, dns01: { webhook: { groupName: 'certsmith.io', solverName: 'exec' } } },
            { http01: { ingress: {} } },
          ],
        },
      },
    });
    await waitFor('ClusterIssuer pebble Ready', async () => isReady(await getJSON<Conditioned>('clusterissuer', 'pebble')), 60_000, 250);
  });
  after(async () => {
    await server?.stop();
    server?.cleanup();
    await Promise.all([proxy?.stop(), pebble?.stop(), cts?.stop(), named?.stop()]);
    if (dir) await removeTempDir(dir);
  });

  // first, while no other Certificate could take the one 429 answer
  test('Pebble answering 429 rateLimited: the order, the limit and the time of its Retry-After; exit 1', async () => {
    const limited = proxy.answer({ method: 'POST', path: /\/order-plz$/ }, { status: 429, type: 'rateLimited', detail: 'too many new orders (10) from this account in the last 3 hours', retryAfter: 3600 });
    await certificate('limited', `limited-${uniq()}.example.test`);
    await limited.hit;
    const order = await waitFor('Order marked rate limited', async () => {
      const list = await getJSON<{ items: { metadata: { name: string; annotations?: Record<string, string> } }[] }>('orders');
      return list?.items.find((o) => o.metadata.annotations?.[ANN_RATE_LIMITED]);
    }, 30_000, 250);
    const until = order.metadata.annotations![ANN_RATE_LIMITED];
    const r = await doctor(['limited']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stdout.includes(`[ERROR] rate-limit: The ACME server rate-limited Order ${order.metadata.name} (too many new orders (10) from this account in the last 3 hours); its Retry-After says to wait, so certsmith sends nothing for this order before ${until} (in `), r.stdout);
    assert.match(r.stdout, /fix: Wait for that time; deleting and recreating the Certificate does not help/);
    assert.match(r.stdout, /problem blocks issuance\./);
  });

  // second, for the same reason: the one refused newOrder is this Certificate's
  test('an order the CA refuses: the last ACME problem and the backoff until the next attempt; exit 1', async () => {
    const refused = proxy.answer({ method: 'POST', path: /\/order-plz$/ }, { status: 400, type: 'rejectedIdentifier', detail: 'Error creating new order :: Cannot issue for "refused.example.test": policy forbids it' });
    await certificate('refused', `refused-${uniq()}.example.test`);
    await refused.hit;
    type Failed = { status?: { lastFailureTime?: string } };
    const failedAt = await waitFor('Certificate refused failed', async () => (await getJSON<Failed>('certificate', 'refused'))?.status?.lastFailureTime, 30_000, 250);
    const r = await doctor(['refused']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /\[ERROR\] acme-problem: The last ACME problem, on Order refused-\S+ \(HTTP 400\), was rejectedIdentifier: Error creating new order :: Cannot issue for "refused\.example\.test": policy forbids it\./);
    assert.match(r.stdout, /fix: The CA will not issue for this name at all \(its policy\)/);
    // the server's default backoff: one hour after the first failure
    const next = new Date(Date.parse(failedAt) + 3_600_000).toISOString();
    assert.ok(r.stdout.includes(`[ERROR] backoff: Issuance of refused failed 1 time in a row, last at ${failedAt}; certsmith tries again at ${next} (in `), r.stdout);
    assert.ok(r.stdout.includes('fix: Fix the cause above, then run "certsmith renew refused" to try at once instead of waiting.'), r.stdout);
  });

  test('a healthy HTTP-01 certificate: every check passes and the exit status is 0', async () => {
    const name = `good-${uniq()}.example.test`;
    await certificate('good', name);
    await waitFor('Certificate good Ready', async () => isReady(await getJSON<Conditioned>('certificate', 'good')), 60_000, 250);
    const r = await doctor(['good']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^Certificate default\/good: Ready$/m);
    assert.match(r.stdout, /\[ok\] issuer: ClusterIssuer pebble is Ready\./);
    assert.match(r.stdout, /\[ok\] account: The ACME account of ClusterIssuer pebble is registered at https:\/\/127\.0\.0\.1:\d+\/my-account\/\S+ with contact ops@example\.test\./);
    assert.ok(r.stdout.includes(`[ok] dns: ${name} resolves to 127.0.0.1 (asked ${cts.dnsServer}).`), r.stdout);
    assert.ok(r.stdout.includes(`[ok] caa: No CAA records from ${name} up to test: any CA may issue.`), r.stdout);
    assert.match(r.stdout, new RegExp(`\\[ok\\] http-01: http://${name.replace(/\./g, '\\.')}:${httpPort}/\\.well-known/acme-challenge/certsmith-doctor-[0-9a-f]+ reaches an HTTP server at 127\\.0\\.0\\.1:${httpPort}, which answered 404 to a token that does not exist, as certsmith's responder does\\.`));
    assert.match(r.stdout, /Nothing blocks issuance\./);
  });

  test('an HTTP-01 port nobody serves while a challenge is pending: connection refused, exit 1; the right port serves the key', async () => {
    // the answer to the challenge POST is held: certsmith's Challenge stays pending and presented
    const held = proxy.hold({ method: 'POST', path: /\/chalZ\//, withPayload: true });
    const name = `held-${uniq()}.example.test`;
    await certificate('held', name);
    await held.hit;
    try {
      const closed = await freePort();
      const r = await server.cli(['doctor', 'held', '--acme-http01-solver-nameservers', cts.dnsServer, '--http01-port', String(closed)]);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, new RegExp(`\\[ERROR\\] http-01: The CA cannot fetch http://${name.replace(/\./g, '\\.')}:${closed}/\\.well-known/acme-challenge/[\\w-]+: nothing listens on 127\\.0\\.0\\.1:${closed} \\(connection refused\\)\\.`));
      assert.ok(r.stdout.includes(`fix: Run certsmith's HTTP-01 responder where ${name} points (--acme-http01-listen), or forward port ${closed} there`), r.stdout);
      const right = await doctor(['held']);
      assert.match(right.stdout, new RegExp(`\\[ok\\] http-01: http://${name.replace(/\./g, '\\.')}:${httpPort}/\\.well-known/acme-challenge/[\\w-]+ serves the pending challenge's key authorization \\(answered by 127\\.0\\.0\\.1:${httpPort}\\)\\.`), right.stdout);
    } finally {
      held.release();
    }
  });

  test('challtestsrv answering SERVFAIL: the name does not resolve and its CAA cannot be read; exit 1', async () => {
    const name = `broken-${uniq()}.example.test`;
    await manage('/set-servfail', { host: `${name}.` });
    await certificate('broken', name);
    const r = await doctor(['broken']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stdout.includes(`[ERROR] dns: ${name} does not resolve: ${cts.dnsServer} answered SERVFAIL, so the CA's own lookups (address and CAA) fail too and it will refuse the name.`), r.stdout);
    assert.ok(r.stdout.includes(`[ERROR] caa: The CAA lookup for ${name} failed (SERVFAIL); a CA must not issue for ${name} when it cannot read the CAA records (RFC 8659 §3).`), r.stdout);
    assert.match(r.stdout, /2 problems block issuance\./);
  });

  test('CAA records that allow only another CA: refused with the CA\'s identifier; unknown without one', async () => {
    const name = `caa-${uniq()}.example.test`;
    await manage('/add-caa', { host: `${name}.`, policies: [{ tag: 'issue', value: 'letsencrypt.org' }] });
    await certificate('caa', name);
    // Pebble's directory has no meta.caaIdentities: the user names the CA's identifier
    const r = await doctor(['caa', '--caa-identity', 'pebble.letsencrypt.org']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stdout.includes(`[ERROR] caa: The CAA issue records at ${name} allow only letsencrypt.org to issue for ${name}; this CA identifies as pebble.letsencrypt.org, so it must refuse.`), r.stdout);
    assert.ok(r.stdout.includes(`fix: Add ${name}. CAA 0 issue "pebble.letsencrypt.org" next to the existing records, or remove the CAA restriction.`), r.stdout);
    const unknown = await doctor(['caa']);
    assert.ok(unknown.stdout.includes(`[warning] caa: The CAA issue records at ${name} allow only letsencrypt.org to issue for ${name}; the ACME server publishes no meta.caaIdentities, so certsmith cannot tell whether its CA is one of them.`), unknown.stdout);
  });

  test('a wrong DNS-01 TXT record at the recursive resolver: what it has and what the CA wants; exit 1', async () => {
    const name = `wrong-${uniq()}.dns.example.test`;
    await certificate('wrong-txt', name);
    type Ch = { spec: { dnsName: string; key: string; type: string }; status?: { presented?: boolean } };
    const ch = await waitFor('DNS-01 challenge presented', async () => {
      const list = await getJSON<{ items: Ch[] }>('challenges');
      return list?.items.find((c) => c.spec.dnsName === name && c.status?.presented);
    }, 60_000, 250);
    assert.equal(ch.spec.type, 'DNS-01');
    const r = await doctor(['wrong-txt']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stdout.includes(`[ERROR] dns-01: The recursive resolver ${cts.dnsServer} has "stale-value" at _acme-challenge.${name}, not the challenge value "${ch.spec.key}".`), r.stdout);
    assert.match(r.stdout, /fix: Something else wrote TXT/);
    // the zone's own nameserver (named, found through its SOA and NS records) never got the record
    const auth = await server.cli(['doctor', 'wrong-txt', '--dns01-recursive-nameservers', named.server, '--dns01-authoritative-port', String(named.port)]);
    assert.equal(auth.code, 1, auth.stdout + auth.stderr);
    assert.ok(auth.stdout.includes(`[ERROR] dns-01: The authoritative nameserver 127.0.0.1:${named.port} has no TXT record at _acme-challenge.${name}, not the challenge value "${ch.spec.key}".`), auth.stdout);
    assert.ok(auth.stdout.includes(`[ERROR] dns-01: The recursive resolver ${named.server} has no TXT record at _acme-challenge.${name}`), auth.stdout);
    // the record fixed by hand: the self-check passes, the certificate is issued, nothing is left to report
    await cts.setTXT(`_acme-challenge.${name}`, ch.spec.key);
    await waitFor('Certificate wrong-txt Ready', async () => isReady(await getJSON<Conditioned>('certificate', 'wrong-txt')), 60_000, 250);
    const fixed = await doctor(['wrong-txt']);
    assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
    assert.match(fixed.stdout, /Nothing blocks issuance\./);
  });

  test('bad flags are refused naming the flag and the rule', async () => {
    const port = await server.cli(['doctor', 'good', '--http01-port', '80x']);
    assert.equal(port.code, 1);
    assert.equal(port.stderr, 'error: --http01-port must be a port number from 1 to 65535, got "80x"\n');
    const ns = await server.cli(['doctor', 'good', '--dns01-recursive-nameservers', '127.0.0.1:53,ns.example.test:53']);
    assert.equal(ns.code, 1);
    assert.equal(ns.stderr, 'error: --dns01-recursive-nameservers: "ns.example.test:53" is not an IP address with an optional port (HOST:PORT, [IPv6]:PORT)\n');
    const missing = await server.cli(['doctor', 'no-such-certificate']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'error: certificate default/no-such-certificate not found\n');
  });

  test('an issuer whose ACME server is not there: not Ready, no account; every Certificate checked; exit 1', async () => {
    const port = await freePort();
    await apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'gone' },
      spec: { acme: { server: `https://127.0.0.1:${port}/dir`, privateKeySecretRef: { name: 'gone-account' }, solvers: [{ http01: { ingress: {} } }] } },
    });
    await certificate('orphan', `orphan-${uniq()}.example.test`, 'gone');
    await waitFor('ClusterIssuer gone not Ready', async () => (await getJSON<Conditioned>('clusterissuer', 'gone'))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False'), 30_000, 250);
    const r = await doctor([]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /\[ERROR\] issuer: ClusterIssuer gone is not Ready \(ErrRegisterACMEAccount\): Failed to register ACME account: .*ECONNREFUSED.*\n\s+fix: The ACME server does not answer: check that it runs and that this host reaches it\./);
    assert.match(r.stdout, /\[ERROR\] account: ClusterIssuer gone has no usable ACME account: Failed to register ACME account/);
    assert.match(r.stdout, /\[warning\] caa: The ACME directory could not be read to learn the CA's CAA identifiers: GET https:\/\/127\.0\.0\.1:\d+\/dir: connect ECONNREFUSED/);
    for (const c of ['good', 'held', 'refused', 'orphan', 'limited', 'broken', 'caa', 'wrong-txt']) assert.match(r.stdout, new RegExp(`^Certificate default/${c}: `, 'm'));
  });
});
