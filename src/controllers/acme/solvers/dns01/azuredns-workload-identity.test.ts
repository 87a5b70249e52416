// Azure Workload Identity against the loopback identity platform (test/rig/azuredns-api.ts): the
// projected service account token in AZURE_FEDERATED_TOKEN_FILE is exchanged for an ARM token as a
// client assertion, read again for each exchange since the kubelet rotates it, and never shown.
//   https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow#third-case-access-token-request-with-a-federated-credential
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AzureDNSClient, type AzureCredentialSource } from './azuredns.ts';
import { startChallTestSrv, type ChallTestSrv } from '../../../../../test/rig/index.ts';
import { startAzureDNSAPI, type AzureDNSAPI } from '../../../../../test/rig/azuredns-api.ts';

const projected = () => `eyJhbGciOiJSUzI1NiJ9.${crypto.randomBytes(48).toString('base64url')}.${crypto.randomBytes(64).toString('base64url')}`;
let cts: ChallTestSrv;
let api: AzureDNSAPI;
let dir: string;
const identity = { tenantID: crypto.randomUUID(), clientID: crypto.randomUUID() };
let trusted = projected();
const zone = { subscriptionID: 'sub', resourceGroupName: 'dns-rg', hostedZoneName: 'example.test', environment: 'AzurePublicCloud' };

before(async () => {
  cts = await startChallTestSrv();
  api = await startAzureDNSAPI({ ...identity, clientSecret: 'unused', federatedToken: () => trusted, subscriptionID: 'sub', resourceGroupName: 'dns-rg', zones: ['example.test'], challtestsrv: cts });
  dir = mkdtempSync(join(tmpdir(), 'certsmith-azure-wi-'));
});
after(async () => {
  await api?.stop();
  await cts?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const source = (tokenFile: string): AzureCredentialSource => ({ workloadIdentity: { authority: api.url, ...identity, tokenFile } });
const txt = (rel: string) => api.zones.get('example.test')!.get(rel)?.values ?? [];

test('the projected token is exchanged as a client assertion, read again for the next exchange, and the record set is edited', async () => {
  const file = join(dir, 'token');
  writeFileSync(file, `${trusted}\n`);
  let now = Date.now();
  const client = new AzureDNSClient(source(file), zone, api.url, () => now);
  await client.present('_acme-challenge.wi.example.test', 'value-1');
  assert.deepEqual(txt('_acme-challenge.wi'), ['value-1']);
  assert.deepEqual(api.tokens.at(-1), { via: 'federated', client: identity.clientID });

  // the kubelet rotated the token and the ARM token expired: the new file is what is sent
  trusted = projected();
  writeFileSync(file, trusted);
  now += 2 * 3600_000;
  const exchanges = api.tokens.length;
  await client.cleanUp('_acme-challenge.wi.example.test', 'value-1');
  assert.deepEqual(txt('_acme-challenge.wi'), []);
  assert.equal(api.tokens.length, exchanges + 1);
});

test('an assertion the identity does not trust, or no token file: the error says why, never the token', async () => {
  const file = join(dir, 'stale');
  const stale = projected();
  writeFileSync(file, stale);
  await assert.rejects(new AzureDNSClient(source(file), zone, api.url).present('_acme-challenge.stale.example.test', 'v'), (e: Error) => {
    assert.match(e.message, /AADSTS70021: No matching federated identity record found/);
    assert.ok(!e.message.includes(stale.split('.')[1]), e.message);
    return true;
  });
  const missing = join(dir, 'missing');
  await assert.rejects(new AzureDNSClient(source(missing), zone, api.url).present('_acme-challenge.stale.example.test', 'v'),
    (e: Error) => e.message.includes(`reading the workload identity token ${missing}`) && /ENOENT/.test(e.message));
  assert.deepEqual(txt('_acme-challenge.stale'), []);
});
