// Admission as cert-manager's webhook has it (issue 15): what upstream refuses and certsmith
// accepted (TSIG secret without tsigKeyName, EAB without keySecretRef.key, empty CA issuer URLs,
// an ingressClassName that is not a DNS-1123 subdomain, an unbracketed IPv6 nameserver, a
// Gateway parentRef without a name, secretTemplate annotations over 256 KiB), and what upstream
// accepts and certsmith refused (a URI SAN without a scheme, an ACME server that is not http(s)).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as R from '../resources.ts';
import type { KubeObject } from '../meta.ts';
import { validate, fieldErrorText } from '../validation.ts';

const issuer = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: 'ns' }, spec });
const acme = (extra: Record<string, unknown>) => issuer({ acme: { server: 'https://acme.example/dir', privateKeySecretRef: { name: 'k' }, ...extra } });
const solver = (s: Record<string, unknown>) => acme({ solvers: [s] });
const cert = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'ns' }, spec: { secretName: 'c-tls', issuerRef: { name: 'ca' }, dnsNames: ['a.example'], ...spec } });

const errorsOf = (type: typeof R.Issuer, obj: KubeObject) => validate(type, obj).map(fieldErrorText);

const refused: Array<[string, typeof R.Issuer, KubeObject, string]> = [
  ['a TSIG secret without tsigKeyName', R.Issuer, solver({ dns01: { rfc2136: { nameserver: '10.0.0.1:53', tsigSecretSecretRef: { name: 'tsig', key: 'secret' } } } }),
    'spec.acme.solvers[0].dns01.rfc2136.tsigKeyName: Required value'],
  ['EAB without keySecretRef.key', R.Issuer, acme({ externalAccountBinding: { keyID: 'kid', keySecretRef: { name: 'eab' } } }),
    'spec.acme.externalAccountBinding.keySecretRef.key: Required value: the keySecretRef.key field is required when using externalAccountBinding'],
  ['an empty ocspServers entry', R.Issuer, issuer({ ca: { secretName: 'ca', ocspServers: ['http://ocsp.example', ''] } }),
    'spec.ca.ocspServer[1]: Invalid value: "": must be a valid URL, e.g., http://ocsp.int-x3.letsencrypt.org'],
  ['an empty issuingCertificateURLs entry', R.Issuer, issuer({ ca: { secretName: 'ca', issuingCertificateURLs: [''] } }),
    'spec.ca.issuingCertificateURLs[0]: Invalid value: "": must be a valid URL'],
  ['an ingressClassName that is not a DNS-1123 subdomain', R.Issuer, solver({ http01: { ingress: { ingressClassName: 'Not_A_Name' } } }),
    'spec.acme.solvers[0].http01.ingress.ingressClassName: Invalid value: "Not_A_Name": a lowercase RFC 1123 subdomain'],
  ['an unbracketed IPv6 nameserver', R.Issuer, solver({ dns01: { rfc2136: { nameserver: '2001:db8::53' } } }),
    'spec.acme.solvers[0].dns01.rfc2136.nameserver: Invalid value: "2001:db8::53"'],
  ['a Gateway parentRef without a name', R.Issuer, solver({ http01: { gatewayHTTPRoute: { parentRefs: [{ name: 'gw', kind: 'Gateway' }, { kind: 'Gateway' }] } } }),
    'spec.acme.solvers[0].http01.gatewayHTTPRoute.parentRefs[1].name: Required value'],
  ['secretTemplate annotations over 256 KiB in total', R.Certificate, cert({ secretTemplate: { annotations: { 'a.example/one': 'x'.repeat(200_000), 'a.example/two': 'y'.repeat(70_000) } } }),
    'spec.secretTemplate.annotations: Too long: must have at most 262144 bytes'],
];

for (const [name, type, obj, expected] of refused) {
  test(`refused as upstream refuses it: ${name}`, () => {
    const errors = errorsOf(type, obj);
    assert.ok(errors.some((e) => e.startsWith(expected)), `expected "${expected}" in ${JSON.stringify(errors)}`);
  });
}

const accepted: Array<[string, typeof R.Issuer, KubeObject]> = [
  ['a TSIG secret with tsigKeyName', R.Issuer, solver({ dns01: { rfc2136: { nameserver: '[2001:db8::53]:53', tsigKeyName: 'k.', tsigSecretSecretRef: { name: 'tsig', key: 'secret' } } } })],
  ['a bare IPv4 nameserver and a hostname', R.Issuer, solver({ dns01: { rfc2136: { nameserver: '10.0.0.1' } } })],
  ['a URI SAN without a scheme', R.Certificate, cert({ uris: ['relative/path', 'spiffe://cluster.local/ns/a'] })],
  ['an ACME server that is not an http(s) URL', R.Issuer, issuer({ acme: { server: 'acme.internal:14000/dir', privateKeySecretRef: { name: 'k' } } })],
  ['an ingressClassName that is a DNS-1123 subdomain', R.Issuer, solver({ http01: { ingress: { ingressClassName: 'nginx.example' } } })],
];

for (const [name, type, obj] of accepted) {
  test(`accepted as upstream accepts it: ${name}`, () => {
    assert.deepEqual(errorsOf(type, obj), []);
  });
}
