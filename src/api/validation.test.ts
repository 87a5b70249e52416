import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import * as R from './resources.ts';
import type { KubeObject } from './meta.ts';
import { validate, findUnknownFields, invalidObjectMessage, type FieldError } from './validation.ts';

const realisticCertificate = parse(`
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: example-com
  namespace: sandbox
  labels: { app.kubernetes.io/name: web }
spec:
  secretName: example-com-tls
  secretTemplate:
    annotations: { my-secret-annotation-1: "foo", cert-manager.io/allow-direct-injection: "true" }
    labels: { my-secret-label: foo }
  duration: 2160h
  renewBefore: 360h
  subject:
    organizations: [jetstack]
    countries: [GB]
    organizationalUnits: [ops]
    localities: [London]
    provinces: [England]
    streetAddresses: ["1 Example Street"]
    postalCodes: [SW1A]
    serialNumber: "1234"
  commonName: example.com
  isCA: false
  privateKey:
    algorithm: RSA
    encoding: PKCS1
    size: 2048
    rotationPolicy: Always
  signatureAlgorithm: SHA256WithRSA
  usages: [server auth, client auth, digital signature, key encipherment]
  dnsNames: [example.com, www.example.com]
  uris: ["spiffe://cluster.local/ns/sandbox/sa/example"]
  ipAddresses: [192.168.0.5, "2001:db8::1"]
  emailAddresses: [admin@example.com]
  otherNames: [{ oid: 1.3.6.1.4.1.311.20.2.3, utf8Value: upn@example.local }]
  encodeUsagesInRequest: true
  revisionHistoryLimit: 3
  additionalOutputFormats: [{ type: DER }, { type: CombinedPEM }]
  keystores:
    pkcs12: { create: true, passwordSecretRef: { name: pkcs12-password, key: password }, profile: Modern2023 }
    jks: { create: true, password: changeit, alias: mykey }
  renewal:
    policy: RenewBefore
    windows:
      - cron: ["0 23 * * 1-5"]
        duration: 6h
        timeZone: America/Denver
      - cron: "0 10 * * 6,0"
        windowDuration: 8h
        timezone: America/Denver
  issuerRef:
    name: letsencrypt
    kind: ClusterIssuer
    group: cert-manager.io
status:
  conditions:
    - { type: Ready, status: "True", reason: Ready, message: ok, lastTransitionTime: "2024-01-01T00:00:00Z", observedGeneration: 1 }
  notBefore: "2024-01-01T00:00:00Z"
  notAfter: "2024-03-31T00:00:00Z"
  renewalTime: "2024-03-16T00:00:00Z"
  revision: 2
  failedIssuanceAttempts: 1
  issuanceAttempts: 1
  lastFailureTime: "2024-01-01T00:00:00Z"
  renewal: { policy: RenewBefore, windows: { valid: true } }
`) as KubeObject;

const realisticClusterIssuer = parse(`
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: letsencrypt
spec:
  acme:
    server: https://acme-v02.api.letsencrypt.org/directory
    email: user@example.com
    profile: tlsserver
    preferredChain: "ISRG Root X1"
    privateKeySecretRef:
      name: letsencrypt-account-key
    externalAccountBinding:
      keyID: kid-1
      keySecretRef: { name: eab-secret, key: secret }
      keyAlgorithm: HS256
    disableAccountKeyGeneration: false
    enableDurationFeature: true
    solvers:
      - selector:
          dnsZones: [example.com]
          matchLabels: { use-dns: "true" }
        dns01:
          cnameStrategy: Follow
          rfc2136:
            nameserver: 127.0.0.1:5353
            tsigKeyName: certsmith
            tsigAlgorithm: HMACSHA256
            tsigSecretSecretRef: { name: tsig-secret, key: tsig-secret-key }
      - selector:
          dnsNames: [cloud.example.org]
        dns01:
          route53:
            region: eu-west-1
            hostedZoneID: Z123
            accessKeyIDSecretRef: { name: aws, key: id }
            secretAccessKeySecretRef: { name: aws, key: secret }
      - dns01:
          webhook:
            groupName: acme.example.com
            solverName: my-dns
            config: { apiUrl: "https://x", nested: { anything: [1, 2] } }
      - http01:
          ingress:
            ingressClassName: nginx
            serviceType: ClusterIP
            podTemplate:
              metadata: { labels: { team: web } }
              spec:
                nodeSelector: { kubernetes.io/os: linux }
                tolerations: [{ key: a, operator: Exists }]
                priorityClassName: high
                serviceAccountName: solver
                securityContext: { runAsNonRoot: true }
            ingressTemplate:
              metadata: { annotations: { a: b } }
      - http01:
          gatewayHTTPRoute:
            parentRefs: [{ name: gw, namespace: infra, kind: Gateway, sectionName: http }]
            labels: { a: b }
`) as KubeObject;

function certWith(spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'c', namespace: 'ns' },
    spec: { secretName: 'c-tls', issuerRef: { name: 'ca' }, dnsNames: ['a.example.com'], ...spec },
  };
}

function issuerWith(spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'i', namespace: 'ns' }, spec };
}

const acmeBase = { server: 'https://127.0.0.1:14000/dir', privateKeySecretRef: { name: 'acct' } };

const one = (errs: FieldError[]) => errs.map((e) => `${e.field}|${e.reason}`);

test('a realistic cert-manager Certificate and ACME ClusterIssuer validate clean and have no unknown fields', () => {
  assert.deepEqual(validate(R.Certificate, realisticCertificate), []);
  assert.deepEqual(validate(R.ClusterIssuer, realisticClusterIssuer), []);
  assert.deepEqual(findUnknownFields(R.Certificate, realisticCertificate), []);
  assert.deepEqual(findUnknownFields(R.ClusterIssuer, realisticClusterIssuer), []);
});

test('unknown fields are found except under objects cert-manager leaves open', () => {
  const c = structuredClone(realisticCertificate) as any;
  c.spec.bogus = 1;
  c.spec.privateKey.curve = 'x';
  c.spec.renewal.windows[0].extra = true;
  c.metadata.nope = 1;
  assert.deepEqual(findUnknownFields(R.Certificate, c).sort(), ['metadata.nope', 'spec.bogus', 'spec.privateKey.curve', 'spec.renewal.windows[0].extra']);
  const i = structuredClone(realisticClusterIssuer) as any;
  i.spec.acme.solvers[2].dns01.webhook.config.more = { any: 'thing' }; // the webhook solver's config is open upstream too
  assert.deepEqual(findUnknownFields(R.ClusterIssuer, i), []);
  // the solver pod template is typed upstream (a subset of PodSpec): other pod fields are unknown
  i.spec.acme.solvers[3].http01.ingress.podTemplate.spec.hostNetwork = true;
  i.spec.acme.solvers[3].http01.ingress.podTemplate.spec.securityContext.seccompProfile = { type: 'RuntimeDefault', extra: 1 };
  assert.deepEqual(findUnknownFields(R.ClusterIssuer, i).sort(), [
    'spec.acme.solvers[3].http01.ingress.podTemplate.spec.hostNetwork',
    'spec.acme.solvers[3].http01.ingress.podTemplate.spec.securityContext.seccompProfile.extra',
  ]);
});

interface Case { name: string; obj: KubeObject; field: string; reason: FieldError['reason']; message?: RegExp; old?: KubeObject }

const cases: Case[] = [
  // Certificate: schema
  { name: 'duration wrong type', obj: certWith({ duration: 5 }), field: 'spec.duration', reason: 'FieldValueInvalid', message: /must be of type string/ },
  { name: 'usage not in enum', obj: certWith({ usages: ['server auth', 'teleport'] }), field: 'spec.usages[1]', reason: 'FieldValueNotSupported', message: /"server auth"/ },
  { name: 'rotationPolicy enum', obj: certWith({ privateKey: { rotationPolicy: 'Sometimes' } }), field: 'spec.privateKey.rotationPolicy', reason: 'FieldValueNotSupported' },
  { name: 'algorithm enum is case-sensitive', obj: certWith({ privateKey: { algorithm: 'rsa' } }), field: 'spec.privateKey.algorithm', reason: 'FieldValueNotSupported' },
  { name: 'encoding enum', obj: certWith({ privateKey: { encoding: 'PEM' } }), field: 'spec.privateKey.encoding', reason: 'FieldValueNotSupported' },
  { name: 'renewal policy enum', obj: certWith({ renewal: { policy: 'Sometimes' } }), field: 'spec.renewal.policy', reason: 'FieldValueNotSupported' },
  { name: 'status time format', obj: { ...certWith({}), status: { notAfter: 'tomorrow' } }, field: 'status.notAfter', reason: 'FieldValueInvalid', message: /RFC 3339/ },
  { name: 'status issuanceAttempts integer', obj: { ...certWith({}), status: { issuanceAttempts: 1.5 } }, field: 'status.issuanceAttempts', reason: 'FieldValueInvalid' },
  // Certificate: webhook rules
  { name: 'duration < 1h', obj: certWith({ duration: '59m' }), field: 'spec.duration', reason: 'FieldValueInvalid', message: /^certificate duration must be greater than 1h0m0s$/ },
  { name: 'duration unparseable', obj: certWith({ duration: '90 days' }), field: 'spec.duration', reason: 'FieldValueInvalid', message: /invalid duration/ },
  { name: 'renewBefore < 5m', obj: certWith({ renewBefore: '4m' }), field: 'spec.renewBefore', reason: 'FieldValueInvalid', message: /renewBefore must be greater than 5m0s/ },
  { name: 'renewBefore >= duration', obj: certWith({ duration: '2h', renewBefore: '2h' }), field: 'spec.renewBefore', reason: 'FieldValueInvalid', message: /^certificate duration 2h0m0s must be greater than renewBefore 2h0m0s$/ },
  { name: 'renewBefore >= default duration', obj: certWith({ renewBefore: '2200h' }), field: 'spec.renewBefore', reason: 'FieldValueInvalid', message: /2160h0m0s/ },
  { name: 'percentage 100', obj: certWith({ renewBeforePercentage: 100 }), field: 'spec.renewBeforePercentage', reason: 'FieldValueInvalid', message: /less than 100/ },
  { name: 'percentage 0', obj: certWith({ renewBeforePercentage: 0 }), field: 'spec.renewBeforePercentage', reason: 'FieldValueInvalid' },
  { name: 'percentage too small for 5m', obj: certWith({ duration: '1h', renewBeforePercentage: 5 }), field: 'spec.renewBeforePercentage', reason: 'FieldValueInvalid', message: /greater than 5m0s/ },
  { name: 'issuerRef.name required', obj: certWith({ issuerRef: { kind: 'Issuer' } }), field: 'spec.issuerRef.name', reason: 'FieldValueRequired', message: /must be specified/ },
  { name: 'issuerRef missing entirely', obj: certWith({ issuerRef: undefined }), field: 'spec.issuerRef.name', reason: 'FieldValueRequired' },
  { name: 'issuerRef kind for cert-manager group', obj: certWith({ issuerRef: { name: 'x', kind: 'Foo' } }), field: 'spec.issuerRef.kind', reason: 'FieldValueInvalid', message: /Issuer or ClusterIssuer/ },
  { name: 'no identity', obj: certWith({ dnsNames: [] }), field: 'spec', reason: 'FieldValueInvalid', message: /at least one of commonName/ },
  { name: 'literalSubject excludes commonName', obj: certWith({ literalSubject: 'CN=a,O=b', commonName: 'a' }), field: 'spec.commonName', reason: 'FieldValueInvalid', message: /no `commonName`/ },
  { name: 'literalSubject excludes subject', obj: certWith({ literalSubject: 'CN=a', subject: { organizations: ['o'] } }), field: 'spec.subject', reason: 'FieldValueInvalid' },
  { name: 'literalSubject unknown key', obj: certWith({ literalSubject: 'CN=a,FOO=b' }), field: 'spec.literalSubject', reason: 'FieldValueInvalid', message: /unrecognized key with value \[b\]/ },
  { name: 'literalSubject unparseable', obj: certWith({ literalSubject: 'CN=a,' }), field: 'spec.literalSubject', reason: 'FieldValueInvalid' },
  // upstream: field.TooLong at spec.commonName, for a commonName from a literalSubject too
  { name: 'commonName too long', obj: certWith({ commonName: 'a'.repeat(65) }), field: 'spec.commonName', reason: 'FieldValueTooLong', message: /^must have at most 64 bytes$/ },
  { name: 'literalSubject commonName too long', obj: certWith({ literalSubject: `CN=${'a'.repeat(65)}` }), field: 'spec.commonName', reason: 'FieldValueTooLong' },
  { name: 'commonName of 33 two-byte characters is 66 bytes', obj: certWith({ commonName: 'é'.repeat(33) }), field: 'spec.commonName', reason: 'FieldValueTooLong' },
  { name: 'RSA size too small', obj: certWith({ privateKey: { algorithm: 'RSA', size: 1024 } }), field: 'spec.privateKey.size', reason: 'FieldValueInvalid', message: /^must be between 2048 and 8192 for rsa keyAlgorithm$/ },
  { name: 'RSA (default algorithm) size too big', obj: certWith({ privateKey: { size: 16384 } }), field: 'spec.privateKey.size', reason: 'FieldValueInvalid' },
  { name: 'ECDSA size', obj: certWith({ privateKey: { algorithm: 'ECDSA', size: 2048 } }), field: 'spec.privateKey.size', reason: 'FieldValueNotSupported', message: /"256", "384", "521"/ },
  { name: 'signature algorithm vs key', obj: certWith({ privateKey: { algorithm: 'ECDSA' }, signatureAlgorithm: 'SHA256WithRSA' }), field: 'spec.signatureAlgorithm', reason: 'FieldValueInvalid', message: /^for key algorithm ECDSA the allowed signature algorithms are \[ECDSAWithSHA256 ECDSAWithSHA384 ECDSAWithSHA512\]$/ },
  { name: 'secretName required', obj: certWith({ secretName: undefined }), field: 'spec.secretName', reason: 'FieldValueRequired', message: /must be specified/ },
  { name: 'secretName DNS-1123', obj: certWith({ secretName: 'Bad_Name' }), field: 'spec.secretName', reason: 'FieldValueInvalid', message: /RFC 1123 subdomain/ },
  { name: 'IP address', obj: certWith({ ipAddresses: ['10.0.0.1', '10.0.0.300'] }), field: 'spec.ipAddresses[1]', reason: 'FieldValueInvalid', message: /^invalid IP address$/ },
  { name: 'email with display name', obj: certWith({ emailAddresses: ['Bob <bob@example.com>'] }), field: 'spec.emailAddresses[0]', reason: 'FieldValueInvalid', message: /only contains the email address itself/ },
  { name: 'email without @', obj: certWith({ emailAddresses: ['ok@example.com', 'bob'] }), field: 'spec.emailAddresses[1]', reason: 'FieldValueInvalid' },
  { name: 'otherName oid', obj: certWith({ otherNames: [{ oid: 'not.an.oid', utf8Value: 'x' }] }), field: 'spec.otherNames[0].oid', reason: 'FieldValueInvalid', message: /invalid oid syntax/ },
  { name: 'revisionHistoryLimit', obj: certWith({ revisionHistoryLimit: 0 }), field: 'spec.revisionHistoryLimit', reason: 'FieldValueInvalid', message: /must not be less than 1/ },
  { name: 'secretTemplate cert-manager annotation', obj: certWith({ secretTemplate: { annotations: { 'cert-manager.io/issuer-name': 'x' } } }), field: 'spec.secretTemplate.annotations[cert-manager.io/issuer-name]', reason: 'FieldValueInvalid' },
  { name: 'nameConstraints needs isCA', obj: certWith({ nameConstraints: { permitted: { dnsDomains: ['a'] } } }), field: 'spec.nameConstraints', reason: 'FieldValueInvalid', message: /^isCA should be true when nameConstraints is set$/ },
  { name: 'nameConstraints e-mail neither mailbox, host nor domain', obj: certWith({ isCA: true, nameConstraints: { permitted: { emailAddresses: ['a b.example.com'] } } }), field: 'spec.nameConstraints.permitted.emailAddresses[0]', reason: 'FieldValueInvalid', message: /a mailbox, a host name or a domain/ },
  { name: 'nameConstraints CIDR', obj: certWith({ isCA: true, nameConstraints: { excluded: { ipRanges: ['10.0.0.0/33'] } } }), field: 'spec.nameConstraints.excluded.ipRanges[0]', reason: 'FieldValueInvalid' },
  { name: 'duplicate output format', obj: certWith({ additionalOutputFormats: [{ type: 'DER' }, { type: 'DER' }] }), field: 'spec.additionalOutputFormats[1].type', reason: 'FieldValueDuplicate' },
  { name: 'keystore both passwords', obj: certWith({ keystores: { jks: { create: true, password: 'a', passwordSecretRef: { name: 's' } } } }), field: 'spec.keystores.jks', reason: 'FieldValueForbidden' },
  { name: 'keystore no password', obj: certWith({ keystores: { pkcs12: { create: false } } }), field: 'spec.keystores.pkcs12', reason: 'FieldValueRequired' },
  { name: 'keystore empty literal password', obj: certWith({ keystores: { pkcs12: { create: true, password: '' } } }), field: 'spec.keystores.pkcs12.password', reason: 'FieldValueInvalid' },
  // renewal windows
  { name: 'Disabled with windows', obj: certWith({ renewal: { policy: 'Disabled', windows: [{ cron: '0 1 * * *', duration: '1h' }] } }), field: 'spec.renewal.windows', reason: 'FieldValueForbidden' },
  { name: 'cron in list not 5 fields', obj: certWith({ renewal: { windows: [{ cron: ['0 1 * * *', '0 0 1 * * *'], duration: '1h' }] } }), field: 'spec.renewal.windows[0].cron[1]', reason: 'FieldValueInvalid', message: /exactly 5 fields, found 6/ },
  { name: 'cron string out of range', obj: certWith({ renewal: { windows: [{ cron: '61 1 * * *', duration: '1h' }] } }), field: 'spec.renewal.windows[0].cron', reason: 'FieldValueInvalid', message: /invalid cron syntax/ },
  { name: 'cron wrong type', obj: certWith({ renewal: { windows: [{ cron: 5, duration: '1h' }] } }), field: 'spec.renewal.windows[0].cron', reason: 'FieldValueInvalid', message: /string or a list of strings/ },
  { name: 'cron missing', obj: certWith({ renewal: { windows: [{ duration: '1h' }] } }), field: 'spec.renewal.windows[0].cron', reason: 'FieldValueRequired' },
  { name: 'window duration missing', obj: certWith({ renewal: { windows: [{ cron: '@daily' }] } }), field: 'spec.renewal.windows[0].duration', reason: 'FieldValueRequired' },
  { name: 'window duration zero', obj: certWith({ renewal: { windows: [{ cron: '@daily', windowDuration: '0s' }] } }), field: 'spec.renewal.windows[0].windowDuration', reason: 'FieldValueInvalid', message: /greater than 0/ },
  { name: 'window duration unparseable', obj: certWith({ renewal: { windows: [{ cron: '@daily', duration: 'six hours' }] } }), field: 'spec.renewal.windows[0].duration', reason: 'FieldValueInvalid' },
  { name: 'window time zone', obj: certWith({ renewal: { windows: [{ cron: '@daily', duration: '1h', timeZone: 'Mars/Olympus' }] } }), field: 'spec.renewal.windows[0].timeZone', reason: 'FieldValueInvalid', message: /IANA/ },
  { name: 'window time zone (cert-manager spelling)', obj: certWith({ renewal: { windows: [{ cron: '@daily', duration: '1h', timezone: 'Nowhere' }] } }), field: 'spec.renewal.windows[0].timezone', reason: 'FieldValueInvalid' },
  // metadata
  { name: 'metadata.name DNS-1123 subdomain', obj: { ...certWith({}), metadata: { name: 'Not_Valid', namespace: 'ns' } }, field: 'metadata.name', reason: 'FieldValueInvalid' },
  { name: 'metadata.name too long', obj: { ...certWith({}), metadata: { name: 'a'.repeat(254), namespace: 'ns' } }, field: 'metadata.name', reason: 'FieldValueInvalid', message: /253/ },
  { name: 'metadata.name required', obj: { ...certWith({}), metadata: { namespace: 'ns' } }, field: 'metadata.name', reason: 'FieldValueRequired' },
  // Issuer
  { name: 'no issuer type', obj: issuerWith({}), field: 'spec', reason: 'FieldValueRequired', message: /at least one issuer/ },
  { name: 'two issuer types', obj: issuerWith({ ca: { secretName: 'x' }, selfSigned: {} }), field: 'spec.selfSigned', reason: 'FieldValueForbidden' },
  { name: 'ca.secretName', obj: issuerWith({ ca: {} }), field: 'spec.ca.secretName', reason: 'FieldValueRequired' },
  { name: 'acme.server', obj: issuerWith({ acme: { privateKeySecretRef: { name: 'k' } } }), field: 'spec.acme.server', reason: 'FieldValueRequired', message: /server URL/ },
  { name: 'acme.privateKeySecretRef.name', obj: issuerWith({ acme: { server: 'https://x/dir', privateKeySecretRef: {} } }), field: 'spec.acme.privateKeySecretRef.name', reason: 'FieldValueRequired' },
  { name: 'acme caBundle with skipTLSVerify', obj: issuerWith({ acme: { ...acmeBase, skipTLSVerify: true, caBundle: Buffer.from('-----BEGIN CERTIFICATE-----').toString('base64') } }), field: 'spec.acme.caBundle', reason: 'FieldValueInvalid' },
  { name: 'acme caBundle not base64', obj: issuerWith({ acme: { ...acmeBase, caBundle: 'not base64!' } }), field: 'spec.acme.caBundle', reason: 'FieldValueInvalid', message: /base64/ },
  { name: 'EAB keyID', obj: issuerWith({ acme: { ...acmeBase, externalAccountBinding: { keySecretRef: { name: 'e', key: 'k' } } } }), field: 'spec.acme.externalAccountBinding.keyID', reason: 'FieldValueRequired' },
  { name: 'solver with no type', obj: issuerWith({ acme: { ...acmeBase, solvers: [{ selector: {} }] } }), field: 'spec.acme.solvers[0]', reason: 'FieldValueRequired' },
  { name: 'solver with both types', obj: issuerWith({ acme: { ...acmeBase, solvers: [{ http01: { ingress: {} }, dns01: { rfc2136: { nameserver: '127.0.0.1' } } }] } }), field: 'spec.acme.solvers[0].dns01', reason: 'FieldValueForbidden' },
  { name: 'dns01 two providers', obj: issuerWith({ acme: { ...acmeBase, solvers: [{ dns01: { rfc2136: { nameserver: '127.0.0.1' }, route53: {} } }] } }), field: 'spec.acme.solvers[0].dns01.route53', reason: 'FieldValueForbidden' },
  { name: 'rfc2136 nameserver', obj: issuerWith({ acme: { ...acmeBase, solvers: [{ dns01: { rfc2136: { nameserver: '1.2.3.4:99999' } } }] } }), field: 'spec.acme.solvers[0].dns01.rfc2136.nameserver', reason: 'FieldValueInvalid' },
  { name: 'rfc2136 tsig secret', obj: issuerWith({ acme: { ...acmeBase, solvers: [{ dns01: { rfc2136: { nameserver: '[::1]:53', tsigKeyName: 'k' } } }] } }), field: 'spec.acme.solvers[0].dns01.rfc2136.tsigSecretSecretRef.name', reason: 'FieldValueRequired' },
  { name: 'rfc2136 tsig algorithm', obj: issuerWith({ acme: { ...acmeBase, solvers: [{ dns01: { rfc2136: { nameserver: 'ns1.example.com', tsigAlgorithm: 'HMACSHA3' } } }] } }), field: 'spec.acme.solvers[0].dns01.rfc2136.tsigAlgorithm', reason: 'FieldValueNotSupported' },
  { name: 'ingress with two names', obj: issuerWith({ acme: { ...acmeBase, solvers: [{ http01: { ingress: { class: 'a', name: 'b' } } }] } }), field: 'spec.acme.solvers[0].http01.ingress', reason: 'FieldValueInvalid' },
  { name: 'preferredChain too long', obj: issuerWith({ acme: { ...acmeBase, preferredChain: 'x'.repeat(65) } }), field: 'spec.acme.preferredChain', reason: 'FieldValueInvalid', message: /64/ },
];

for (const c of cases) {
  test(`validation: ${c.name} → ${c.field}`, () => {
    const type = R.resourceTypeFor(c.obj.apiVersion, c.obj.kind)!;
    const errs = validate(type, c.obj, c.old);
    assert.equal(errs.length, 1, `expected exactly one error, got ${JSON.stringify(errs)}`);
    assert.equal(errs[0].field, c.field);
    assert.equal(errs[0].reason, c.reason);
    if (c.message) assert.match(errs[0].message, c.message);
  });
}

test('renewBefore with renewBeforePercentage reports both fields', () => {
  const errs = validate(R.Certificate, certWith({ renewBefore: '1h', renewBeforePercentage: 10 }));
  assert.deepEqual(one(errs), ['spec.renewBefore|FieldValueInvalid', 'spec.renewBeforePercentage|FieldValueInvalid']);
  assert.match(errs[0].message, /mutually exclusive/);
});

test('boundary values cert-manager accepts: duration 1h, renewBefore 5m, Ed25519 with size, @daily windows', () => {
  assert.deepEqual(validate(R.Certificate, certWith({ duration: '1h', renewBefore: '5m' })), []);
  assert.deepEqual(validate(R.Certificate, certWith({ privateKey: { algorithm: 'Ed25519', size: 256 }, signatureAlgorithm: 'PureEd25519' })), []);
  assert.deepEqual(validate(R.Certificate, certWith({ renewal: { policy: 'EarliestWindow', windows: [{ cron: '@daily', duration: '90m' }] } })), []);
  assert.deepEqual(validate(R.Certificate, certWith({ literalSubject: 'CN=a\\,b,O=Acme+OU=x,1.2.3.4=#0403616263', dnsNames: [] })), []);
  // a truncated BER element is refused, as go-ldap's ParseDN refuses it in the webhook (it was accepted before)
  assert.match(validate(R.Certificate, certWith({ literalSubject: 'CN=a,1.2.3.4=#0101', dnsNames: [] }))[0]?.message ?? '', /hex-encoded value of 1\.2\.3\.4 is not a BER element/);
  // RFC 5280 4.2.1.10: an e-mail constraint is a mailbox, a host or a domain (leading dot); cert-manager checks none of them
  assert.deepEqual(validate(R.Certificate, certWith({ isCA: true, nameConstraints: { permitted: { emailAddresses: ['example.com', '.example.com', 'ops@example.com'] }, excluded: { emailAddresses: ['.bad.example.com'] } } })), []);
});

test('one Certificate with five different mistakes yields five errors at five distinct paths', () => {
  const obj = certWith({
    secretName: 'UPPER',
    duration: '30m',
    usages: ['server auth', 'nope'],
    ipAddresses: ['::zz'],
    renewal: { windows: [{ cron: ['0 1 * * *', 'bad cron'], duration: '1h' }] },
  });
  const errs = validate(R.Certificate, obj);
  assert.deepEqual(errs.map((e) => e.field).sort(), [
    'spec.duration', 'spec.ipAddresses[0]', 'spec.renewal.windows[0].cron[1]', 'spec.secretName', 'spec.usages[1]',
  ]);
  const msg = invalidObjectMessage(R.Certificate, 'c', errs);
  assert.match(msg, /^Certificate\.cert-manager\.io "c" is invalid: \[/);
  assert.match(msg, /spec\.duration: Invalid value: "30m": certificate duration must be greater than 1h0m0s/);
  assert.match(msg, /spec\.usages\[1\]: Unsupported value: "nope": supported values: /);
});

function csrBase64(): string {
  const pem = execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', '/dev/null', '-subj', '/CN=a.example.com'], { stdio: ['ignore', 'pipe', 'ignore'] });
  return pem.toString('base64');
}

test('CertificateRequest: CSR must parse on create; spec and cert-manager annotations immutable; approval rules', () => {
  const cr: KubeObject = {
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
    metadata: { name: 'cr', namespace: 'ns', annotations: { 'cert-manager.io/certificate-revision': '1' } },
    spec: { request: csrBase64(), issuerRef: { name: 'ca' }, usages: ['digital signature'] },
  };
  assert.deepEqual(validate(R.CertificateRequest, cr), []);
  const garbage = { ...cr, spec: { ...(cr.spec as object), request: Buffer.from('hello').toString('base64') } };
  assert.deepEqual(one(validate(R.CertificateRequest, garbage)), ['spec.request|FieldValueInvalid']);
  assert.match(validate(R.CertificateRequest, garbage)[0].message, /^encoded CSR error/);

  // A status update that leaves spec alone is fine; approval is set once, as True.
  const approved = structuredClone(cr);
  approved.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'cert-manager.io', message: 'ok' }] };
  assert.deepEqual(validate(R.CertificateRequest, approved, cr), []);

  const changed = structuredClone(approved);
  (changed.spec as any).isCA = true;
  assert.deepEqual(one(validate(R.CertificateRequest, changed, approved)), ['spec|FieldValueForbidden']);

  const annotated = structuredClone(approved);
  annotated.metadata.annotations!['cert-manager.io/certificate-revision'] = '2';
  assert.deepEqual(one(validate(R.CertificateRequest, annotated, approved)), ['metadata.annotations[cert-manager.io/certificate-revision]|FieldValueForbidden']);

  const unapproved = structuredClone(approved);
  unapproved.status = { conditions: [] };
  assert.deepEqual(one(validate(R.CertificateRequest, unapproved, approved)), ['status.conditions|FieldValueForbidden']);

  const both = structuredClone(cr);
  both.status = { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Denied', status: 'True' }] };
  assert.deepEqual(one(validate(R.CertificateRequest, both)), ['status.conditions|FieldValueForbidden']);

  const falseApproval = structuredClone(cr);
  falseApproval.status = { conditions: [{ type: 'Approved', status: 'False' }] };
  assert.deepEqual(one(validate(R.CertificateRequest, falseApproval)), ['status.conditions|FieldValueInvalid']);
});

test('Order and Challenge specs are immutable; status may change', () => {
  const order: KubeObject = {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Order', metadata: { name: 'o-1', namespace: 'ns' },
    spec: { request: csrBase64(), issuerRef: { name: 'le', kind: 'ClusterIssuer' }, dnsNames: ['a.example.com'] },
  };
  assert.deepEqual(validate(R.Order, order), []);
  const withStatus = { ...order, status: { state: 'pending', url: 'https://acme/order/1' } };
  assert.deepEqual(validate(R.Order, withStatus, order), []);
  const changed = { ...order, spec: { ...(order.spec as object), dnsNames: ['b.example.com'] } };
  const errs = validate(R.Order, changed, order);
  assert.deepEqual(one(errs), ['spec|FieldValueForbidden']);
  assert.equal(errs[0].message, 'field is immutable');
  assert.deepEqual(one(validate(R.Order, { ...order, status: { state: 'weird' } })), ['status.state|FieldValueNotSupported']);

  const ch: KubeObject = {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', metadata: { name: 'o-1-123', namespace: 'ns' },
    spec: {
      url: 'https://acme/chall/1', authorizationURL: 'https://acme/authz/1', dnsName: 'a.example.com', type: 'HTTP-01',
      token: 'tok', key: 'tok.thumb', issuerRef: { name: 'le', kind: 'ClusterIssuer' }, solver: { http01: { ingress: {} } },
    },
  };
  assert.deepEqual(validate(R.Challenge, ch), []);
  assert.deepEqual(validate(R.Challenge, { ...ch, status: { processing: true, presented: true, state: 'pending' } }, ch), []);
  assert.deepEqual(one(validate(R.Challenge, { ...ch, spec: { ...(ch.spec as object), key: 'other' } }, ch)), ['spec|FieldValueForbidden']);
  assert.deepEqual(one(validate(R.Challenge, { ...ch, spec: { ...(ch.spec as object), type: 'TLS-ALPN-01' } })), ['spec.type|FieldValueNotSupported']);
  const missing = structuredClone(ch);
  delete (missing.spec as any).token;
  assert.deepEqual(one(validate(R.Challenge, missing)), ['spec.token|FieldValueRequired']);
});

test('core kinds get metadata checks only', () => {
  assert.deepEqual(validate(R.SecretType, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'n' }, data: {} }), []);
  assert.deepEqual(one(validate(R.NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } })), ['metadata.name|FieldValueInvalid']);
});

test('a kind checked often enough to have its schema compiled gets the same answers as before', () => {
  const bad = certWith({ secretName: 's', issuerRef: { name: 'ca' }, duration: 5, privateKey: { algorithm: 'DSA' } });
  const firstGood = validate(R.Certificate, realisticCertificate);
  const firstBad = validate(R.Certificate, bad);
  assert.deepEqual(firstGood, []);
  assert.ok(firstBad.length > 0);
  // past the point where the schema is compiled (structural.ts compiles after 200 checks)
  for (let i = 0; i < 500; i++) {
    assert.deepEqual(validate(R.Certificate, realisticCertificate), firstGood);
    assert.deepEqual(validate(R.Certificate, bad), firstBad);
  }
});
