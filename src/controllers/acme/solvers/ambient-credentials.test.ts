// Ambient cloud credentials (the host's or pod's AWS, Google and Azure identity) for DNS-01, as
// cert-manager's --issuer-ambient-credentials (default false) and
// --cluster-issuer-ambient-credentials (default true) allow them: an operator who runs
// cert-manager with namespaced Issuers on IRSA sets the first and expects the same here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Challenge } from '../../../api/types.ts';
import type { ControllerContext } from '../../context.ts';
import { azureDNSCredentials, cloudDNSCredentials, route53Keys } from './providers.ts';
import { ambientCredentialsAllowed } from './ambient-credentials.ts';
import { ProviderConfigError } from './dns01/secret-ref.ts';

const challenge = (kind: 'Issuer' | 'ClusterIssuer', dns01: Record<string, unknown>) => ({
  metadata: { name: 'c', namespace: 'team-a' },
  spec: { issuerRef: { name: 'le', kind }, solver: { dns01 }, dnsName: 'a.example.test', key: 'k', type: 'DNS-01' },
}) as unknown as Challenge;
const ctx = (options: Record<string, unknown>) => ({ options }) as unknown as ControllerContext;

test('ambientCredentialsAllowed: ClusterIssuers by default, Issuers when --issuer-ambient-credentials, neither when both are off (table)', () => {
  const rows: [Record<string, unknown>, 'Issuer' | 'ClusterIssuer', boolean][] = [
    [{}, 'ClusterIssuer', true],
    [{}, 'Issuer', false],
    [{ issuerAmbientCredentials: true }, 'Issuer', true],
    [{ clusterIssuerAmbientCredentials: false }, 'ClusterIssuer', false],
    [{ clusterIssuerAmbientCredentials: false, issuerAmbientCredentials: true }, 'Issuer', true],
  ];
  for (const [options, kind, allowed] of rows) assert.equal(ambientCredentialsAllowed(ctx(options), kind), allowed, `${JSON.stringify(options)} ${kind}`);
});

test('the route53, cloudDNS and azureDNS providers follow the flags', async () => {
  const route53 = challenge('Issuer', { route53: { region: 'eu-west-1' } });
  await assert.rejects(route53Keys(ctx({}), route53), (e: Error) => e instanceof ProviderConfigError && /--issuer-ambient-credentials/.test(e.message));
  assert.equal(await route53Keys(ctx({ issuerAmbientCredentials: true }), route53), undefined, 'the default chain');
  await assert.rejects(route53Keys(ctx({ clusterIssuerAmbientCredentials: false }), challenge('ClusterIssuer', { route53: {} })), /--cluster-issuer-ambient-credentials/);
  await assert.rejects(cloudDNSCredentials(ctx({}), challenge('Issuer', { cloudDNS: { project: 'p' } })), /--issuer-ambient-credentials/);
  await assert.rejects(azureDNSCredentials(ctx({}), challenge('Issuer', { azureDNS: { subscriptionID: 's', resourceGroupName: 'r', hostedZoneName: 'example.test' } })), /--issuer-ambient-credentials/);
  const azure = await azureDNSCredentials(ctx({ issuerAmbientCredentials: true }), challenge('Issuer', { azureDNS: { subscriptionID: 's', resourceGroupName: 'r', hostedZoneName: 'example.test' } }));
  assert.ok('managedIdentity' in azure);
});
