// What every DNS provider client must do when the record is already there or the API throttles,
// against the loopback vendor servers (test/rig/*-api.ts): a present retried after its answer was
// lost (a crash between the API call and the Challenge's status write) finds our value and writes
// nothing; cleanup removes only ours, once; a 429 is waited out for as long as the server says.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { CloudflareClient } from './cloudflare.ts';
import { DigitalOceanClient } from './digitalocean.ts';
import { Route53Solver } from './route53.ts';
import { AkamaiDNSClient } from './akamai.ts';
import { CloudDNSClient, parseGoogleCredentials } from './clouddns.ts';
import { AzureDNSClient } from './azuredns.ts';
import { ProviderThrottledError } from './secret-ref.ts';
import { txtValue } from './txt-rdata.ts';
import { startChallTestSrv, type ChallTestSrv } from '../../../../../test/rig/index.ts';
import { startCloudflareAPI } from '../../../../../test/rig/cloudflare-api.ts';
import { startDigitalOceanAPI } from '../../../../../test/rig/digitalocean-api.ts';
import { startRoute53API } from '../../../../../test/rig/route53-api.ts';
import { startAkamaiAPI } from '../../../../../test/rig/akamai-api.ts';
import { startCloudDNSAPI } from '../../../../../test/rig/clouddns-api.ts';
import { startAzureDNSAPI } from '../../../../../test/rig/azuredns-api.ts';

interface Rig {
  client: { present(fqdn: string, value: string): Promise<void>; cleanUp(fqdn: string, value: string): Promise<void> };
  /** someone else's TXT value at fqdn */
  seed(fqdn: string, value: string): Promise<void> | void;
  /** the TXT values the API holds at fqdn */
  values(fqdn: string): string[];
  /** requests that change something, so far */
  writes(): number;
  /** the next n calls answered 429 with the wait the server asks for in seconds; undefined when the vendor documents no such wait */
  throttle?: (n: number, seconds: number) => void;
  stop(): Promise<void>;
}

const secret = () => crypto.randomBytes(24).toString('base64url');

/** retryAfter: the vendor documents a wait with its throttling answer (Route 53 does not: its SDK's backoff is tested in test/acme/route53.test.ts) */
const providers: { name: string; retryAfter: boolean; start(cts: ChallTestSrv): Promise<Rig> }[] = [
  {
    name: 'Cloudflare',
    retryAfter: true,
    async start(cts) {
      const token = secret();
      const api = await startCloudflareAPI({ zones: ['example.test'], token, challtestsrv: cts });
      return {
        client: new CloudflareClient({ token }, api.url),
        seed: (fqdn, value) => void api.addRecord('example.test', { type: 'TXT', name: fqdn, content: value }),
        values: (fqdn) => api.records.filter((r) => r.type === 'TXT' && r.name === fqdn).map((r) => txtValue(r.content)),
        writes: () => api.requests.filter((r) => r.method !== 'GET').length,
        throttle: (n, seconds) => api.throttle(n, seconds),
        stop: () => api.stop(),
      };
    },
  },
  {
    name: 'DigitalOcean',
    retryAfter: true,
    async start(cts) {
      const token = secret();
      const api = await startDigitalOceanAPI({ domains: ['example.test'], token, challtestsrv: cts });
      const rel = (fqdn: string) => fqdn.replace(/\.example\.test$/, '');
      return {
        client: new DigitalOceanClient(token, api.url),
        seed: (fqdn, value) => void api.addRecord('example.test', { type: 'TXT', name: rel(fqdn), data: value }),
        values: (fqdn) => api.records.filter((r) => r.type === 'TXT' && r.domain === 'example.test' && r.name === rel(fqdn)).map((r) => r.data),
        writes: () => api.requests.filter((r) => r.method !== 'GET').length,
        // DigitalOcean sends RateLimit-Reset, not Retry-After: the rig's reset is 1 s ahead
        throttle: (n, seconds) => api.throttle(n, seconds),
        stop: () => api.stop(),
      };
    },
  },
  {
    name: 'Route 53',
    retryAfter: false,
    async start(cts) {
      const keyId = `AKIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
      const key = secret();
      const api = await startRoute53API({ zones: ['example.test'], keys: { [keyId]: key }, challtestsrv: cts });
      const sets = () => api.sets.get(api.zones[0].id)!;
      return {
        client: new Route53Solver({ credentials: { accessKeyId: keyId, secretAccessKey: key }, region: 'us-east-1', endpoint: api.url }),
        seed: (fqdn, value) => void sets().push({ name: `${fqdn}.`, type: 'TXT', ttl: 300, values: [`"${value}"`] }),
        values: (fqdn) => (sets().find((s) => s.name === `${fqdn}.` && s.type === 'TXT')?.values ?? []).map(txtValue),
        writes: () => api.requests.filter((r) => r.method === 'POST').length,
        // Route 53 answers 400 Throttling without a documented wait: the SDK's backoff (route53.test.ts in test/acme)
        stop: () => api.stop(),
      };
    },
  },
  {
    name: 'Akamai Edge DNS',
    retryAfter: true,
    async start(cts) {
      const credentials = { clientToken: `akab-${secret()}`, clientSecret: secret(), accessToken: `akab-${secret()}` };
      const api = await startAkamaiAPI({ zones: ['example.test'], credentials, challtestsrv: cts });
      const set = (fqdn: string) => api.recordSets.get(`example.test/${fqdn}/TXT`);
      return {
        client: new AkamaiDNSClient(credentials, 'akab-test.luna.akamaiapis.net', api.url),
        seed: (fqdn, value) => api.putRecordSet('example.test', { name: fqdn, type: 'TXT', ttl: 300, rdata: [`"${value}"`] }),
        values: (fqdn) => (set(fqdn)?.rdata ?? []).map(txtValue),
        writes: () => api.requests.filter((r) => r.method !== 'GET').length,
        throttle: (n, seconds) => api.throttle(n, seconds),
        stop: () => api.stop(),
      };
    },
  },
  {
    name: 'Google Cloud DNS',
    retryAfter: true,
    async start(cts) {
      const api = await startCloudDNSAPI({ project: 'certsmith-test', zones: [{ name: 'example-test', dnsName: 'example.test.' }], challtestsrv: cts });
      const sets = () => api.rrsets.get('example-test')!;
      return {
        client: new CloudDNSClient({ key: parseGoogleCredentials(api.serviceAccountKey(), 'test key') }, 'certsmith-test', undefined, api.url),
        seed: (fqdn, value) => void sets().push({ name: `${fqdn}.`, type: 'TXT', ttl: 300, rrdatas: [`"${value}"`] }),
        values: (fqdn) => (sets().find((r) => r.name === `${fqdn}.` && r.type === 'TXT')?.rrdatas ?? []).map(txtValue),
        writes: () => api.requests.filter((r) => r.method === 'POST' && !r.path.includes('token')).length,
        throttle: (n, seconds) => api.throttle(n, seconds),
        stop: () => api.stop(),
      };
    },
  },
  {
    name: 'Azure DNS',
    retryAfter: true,
    async start(cts) {
      const sp = { tenantID: crypto.randomUUID(), clientID: crypto.randomUUID(), clientSecret: secret() };
      const api = await startAzureDNSAPI({ ...sp, subscriptionID: 'sub', resourceGroupName: 'dns-rg', zones: ['example.test'], challtestsrv: cts });
      const zone = () => api.zones.get('example.test')!;
      const rel = (fqdn: string) => fqdn.replace(/\.example\.test$/, '');
      return {
        client: new AzureDNSClient(
          { clientSecret: { authority: api.url, tenantID: sp.tenantID, clientID: sp.clientID, secret: sp.clientSecret } },
          { subscriptionID: 'sub', resourceGroupName: 'dns-rg', hostedZoneName: 'example.test', environment: 'AzurePublicCloud' },
          api.url,
        ),
        seed: (fqdn, value) => void zone().set(rel(fqdn), { etag: 'etag-theirs', TTL: 300, values: [value] }),
        values: (fqdn) => zone().get(rel(fqdn))?.values ?? [],
        writes: () => api.requests.filter((r) => r.method !== 'GET').length,
        throttle: (n, seconds) => api.throttle(n, seconds),
        stop: () => api.stop(),
      };
    },
  },
];

describe('DNS provider clients: a record already present, throttling', () => {
  let cts: ChallTestSrv;
  before(async () => {
    cts = await startChallTestSrv();
  });
  after(() => cts?.stop());

  for (const p of providers) {
    describe(p.name, () => {
      let rig: Rig;
      before(async () => {
        rig = await p.start(cts);
      });
      after(() => rig?.stop());

      test('our value already there (a present retried after its answer was lost): not written again; cleanup removes it once, theirs stays', async () => {
        const fqdn = `_acme-challenge.p-${secret().slice(0, 6).toLowerCase()}.example.test`;
        const ours = secret();
        await rig.seed(fqdn, 'someone-elses-value');
        const before = rig.writes();
        await rig.client.present(fqdn, ours);
        await rig.client.present(fqdn, ours);
        assert.deepEqual(rig.values(fqdn).sort(), [ours, 'someone-elses-value'].sort());
        assert.equal(rig.writes() - before, 1, 'one write for two presents');
        await rig.client.cleanUp(fqdn, ours);
        await rig.client.cleanUp(fqdn, ours);
        assert.deepEqual(rig.values(fqdn), ['someone-elses-value']);
        assert.equal(rig.writes() - before, 2, 'one write for two cleanups');
      });

      test('presents and cleanups on one name at once (a wildcard and its apex, or names CNAMEd to one record) keep every value but the ones cleaned up', async () => {
        const fqdn = `_acme-challenge.c-${secret().slice(0, 6).toLowerCase()}.example.test`;
        const [a, b, c] = [secret(), secret(), secret()];
        await Promise.all([rig.client.present(fqdn, a), rig.client.present(fqdn, b), rig.client.present(fqdn, c)]);
        assert.deepEqual(rig.values(fqdn).sort(), [a, b, c].sort());
        await Promise.all([rig.client.cleanUp(fqdn, a), rig.client.cleanUp(fqdn, c)]);
        assert.deepEqual(rig.values(fqdn), [b]);
        await rig.client.cleanUp(fqdn, b);
        assert.deepEqual(rig.values(fqdn), []);
      });

      if (!p.retryAfter) return;
      const throttle = (n: number, seconds: number) => rig.throttle!(n, seconds);

      test('a 429 is waited out for as long as the server asks, then the value is written once', async () => {
        const fqdn = `_acme-challenge.t-${secret().slice(0, 6).toLowerCase()}.example.test`;
        const ours = secret();
        const before = rig.writes();
        throttle(1, 1);
        const t0 = Date.now();
        await rig.client.present(fqdn, ours);
        assert.ok(Date.now() - t0 >= 950, `present took ${Date.now() - t0} ms with a 1 s wait asked`);
        assert.deepEqual(rig.values(fqdn), [ours]);
        assert.equal(rig.writes() - before, 1);
        await rig.client.cleanUp(fqdn, ours);
        assert.deepEqual(rig.values(fqdn), []);
      });

      test('asked to wait longer than a client waits (60 s): no early retry; fails at once as throttled (not a configuration error) with the wait for the Challenge\'s backoff; nothing written', async () => {
        const fqdn = `_acme-challenge.w-${secret().slice(0, 6).toLowerCase()}.example.test`;
        const before = rig.writes();
        throttle(5, 60);
        const t0 = Date.now();
        try {
          await assert.rejects(rig.client.present(fqdn, secret()), (e: Error) => {
            assert.ok(e instanceof ProviderThrottledError, `${e.name}: ${e.message}`);
            // DigitalOcean's RateLimit-Reset is a whole second: 60 s ahead of the rig's clock, up to 61 s of ours
            assert.ok(e.retryAfterMs > 55_000 && e.retryAfterMs <= 61_000, String(e.retryAfterMs));
            assert.match(e.message, /HTTP 429.* \(throttled: the API asks to wait 6[01] s\)$/);
            return true;
          });
        } finally {
          throttle(0, 1);
        }
        assert.ok(Date.now() - t0 < 5000, `failed after ${Date.now() - t0} ms`);
        assert.equal(rig.writes() - before, 0);
        assert.deepEqual(rig.values(fqdn), []);
      });
    });
  }
});

// Cloudflare documents a TXT record's content as quoted RFC 1035 character-strings ("a" "b"),
// which its dashboard writes and shows; records written unquoted read back as written.
//   https://developers.cloudflare.com/api/resources/dns/subresources/records/methods/create/ (TXTRecord.content)
describe('Cloudflare: TXT content as quoted character-strings', () => {
  let cts: ChallTestSrv;
  let api: Awaited<ReturnType<typeof startCloudflareAPI>>;
  let client: CloudflareClient;
  const fqdn = '_acme-challenge.quoted.example.test';
  const contents = () => api.records.filter((r) => r.name === fqdn).map((r) => r.content).sort();
  before(async () => {
    cts = await startChallTestSrv();
    const token = secret();
    api = await startCloudflareAPI({ zones: ['example.test'], token, challtestsrv: cts });
    client = new CloudflareClient({ token }, api.url);
  });
  after(async () => {
    await api?.stop();
    await cts?.stop();
  });

  test('our value is written quoted, as the API documents', async () => {
    const value = secret();
    await client.present(fqdn, value);
    assert.deepEqual(contents(), [`"${value}"`]);
    await client.cleanUp(fqdn, value);
    assert.deepEqual(contents(), []);
  });

  test('our value already there in either form (or split in two strings): not written again, and cleaned up; other values stay', async () => {
    const [quoted, plain, split, theirs] = [secret(), secret(), secret(), secret()];
    api.addRecord('example.test', { type: 'TXT', name: fqdn, content: `"${quoted}"` });
    api.addRecord('example.test', { type: 'TXT', name: fqdn, content: plain });
    api.addRecord('example.test', { type: 'TXT', name: fqdn, content: `"${split.slice(0, 10)}" "${split.slice(10)}"` });
    api.addRecord('example.test', { type: 'TXT', name: fqdn, content: `"${theirs}"` });
    const writes = api.requests.filter((r) => r.method !== 'GET').length;
    for (const v of [quoted, plain, split]) await client.present(fqdn, v);
    assert.equal(api.requests.filter((r) => r.method !== 'GET').length, writes, 'nothing written');
    for (const v of [quoted, plain, split]) await client.cleanUp(fqdn, v);
    assert.deepEqual(contents(), [`"${theirs}"`]);
  });
});
