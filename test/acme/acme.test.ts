// ACME issuance end to end: every controller on the embedded store (real clock), a real Pebble
// validating through a real named, HTTP-01 from the embedded responder and DNS-01 via RFC 2136.
import { certificateStatus } from '../../src/cli/status.ts';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { realClock } from '../../src/runtime/clock.ts';
import { AcmeClient } from '../../src/acme/client.ts';
import { Challenge, ClusterIssuer, Order, SecretType } from '../../src/api/resources.ts';
import type { Challenge as ChallengeObj, ClusterIssuer as ClusterIssuerObj, Order as OrderObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startNamed, startPebble, type Named, type Pebble } from '../rig/index.ts';
import { verifyChain } from '../rig/csr.ts';
import { startLifecycle, condition, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, acmeRequestCount, b64, ready, waitFor, waitForReadyCertificate } from './acme-rig.ts';

const uniq = () => crypto.randomBytes(3).toString('hex');

describe('ACME ClusterIssuer against Pebble and named', () => {
  let named: Named;
  let pebble: Pebble;
  let lc: Lifecycle;

  before(async () => {
    named = await startNamed({ zone: 'example.test', tsig: { name: 'acme-update', algorithm: 'hmac-sha256' } });
    const httpPort = await freePort();
    pebble = await startPebble({ dnsServer: named.server, httpPort });
    lc = await startLifecycle({
      clock: realClock,
      options: {
        acmeHTTP01Listen: `127.0.0.1:${httpPort}`,
        acmeHTTP01SelfCheckPort: httpPort,
        acmeHTTP01SolverNameservers: [named.server],
        dns01RecursiveNameservers: [named.server],
        // named's NS record points at port 53, where nothing listens on this machine.
        dns01RecursiveNameserversOnly: true,
      },
    });
    await lc.apply<Secret>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tsig', namespace: 'cert-manager' }, data: { secret: b64(named.tsigSecret) } });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [
            { http01: { ingress: {} } },
            {
              selector: { dnsZones: ['dns.example.test', 'wild.example.test'] },
              dns01: { rfc2136: { nameserver: named.server, tsigKeyName: 'acme-update', tsigAlgorithm: 'HMACSHA256', tsigSecretSecretRef: { name: 'tsig', key: 'secret' } } },
            },
            // No DNS for this zone: Pebble cannot validate, and the self-check is skipped so that it gets to try.
            { selector: { dnsZones: ['nowhere.test'] }, http01: { ingress: {} }, waitInsteadOfSelfCheck: '0s' },
          ],
        },
      },
    });
  });
  after(async () => {
    await lc?.stop();
    await Promise.all([pebble?.stop(), named?.stop()]);
  });

  async function issuedChain(name: string): Promise<string> {
    const crt = await waitForReadyCertificate(lc, name);
    const secret = await lc.secret(crt.spec.secretName);
    const chain = Buffer.from(secret!.data!['tls.crt'], 'base64').toString();
    assert.match(await verifyChain(chain, await pebble.rootPem()), /OK/);
    return chain;
  }

  test('the ClusterIssuer registers its account once and becomes Ready', async () => {
    const issuer = await waitFor('issuer Ready', async () => {
      const i = await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble');
      return ready(i) ? i : undefined;
    }, async () => (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))?.status);
    const cond = condition(issuer, 'Ready')!;
    assert.equal(cond.reason, 'ACMEAccountRegistered');
    assert.match(issuer.status?.acme?.uri ?? '', /^https:\/\/127\.0\.0\.1:\d+\//);
    assert.equal(issuer.status?.acme?.lastRegisteredEmail, 'ops@example.test');
    // The generated account key lives in the cluster resource namespace.
    const key = await lc.store.get<Secret>(SecretType, 'cert-manager', 'pebble-account');
    assert.match(Buffer.from(key!.data!['tls.key'], 'base64').toString(), /BEGIN PRIVATE KEY/);
  });

  test('a changed spec.acme.email reaches the CA (account update), and only then the status says so; removing it removes the contact', async () => {
    const accountAtPebble = async () => {
      const key = await lc.store.get<Secret>(SecretType, 'cert-manager', 'pebble-account');
      const client = new AcmeClient({ directoryUrl: pebble.directoryUrl, accountKeyPem: Buffer.from(key!.data!['tls.key'], 'base64').toString(), caPem: pebble.caPem });
      return client.getAccount();
    };
    assert.deepEqual((await accountAtPebble()).contact, ['mailto:ops@example.test']);
    for (const [email, contact] of [['Security@Example.test', ['mailto:security@example.test']], [undefined, []], ['ops@example.test', ['mailto:ops@example.test']]] as const) {
      const issuer = (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))!;
      const acme = { ...issuer.spec.acme! };
      if (email === undefined) delete acme.email;
      else acme.email = email;
      await lc.store.update(ClusterIssuer, { ...issuer, spec: { ...issuer.spec, acme } });
      await waitFor(`status for ${email}`, async () => {
        const i = await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble');
        return i?.status?.acme?.lastRegisteredEmail === (email ?? '') && ready(i) ? i : undefined;
      }, async () => (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))?.status);
      assert.deepEqual((await accountAtPebble()).contact ?? [], contact, `the account at the CA for ${email}`);
    }
  });

  test('deleting the account key Secret makes a new key and registers a new account at once, as cert-manager does', async () => {
    const before = (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))!.status!.acme!;
    const oldKey = (await lc.store.get<Secret>(SecretType, 'cert-manager', 'pebble-account'))!.data!['tls.key'];
    await lc.store.delete(SecretType, 'cert-manager', 'pebble-account');
    const after = await waitFor('a new account', async () => {
      const acme = (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))?.status?.acme;
      return acme?.uri && acme.uri !== before.uri ? acme : undefined;
    }, async () => (await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))?.status);
    assert.notEqual(after.lastPrivateKeyHash, before.lastPrivateKeyHash);
    const newKey = (await lc.store.get<Secret>(SecretType, 'cert-manager', 'pebble-account'))?.data?.['tls.key'];
    assert.ok(newKey && newKey !== oldKey, 'a new key in the Secret');
    assert.ok(ready((await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble'))!));
  });

  test('HTTP-01: single-name certificates, at most 8 ACME requests each once the account exists', async () => {
    const first = `h1-${uniq()}.example.test`;
    await lc.apply(acmeCertificate('http-one', [first]));
    const chain = await issuedChain('http-one');
    assert.match(new crypto.X509Certificate(chain).subjectAltName ?? '', new RegExp(first.replace(/\./g, '\\.')));

    const second = `h2-${uniq()}.example.test`;
    const before = { ours: await acmeRequestCount(lc), pebble: pebble.requestCount() };
    await lc.apply(acmeCertificate('http-two', [second]));
    await issuedChain('http-two');
    const ours = (await acmeRequestCount(lc)) - before.ours;
    const theirs = pebble.requestCount() - before.pebble;
    assert.equal(ours, theirs, `metrics counted ${ours} requests, Pebble logged ${theirs}`);
    const breakdown = (await lc.running.metrics.registry.getSingleMetric('certmanager_http_acme_client_request_count')!.get()).values.map((v) => `${v.labels.action} ${v.labels.method} ${v.labels.status}: ${v.value}`);
    if (process.env.SHOW_REQUESTS) console.log(`${ours} ACME requests: ${breakdown.join(', ')}`);
    assert.ok(ours <= 8, `${ours} ACME requests for one single-name certificate; all so far: ${breakdown.join(', ')}`);

    // A valid Order keeps no Challenges; the CR got the chain and, as upstream's ACME Sign gives
    // none, no ca (the chain's top is an intermediate, not a trust anchor).
    const orders = (await lc.store.list<OrderObj>(Order, { namespace: 'default' })).items;
    const order = orders.find((o) => o.spec.dnsNames?.includes(second))!;
    assert.equal(order.status?.state, 'valid');
    assert.equal(order.metadata.ownerReferences?.[0].kind, 'CertificateRequest');
    await waitFor('challenges of a valid order deleted', async () =>
      (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.every((c) => !c.metadata.ownerReferences?.some((r) => r.uid === order.metadata.uid)));
    const cr = (await lc.requests()).find((r) => r.metadata.ownerReferences?.[0].name === 'http-two')!;
    assert.ok(cr.status?.certificate, 'request has the chain');
    assert.equal(cr.status?.ca, undefined, 'request has no ca');
  });

  test('HTTP-01: a three-name certificate', async () => {
    const names = [0, 1, 2].map((i) => `m${i}-${uniq()}.example.test`);
    await lc.apply(acmeCertificate('http-three', names));
    const san = new crypto.X509Certificate(await issuedChain('http-three')).subjectAltName ?? '';
    for (const n of names) assert.ok(san.includes(`DNS:${n}`), san);
  });

  test('DNS-01 through RFC 2136 into named, and a wildcard next to its base name', async () => {
    const name = `d-${uniq()}.dns.example.test`;
    await lc.apply(acmeCertificate('dns-one', [name]));
    assert.ok((new crypto.X509Certificate(await issuedChain('dns-one')).subjectAltName ?? '').includes(name));

    // Both authorizations use the TXT record of wild.example.test: the scheduler runs them one after the other.
    await lc.apply(acmeCertificate('wildcard', ['wild.example.test', '*.wild.example.test']));
    const san = new crypto.X509Certificate(await issuedChain('wildcard')).subjectAltName ?? '';
    assert.ok(san.includes('DNS:*.wild.example.test') && san.includes('DNS:wild.example.test'), san);
  });

  test('a challenge Pebble cannot validate fails the Order, the request, and counts one attempt', async () => {
    const name = `bad-${uniq()}.nowhere.test`;
    await lc.apply(acmeCertificate('unvalidated', [name]));
    const crt = await waitFor('issuance failure recorded', async () => {
      const c = await lc.certificate('unvalidated');
      return c.status?.issuanceAttempts ? c : undefined;
    }, async () => (await lc.certificate('unvalidated')).status);
    assert.equal(crt.status?.issuanceAttempts, 1);
    const issuing = condition(crt, 'Issuing') as { status: string; message?: string };
    assert.equal(issuing.status, 'False');
    assert.ok(issuing.message?.includes(name), issuing.message);
    assert.match(issuing.message ?? '', /urn:ietf:params:acme:error:\w+/);

    const cr = (await lc.requests()).find((r) => r.metadata.ownerReferences?.[0].name === 'unvalidated')!;
    assert.equal(condition(cr, 'Ready')?.reason, 'Failed');
    const order = (await lc.store.list<OrderObj>(Order, { namespace: 'default' })).items.find((o) => o.spec.dnsNames?.includes(name))!;
    assert.equal(order.status?.state, 'invalid');
    assert.ok(order.status?.failureTime);
    // Kept for debugging: the failed Challenge, cleaned up but still there.
    const challenges = (await lc.store.list<ChallengeObj>(Challenge, { namespace: 'default' })).items.filter((c) => c.spec.dnsName === name);
    assert.equal(challenges.length, 1);
    assert.equal(challenges[0].status?.state, 'invalid');
    assert.ok(challenges[0].status?.reason?.includes(name), challenges[0].status?.reason);
    await waitFor('challenge released', async () => {
      const c = await lc.store.get<ChallengeObj>(Challenge, 'default', challenges[0].metadata.name!);
      return c && !c.status?.processing && !c.metadata.finalizers?.length;
    });
    // What a person debugging sees: the order, its challenge and the ACME error.
    const text = await certificateStatus(lc.store, 'default', 'unvalidated');
    assert.match(text, /Failed Issuance Attempts: 1/);
    assert.match(text, /Order:\n {2}Name: .*\n {2}State: invalid/);
    assert.match(text, new RegExp(`Challenges:\\n- Name: .*Type: (HTTP-01|DNS-01).*State: invalid, Reason: .*${name.replace(/\./g, '\\.')}`));
  });

  test('deleting the Order of a request in progress makes a new Order', async () => {
    const name = `re-${uniq()}.nowhere2.test`;
    // No solver fits nowhere2.test: the Order waits, with a Warning event, until it is deleted.
    await lc.apply(acmeCertificate('reorder', [name]));
    const first = await waitFor('order created', async () =>
      (await lc.store.list<OrderObj>(Order, { namespace: 'default' })).items.find((o) => o.spec.dnsNames?.includes(name) && o.status?.url));
    await lc.store.delete(Order, 'default', first.metadata.name!);
    const second = await waitFor('new order', async () =>
      (await lc.store.list<OrderObj>(Order, { namespace: 'default' })).items.find((o) => o.spec.dnsNames?.includes(name) && o.metadata.uid !== first.metadata.uid));
    assert.equal(second.metadata.name, first.metadata.name);
  });
});
