// RFC 2136 solvers with cert-manager's other TSIG algorithms and its `protocol` field, issuing
// from Pebble that validates through the same named: HMACMD5 (cert-manager's default when
// tsigAlgorithm is empty), HMACSHA1, and HMACSHA256 over TCP only.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import { realClock } from '../../src/runtime/clock.ts';
import { ClusterIssuer } from '../../src/api/resources.ts';
import type { ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Secret } from '../../src/api/meta.ts';
import { freePort, startNamed, startPebble, type Named, type Pebble } from '../rig/index.ts';
import { startLifecycle, type Lifecycle } from '../lifecycle/harness.ts';
import { acmeCertificate, b64, ready, waitFor, waitForReadyCertificate } from './acme-rig.ts';

describe('RFC 2136 with HMACMD5, HMACSHA1 and TCP against named', () => {
  let named: Named;
  let pebble: Pebble;
  let lc: Lifecycle;
  let front: net.Server;
  let tcpSegments = 0;

  before(async () => {
    named = await startNamed({
      zone: 'example.test',
      tsig: { name: 'md5-key', algorithm: 'hmac-md5' },
      extraTsig: [{ name: 'sha1-key', algorithm: 'hmac-sha1' }, { name: 'tcp-key', algorithm: 'hmac-sha256' }],
    });
    // named's updates over TCP only: this port has no UDP listener at all
    front = net.createServer((c) => {
      tcpSegments++;
      const up = net.connect(named.port, '127.0.0.1');
      c.pipe(up).pipe(c);
      c.on('error', () => up.destroy());
      up.on('error', () => c.destroy());
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const tcpOnly = `127.0.0.1:${(front.address() as net.AddressInfo).port}`;
    pebble = await startPebble({ dnsServer: named.server, httpPort: await freePort() });
    lc = await startLifecycle({
      clock: realClock,
      options: { dns01RecursiveNameservers: [named.server], dns01RecursiveNameserversOnly: true },
    });
    await lc.apply<Secret>({
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tsig', namespace: 'cert-manager' },
      data: Object.fromEntries(Object.entries(named.tsigSecrets).map(([k, v]) => [k, b64(v)])),
    });
    const ref = (key: string) => ({ name: 'tsig', key });
    await lc.apply({
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem),
          privateKeySecretRef: { name: 'pebble-account' },
          solvers: [
            // no tsigAlgorithm: HMACMD5, as in cert-manager
            { selector: { dnsNames: ['md5.example.test'] }, dns01: { rfc2136: { nameserver: named.server, tsigKeyName: 'md5-key', tsigSecretSecretRef: ref('md5-key') } } },
            { selector: { dnsNames: ['sha1.example.test'] }, dns01: { rfc2136: { nameserver: named.server, tsigKeyName: 'sha1-key', tsigAlgorithm: 'HMACSHA1', tsigSecretSecretRef: ref('sha1-key') } } },
            { selector: { dnsNames: ['tcp.example.test'] }, dns01: { rfc2136: { nameserver: tcpOnly, protocol: 'TCP', tsigKeyName: 'tcp-key', tsigAlgorithm: 'HMACSHA256', tsigSecretSecretRef: ref('tcp-key') } } },
          ],
        },
      },
    });
    await waitFor('issuer Ready', async () => ready(await lc.store.get<ClusterIssuerObj>(ClusterIssuer, undefined, 'pebble')));
  });
  after(async () => {
    await lc?.stop();
    await new Promise((r) => (front ? front.close(r) : r(undefined)));
    await Promise.all([pebble?.stop(), named?.stop()]);
  });

  for (const [name, what] of [['md5', 'HMACMD5 by default'], ['sha1', 'HMACSHA1'], ['tcp', 'HMACSHA256 over TCP only']]) {
    test(`${what}: issued, and the record removed afterwards`, async () => {
      const dnsName = `${name}.example.test`;
      const before = tcpSegments;
      await lc.apply(acmeCertificate(`rfc-${name}`, [dnsName]));
      const crt = await waitForReadyCertificate(lc, `rfc-${name}`);
      const chain = Buffer.from((await lc.secret(crt.spec.secretName))!.data!['tls.crt'], 'base64').toString();
      assert.ok(new crypto.X509Certificate(chain).subjectAltName?.includes(`DNS:${dnsName}`));
      const { Resolver } = await import('node:dns/promises');
      const r = new Resolver();
      r.setServers([named.server]);
      await waitFor('TXT removed', async () => (await r.resolveTxt(`_acme-challenge.${dnsName}`).catch(() => [])).length === 0);
      if (name === 'tcp') assert.ok(tcpSegments - before >= 2, 'present and cleanup went through the TCP-only port');
      else assert.equal(tcpSegments, before);
    });
  }
});
