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

// Azure Workload Identity, as cert-manager and azidentity's WorkloadIdentityCredential read it: the
// webhook mounts a projected token and sets AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID,
// AZURE_TENANT_ID and AZURE_AUTHORITY_HOST; managedIdentity.clientID and tenantID override the two.
//   https://azure.github.io/azure-workload-identity/docs/topics/service-account-labels-and-annotations.html
test('azureDNS with AZURE_FEDERATED_TOKEN_FILE: workload identity, its client and tenant from managedIdentity, else the environment (table)', async () => {
  const base = { subscriptionID: 's', resourceGroupName: 'r', hostedZoneName: 'example.test' };
  const env = { AZURE_FEDERATED_TOKEN_FILE: '/var/run/secrets/azure/tokens/azure-identity-token', AZURE_CLIENT_ID: 'env-client', AZURE_TENANT_ID: 'env-tenant' };
  const rows: [Record<string, unknown>, Record<string, string>, unknown][] = [
    [{}, env, { workloadIdentity: { authority: 'https://login.microsoftonline.com', tenantID: 'env-tenant', clientID: 'env-client', tokenFile: env.AZURE_FEDERATED_TOKEN_FILE } }],
    [{ managedIdentity: { clientID: 'mi-client', tenantID: 'mi-tenant' } }, env, { workloadIdentity: { authority: 'https://login.microsoftonline.com', tenantID: 'mi-tenant', clientID: 'mi-client', tokenFile: env.AZURE_FEDERATED_TOKEN_FILE } }],
    [{ environment: 'AzureChinaCloud' }, env, { workloadIdentity: { authority: 'https://login.chinacloudapi.cn', tenantID: 'env-tenant', clientID: 'env-client', tokenFile: env.AZURE_FEDERATED_TOKEN_FILE } }],
    [{}, { ...env, AZURE_AUTHORITY_HOST: 'https://login.microsoftonline.us/' }, { workloadIdentity: { authority: 'https://login.microsoftonline.us', tenantID: 'env-tenant', clientID: 'env-client', tokenFile: env.AZURE_FEDERATED_TOKEN_FILE } }],
    [{ managedIdentity: { clientID: 'mi-client' } }, {}, { managedIdentity: { imds: 'http://169.254.169.254', clientID: 'mi-client', resourceID: undefined } }],
  ];
  for (const [over, e, want] of rows) {
    assert.deepEqual(await azureDNSCredentials(ctx({}), challenge('ClusterIssuer', { azureDNS: { ...base, ...over } }), e), want, JSON.stringify([over, e]));
  }
  const { AZURE_CLIENT_ID: _c, ...noClient } = env;
  await assert.rejects(azureDNSCredentials(ctx({}), challenge('ClusterIssuer', { azureDNS: base }), noClient),
    (e: Error) => e instanceof ProviderConfigError && /workload identity .*managedIdentity\.clientID or AZURE_CLIENT_ID/.test(e.message));
  const { AZURE_TENANT_ID: _t, ...noTenant } = env;
  await assert.rejects(azureDNSCredentials(ctx({}), challenge('ClusterIssuer', { azureDNS: base }), noTenant), /managedIdentity\.tenantID or AZURE_TENANT_ID/);
  await assert.rejects(azureDNSCredentials(ctx({}), challenge('Issuer', { azureDNS: base }), env), /--issuer-ambient-credentials/);
});
