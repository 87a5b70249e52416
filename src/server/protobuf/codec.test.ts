// The protobuf codec against bodies kubectl v1.32 really sent (captured with -v=9), and round
// trips of every kind it carries: the JSON form must come back as it went in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtobufDecodeError, decodeObject, encodeObject, hasProtobufSchema, isProtobufMediaType } from './codec.ts';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** `kubectl create secret generic fixture --from-literal=k=v` */
const createSecretBody = hex(`
  6b 38 73 00 0a 0c 0a 02 76 31 12 06 53 65 63 72 65 74 12 23 0a 17 0a 07 66 69 78 74 75 72 65 12
  00 1a 00 22 00 2a 00 32 00 38 00 42 00 12 06 0a 01 6b 12 01 76 1a 00 1a 00 22 00`);

/** `kubectl create namespace fixture` */
const createNamespaceBody = hex(`
  6b 38 73 00 0a 0f 0a 02 76 31 12 09 4e 61 6d 65 73 70 61 63 65 12 1f 0a 17 0a 07 66 69 78 74 75
  72 65 12 00 1a 00 22 00 2a 00 32 00 38 00 42 00 12 00 1a 02 0a 00 1a 00 22 00`);

/** `kubectl auth can-i create certificates.cert-manager.io -n default` */
const canIBody = hex(`
  6b 38 73 00 0a 32 0a 17 61 75 74 68 6f 72 69 7a 61 74 69 6f 6e 2e 6b 38 73 2e 69 6f 2f 76 31 12
  17 53 65 6c 66 53 75 62 6a 65 63 74 41 63 63 65 73 73 52 65 76 69 65 77 12 56 0a 10 0a 00 12 00
  1a 00 22 00 2a 00 32 00 38 00 42 00 12 38 0a 36 0a 07 64 65 66 61 75 6c 74 12 06 63 72 65 61 74
  65 1a 0f 63 65 72 74 2d 6d 61 6e 61 67 65 72 2e 69 6f 22 00 2a 0c 63 65 72 74 69 66 69 63 61 74
  65 73 32 00 3a 00 1a 08 08 00 12 00 1a 00 20 00 1a 00 22 00`);

test('protobuf: kubectl\'s create secret body decodes to the Secret, Go\'s zero values dropped', () => {
  assert.deepEqual(decodeObject(createSecretBody), {
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fixture' }, data: { k: Buffer.from('v').toString('base64') },
  });
});

test('protobuf: kubectl\'s create namespace and auth can-i bodies decode', () => {
  assert.deepEqual(decodeObject(createNamespaceBody), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fixture' } });
  assert.deepEqual(decodeObject(canIBody), {
    apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes: { namespace: 'default', verb: 'create', group: 'cert-manager.io', resource: 'certificates' } },
  });
});

test('protobuf: Secret, Namespace, Event, Lease and lists survive a round trip', () => {
  const meta = {
    name: 'a', namespace: 'default', uid: '6c1f0b6e-0000-4000-8000-000000000001', resourceVersion: '42', generation: 2,
    creationTimestamp: '2026-01-02T03:04:05Z', deletionTimestamp: '2026-01-03T00:00:00Z', deletionGracePeriodSeconds: 30,
    labels: { app: 'x', empty: '' }, annotations: { note: 'ü ✓ 😀' }, finalizers: ['example.test/f'],
    ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'c', uid: 'u', controller: true, blockOwnerDeletion: true }],
    managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: '2026-01-02T03:04:05Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:k': {} } } }],
  };
  const objects = [
    { apiVersion: 'v1', kind: 'Secret', metadata: meta, type: 'kubernetes.io/tls', immutable: true, data: { 'tls.crt': Buffer.from([0, 1, 2, 255]).toString('base64'), empty: '' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Terminating', conditions: [{ type: 'T', status: 'True', lastTransitionTime: '2026-01-02T03:04:05Z', reason: 'R', message: 'm' }] } },
    {
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'e.1', namespace: 'default' },
      involvedObject: { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'c', namespace: 'default', uid: 'u' },
      reason: 'Issuing', message: 'done', source: { component: 'cert-manager-certificates-issuing' }, firstTimestamp: '2026-01-02T03:04:05Z',
      lastTimestamp: '2026-01-02T03:05:05Z', count: 3, type: 'Normal', eventTime: '2026-01-02T03:04:05.123456Z', reportingComponent: 'certsmith',
    },
    {
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'kube-system' },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: '2026-01-02T03:04:05.000001Z', renewTime: '2026-01-02T03:04:06.999999Z', leaseTransitions: 4 },
    },
    { apiVersion: 'v1', kind: 'SecretList', metadata: { resourceVersion: '7', continue: 'abc', remainingItemCount: 3 }, items: [{ metadata: { name: 's' }, type: 'Opaque' }] },
    { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message: 'no', reason: 'Invalid', code: 422, details: { name: 'x', kind: 'secrets', causes: [{ field: 'data', message: 'bad', reason: 'FieldValueInvalid' }] } },
  ];
  for (const o of objects) {
    const bytes = encodeObject(o);
    assert.ok(bytes, `${o.kind} has a message`);
    const expected = structuredClone(o) as Record<string, any>;
    // an empty ListMeta / map is absent once decoded, as Go's JSON omits it
    if (o.kind === 'Status') delete expected.metadata;
    assert.deepEqual(decodeObject(bytes), expected, o.kind);
  }
});

test('protobuf: Pod, Service, Ingress and webhook configurations survive a round trip (quantities, int-or-strings, upstream field names)', () => {
  const objects = [
    {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'cm-acme-http-solver-x', namespace: 'default' },
      spec: {
        containers: [{
          name: 'acmesolver', image: 'ghcr.io/certsmith/certsmith:0.1.0', args: ['acmesolver', '--listen-port=8089'],
          ports: [{ name: 'http', containerPort: 8089, protocol: 'TCP' }],
          resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '100m', memory: '1Gi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
          livenessProbe: { tcpSocket: { port: 8089 } },
          securityContext: { runAsNonRoot: true, capabilities: { drop: ['ALL'] } },
        }],
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        restartPolicy: 'OnFailure',
      },
      status: { phase: 'Running', podIP: '10.0.0.7', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-02T03:04:05Z' }] },
    },
    {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'solver', namespace: 'default', labels: { app: 'solver' } },
      spec: { type: 'NodePort', selector: { app: 'solver' }, ports: [{ name: 'http', port: 8089, targetPort: 8089, protocol: 'TCP' }, { port: 443, targetPort: 'https' }] },
    },
    {
      apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'solver', namespace: 'default' },
      spec: {
        ingressClassName: 'nginx', tls: [{ hosts: ['a.example.test'], secretName: 'a-tls' }],
        rules: [{ host: 'a.example.test', http: { paths: [{ path: '/.well-known/acme-challenge/t', pathType: 'ImplementationSpecific', backend: { service: { name: 'solver', port: { number: 8089 } } } }] } }],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'hook', annotations: { 'cert-manager.io/inject-ca-from': 'default/hook' } },
      webhooks: [{
        name: 'hook.example.test', admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Fail', timeoutSeconds: 5,
        clientConfig: { caBundle: Buffer.from('-----BEGIN CERTIFICATE-----').toString('base64'), service: { namespace: 'default', name: 'hook', path: '/validate', port: 443 } },
        rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['cert-manager.io'], apiVersions: ['v1'], resources: ['certificates'], scope: '*' }],
        namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
      }],
    },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'm' }, webhooks: [{ name: 'm.example.test', reinvocationPolicy: 'IfNeeded', clientConfig: { url: 'https://127.0.0.1:9443/m' } }] },
  ];
  for (const o of objects) {
    const bytes = encodeObject(o);
    assert.ok(bytes, `${o.kind} has a message`);
    assert.deepEqual(decodeObject(bytes), o, o.kind);
  }
});

test('protobuf: the kinds without a message are left to JSON', () => {
  assert.equal(encodeObject({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate' }), undefined);
  assert.equal(hasProtobufSchema('cert-manager.io/v1', 'Certificate'), false);
  assert.equal(hasProtobufSchema('v1', 'Secret'), true);
  assert.equal(isProtobufMediaType('application/vnd.kubernetes.protobuf; charset=binary'), true);
  assert.equal(isProtobufMediaType('application/json'), false);
});

test('protobuf: bodies that are not Kubernetes protobuf objects are refused with a reason', () => {
  const refused = (body: Buffer, pattern: RegExp) => assert.throws(() => decodeObject(body), (e: unknown) => e instanceof ProtobufDecodeError && pattern.test(e.message));
  refused(Buffer.from('{"kind":"Secret"}'), /does not start with "k8s\\x00"/);
  refused(createSecretBody.subarray(0, 30), /not a valid protobuf envelope/);
  const unknownKind = encodeObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } })!;
  // same bytes with the kind renamed to one of the same length that has no message
  refused(Buffer.from(unknownKind.toString('latin1').replace('Secret', 'Widget'), 'latin1'), /no kind "Widget"/);
  // a name that is not UTF-8 (0xff) is refused, not turned into U+FFFD
  refused(Buffer.from(createSecretBody.toString('latin1').replace('fixture', 'fixtur\xff'), 'latin1'), /not valid UTF-8/);
  // a time no RFC 3339 text can hold (Go's MarshalJSON refuses years past 9999): a 400, not an exception (was a 500)
  const far = encodeObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', creationTimestamp: '+275760-09-13T00:00:00Z' } })!;
  refused(far, /metadata\.creationTimestamp: .*out of range/);
});
