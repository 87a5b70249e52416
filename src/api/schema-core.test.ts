import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as R from './resources.ts';
import { findUnknownFields, validate } from './validation.ts';
import type { KubeObject } from './meta.ts';

function issuerWithSolver(solver: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: 'ns' },
    spec: { acme: { server: 'https://127.0.0.1:14000/dir', privateKeySecretRef: { name: 'acct' }, solvers: [solver] } },
  };
}

const podTemplateSpec = (spec: Record<string, unknown>) => issuerWithSolver({ http01: { ingress: { podTemplate: { spec } } } });
const errors = (obj: KubeObject) => validate(R.Issuer, obj).map((e) => `${e.field}|${e.reason}|${e.message}`);
const pt = 'spec.acme.solvers[0].http01.ingress.podTemplate.spec';

test('a full solver pod template (affinity, tolerations, securityContext, resources, imagePullSecrets) is valid and has no unknown fields', () => {
  const obj = podTemplateSpec({
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] },
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 10, preference: { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] } }],
      },
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'x' } }, matchLabelKeys: ['pod-template-hash'] } }],
      },
    },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'acme', effect: 'NoExecute', tolerationSeconds: 30 }],
    securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 2000, seccompProfile: { type: 'RuntimeDefault' }, sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '0' }], supplementalGroups: [3000] },
    resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: 1, memory: '1.5Gi' } },
    imagePullSecrets: [{ name: 'registry' }],
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    priorityClassName: 'high', serviceAccountName: 'solver',
  });
  assert.deepEqual(errors(obj), []);
  assert.deepEqual(findUnknownFields(R.Issuer, obj), []);
});

test('wrong types and bad quantities in the pod template are refused at their field, in kube-apiserver\'s words', () => {
  assert.deepEqual(errors(podTemplateSpec({ tolerations: [{ key: 'a', tolerationSeconds: 'soon' }] })), [`${pt}.tolerations[0].tolerationSeconds|FieldValueInvalid|must be of type integer`]);
  assert.deepEqual(errors(podTemplateSpec({ securityContext: { runAsNonRoot: 'yes' } })), [`${pt}.securityContext.runAsNonRoot|FieldValueInvalid|must be of type boolean`]);
  assert.deepEqual(errors(podTemplateSpec({ affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: {} }] } } })),
    [`${pt}.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey|FieldValueRequired|`]);
  const [bad] = validate(R.Issuer, podTemplateSpec({ resources: { limits: { memory: '64 megabytes' } } }));
  assert.equal(bad.field, `${pt}.resources.limits.memory`);
  assert.match(bad.message, /in body should match '\^\(\\\+\|-\)\?/);
  assert.deepEqual(errors(podTemplateSpec({ resources: { limits: { cpu: true } } })), [`${pt}.resources.limits.cpu|FieldValueInvalid|must be an integer or a string`]);
});

test('Gateway parentRefs are typed as the Gateway API types them: name required, port and name bounds, DNS-1123 patterns', () => {
  const route = (ref: Record<string, unknown>) => issuerWithSolver({ http01: { gatewayHTTPRoute: { parentRefs: [ref] } } });
  const at = 'spec.acme.solvers[0].http01.gatewayHTTPRoute.parentRefs[0]';
  assert.deepEqual(errors(route({ name: 'gw', namespace: 'infra', kind: 'Gateway', group: 'gateway.networking.k8s.io', sectionName: 'http', port: 80 })), []);
  assert.deepEqual(errors(route({ name: 'gw', port: 0 })), [`${at}.port|FieldValueInvalid|${at}.port in body should be greater than or equal to 1`]);
  assert.deepEqual(errors(route({ name: 'gw', port: 70000 })), [`${at}.port|FieldValueInvalid|${at}.port in body should be less than or equal to 65535`]);
  assert.deepEqual(errors(route({ name: 'gw', namespace: 'Infra' })), [`${at}.namespace|FieldValueInvalid|${at}.namespace in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'`]);
  assert.deepEqual(errors(route({ name: 'gw', kind: '' })), [`${at}.kind|FieldValueInvalid|${at}.kind in body should be at least 1 chars long`]);
  assert.deepEqual(findUnknownFields(R.Issuer, route({ name: 'gw', weight: 1 })), [`${at}.weight`]);
});

test('DNS-01 providers, Vault AWS auth and Venafi NGTS are typed: their fields are known and their types checked', () => {
  const dns = (dns01: Record<string, unknown>) => issuerWithSolver({ dns01 });
  const at = 'spec.acme.solvers[0].dns01';
  const azure = { subscriptionID: 's', resourceGroupName: 'rg', hostedZoneName: 'example.com', environment: 'AzurePublicCloud', managedIdentity: { clientID: 'c' }, zoneType: 'AzurePublicZone' };
  assert.deepEqual(errors(dns({ azureDNS: azure })), []);
  assert.deepEqual(errors(dns({ azureDNS: { ...azure, environment: 'Mars' } })).map((e) => e.split('|').slice(0, 2).join('|')), [`${at}.azureDNS.environment|FieldValueNotSupported`]);
  assert.deepEqual(errors(dns({ cloudDNS: { hostedZoneName: 'z' } })), [`${at}.cloudDNS.project|FieldValueRequired|`]);
  assert.deepEqual(findUnknownFields(R.Issuer, dns({ cloudDNS: { project: 'p', zone: 'z' } })), [`${at}.cloudDNS.zone`]);
  assert.deepEqual(errors(dns({ route53: { auth: { kubernetes: { serviceAccountRef: { name: 'sa', audiences: ['sts.amazonaws.com'] } } } } })), []);
  const vault: KubeObject = {
    apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'v', namespace: 'ns' },
    spec: { vault: { server: 'https://vault', path: 'pki/sign/x', auth: { aws: { role: '', region: 'eu-west-1' } } } },
  };
  assert.deepEqual(validate(R.Issuer, vault).filter((e) => e.field.startsWith('spec.vault.auth.aws')).map((e) => `${e.field}|${e.reason}`), ['spec.vault.auth.aws.role|FieldValueInvalid']);
  const ngts: KubeObject = { ...vault, spec: { venafi: { zone: 'z', ngts: { tsgID: '123', credentialsRef: { name: 'creds' }, url: 'https://x' } } } };
  assert.deepEqual(findUnknownFields(R.Issuer, ngts), []);
});

test('Vault AWS auth and Venafi NGTS count as the auth method and connection they are, with upstream\'s messages', () => {
  const issuer = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'x', namespace: 'ns' }, spec });
  const vault = (auth: Record<string, unknown>) => issuer({ vault: { server: 'https://vault', path: 'pki/sign/x', auth } });
  assert.deepEqual(errors(vault({ aws: { role: 'r' } })), []);
  assert.deepEqual(errors(vault({})), ['spec.vault.auth|FieldValueRequired|please supply one of: appRole, kubernetes, tokenSecretRef, clientCertificate, aws']);
  const ngts = { tsgID: '1', credentialsRef: { name: 'c' } };
  const tpp = { url: 'https://tpp', credentialsRef: { name: 'c' } };
  assert.deepEqual(errors(issuer({ venafi: { zone: 'z', ngts } })), []);
  assert.deepEqual(errors(issuer({ venafi: { zone: 'z', ngts, tpp } })), ['spec.venafi|FieldValueForbidden|please supply one of: tpp, cloud, ngts']);
  assert.deepEqual(errors(issuer({ venafi: { zone: 'z' } })), ['spec.venafi|FieldValueRequired|please supply one of: tpp, cloud, ngts']);
});
