import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import type { Challenge } from '../../../../api/types.ts';
import {
  adler32, challengePath, routesChallenge, solverIngress, solverLabels, solverPod, solverService, withChallengePath, withoutChallengePath,
  DOMAIN_LABEL, INGRESS_CLASS_ANNOTATION, SOLVER_LABEL, TOKEN_LABEL, type Ingress,
} from './resources.ts';

function challenge(ingress: Record<string, unknown> = {}): Challenge {
  return {
    apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge',
    metadata: { name: 'web-1-2-3', namespace: 'apps', uid: 'uid-ch' },
    spec: {
      url: 'https://acme/chall/1', authorizationURL: 'https://acme/authz/1', dnsName: 'www.example.test', wildcard: false,
      type: 'HTTP-01', token: 'tok_EN-1', key: 'tok_EN-1.thumbprint', solver: { http01: { ingress } },
      issuerRef: { name: 'pebble', kind: 'ClusterIssuer', group: 'cert-manager.io' },
    },
  } as Challenge;
}

// zlib's stream ends in the big-endian Adler-32 of the input: an independent reference.
const zlibAdler = (s: string) => deflateSync(Buffer.from(s)).readUInt32BE(deflateSync(Buffer.from(s)).length - 4);

test('labels are cert-manager\'s: Adler-32 of domain and token in decimal, and the solver marker', () => {
  for (const s of ['', 'a', 'www.example.test', 'x'.repeat(5000), 'héllo']) assert.equal(adler32(s), zlibAdler(s), s);
  assert.equal(adler32('Wikipedia'), 0x11e60398);
  assert.deepEqual(solverLabels(challenge()), {
    [DOMAIN_LABEL]: String(zlibAdler('www.example.test')), [TOKEN_LABEL]: String(zlibAdler('tok_EN-1')), [SOLVER_LABEL]: 'true',
  });
});

test('the Pod runs certsmith acmesolver with the challenge\'s flags, owned by the Challenge', () => {
  const pod = solverPod(challenge());
  assert.equal(pod.metadata.generateName, 'cm-acme-http-solver-');
  assert.equal(pod.metadata.namespace, 'apps');
  assert.deepEqual(pod.metadata.labels, solverLabels(challenge()));
  assert.deepEqual(pod.metadata.ownerReferences, [{ apiVersion: 'acme.cert-manager.io/v1', kind: 'Challenge', name: 'web-1-2-3', uid: 'uid-ch', controller: true, blockOwnerDeletion: true }]);
  const [c] = pod.spec.containers;
  assert.equal(c.image, 'certsmith:latest');
  assert.deepEqual(c.args, ['acmesolver', '--listen-port=8089', '--domain=www.example.test', '--token=tok_EN-1', '--key=tok_EN-1.thumbprint']);
  assert.deepEqual(c.ports, [{ name: 'http', containerPort: 8089 }]);
  assert.deepEqual(c.resources, { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } });
  assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
  assert.equal(pod.spec.restartPolicy, 'OnFailure');
  assert.equal(pod.spec.securityContext?.runAsNonRoot, true);
  assert.equal(solverPod(challenge(), { image: 'registry.example/certsmith:1.2' }).spec.containers[0].image, 'registry.example/certsmith:1.2');
  assert.throws(() => solverPod({ ...challenge(), metadata: { name: 'x', namespace: 'apps' } }), /no uid/);
});

test('podTemplate metadata and spec override the defaults, but never the solver labels', () => {
  const pod = solverPod(challenge({
    podTemplate: {
      metadata: { labels: { team: 'web', [SOLVER_LABEL]: 'false' }, annotations: { 'sidecar.istio.io/inject': 'true', note: 'n' } },
      spec: {
        nodeSelector: { pool: 'edge' }, tolerations: [{ key: 'edge', operator: 'Exists' }], priorityClassName: 'high',
        serviceAccountName: 'solver', imagePullSecrets: [{ name: 'pull' }], securityContext: { runAsUser: 1000 },
        resources: { limits: { cpu: '1', memory: '128Mi' } },
      },
    },
  }));
  assert.equal(pod.metadata.labels?.team, 'web');
  assert.equal(pod.metadata.labels?.[SOLVER_LABEL], 'true');
  assert.equal(pod.metadata.annotations?.['sidecar.istio.io/inject'], 'true');
  assert.equal(pod.metadata.annotations?.note, 'n');
  assert.deepEqual(pod.spec.nodeSelector, { 'kubernetes.io/os': 'linux', pool: 'edge' });
  assert.deepEqual(pod.spec.tolerations, [{ key: 'edge', operator: 'Exists' }]);
  assert.equal(pod.spec.priorityClassName, 'high');
  assert.equal(pod.spec.serviceAccountName, 'solver');
  assert.deepEqual(pod.spec.imagePullSecrets, [{ name: 'pull' }]);
  assert.deepEqual(pod.spec.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' }, runAsUser: 1000 });
  // limits given, requests kept from the defaults
  assert.deepEqual(pod.spec.containers[0].resources, { requests: { cpu: '10m', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } });
});

test('the Service selects the Pod on port 8089, NodePort unless serviceType says otherwise', () => {
  const svc = solverService(challenge());
  const pod = solverPod(challenge({ podTemplate: { metadata: { labels: { team: 'web' } } } }));
  assert.equal(svc.spec.type, 'NodePort');
  for (const [k, v] of Object.entries(svc.spec.selector!)) assert.equal(pod.metadata.labels?.[k], v, `selector ${k}`);
  assert.deepEqual(svc.spec.ports, [{ name: 'http', port: 8089, targetPort: 8089 }]);
  assert.deepEqual(svc.metadata.labels, solverLabels(challenge()));
  assert.equal(svc.metadata.ownerReferences?.[0].uid, 'uid-ch');
  assert.equal(solverService(challenge({ serviceType: 'ClusterIP' })).spec.type, 'ClusterIP');
});

test('the Ingress routes host and token path to the Service, with ingressClassName or the class annotation', () => {
  const byName = solverIngress(challenge({ ingressClassName: 'nginx' }), 'cm-acme-http-solver-abcde');
  assert.equal(byName.spec.ingressClassName, 'nginx');
  assert.equal(byName.metadata.annotations?.[INGRESS_CLASS_ANNOTATION], undefined);
  assert.deepEqual(byName.spec.rules, [{
    host: 'www.example.test',
    http: { paths: [{ path: '/.well-known/acme-challenge/tok_EN-1', pathType: 'ImplementationSpecific', backend: { service: { name: 'cm-acme-http-solver-abcde', port: { number: 8089 } } } }] },
  }]);
  assert.equal(byName.metadata.ownerReferences?.[0].uid, 'uid-ch');
  assert.ok(routesChallenge(byName, challenge(), 'cm-acme-http-solver-abcde'));
  assert.ok(!routesChallenge(byName, challenge(), 'other-service'));

  const byAnnotation = solverIngress(challenge({
    class: 'traefik',
    ingressTemplate: { metadata: { labels: { team: 'web' }, annotations: { [INGRESS_CLASS_ANNOTATION]: 'nginx', 'x/y': 'z' } } },
  }), 'svc');
  assert.equal(byAnnotation.spec.ingressClassName, undefined);
  assert.equal(byAnnotation.metadata.annotations?.[INGRESS_CLASS_ANNOTATION], 'traefik', 'the template cannot change the class');
  assert.equal(byAnnotation.metadata.annotations?.['x/y'], 'z');
  assert.equal(byAnnotation.metadata.labels?.team, 'web');
  assert.equal(byAnnotation.metadata.labels?.[SOLVER_LABEL], 'true');
});

test('ingress.name: the challenge path is added to the named Ingress once, and removed leaving the rest', () => {
  const c = challenge({ name: 'web' });
  const web: Ingress = {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'web', namespace: 'apps', resourceVersion: '7' },
    spec: {
      ingressClassName: 'nginx',
      rules: [
        { host: 'other.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } },
        { host: 'www.example.test', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'app', port: { number: 80 } } } }] } },
      ],
    },
  };
  const added = withChallengePath(web, c, 'svc-1')!;
  assert.equal(added.metadata.resourceVersion, '7', 'an update of what was read');
  assert.deepEqual(added.spec.rules![1].http!.paths.map((p) => p.path), [challengePath('tok_EN-1'), '/'], 'the challenge path goes first');
  assert.deepEqual(added.spec.rules![0], web.spec.rules![0]);
  assert.equal(web.spec.rules![1].http!.paths.length, 1, 'the input is not changed');
  assert.equal(withChallengePath(added, c, 'svc-1'), undefined, 'already routed: nothing to write');
  const moved = withChallengePath(added, c, 'svc-2')!;
  assert.deepEqual(moved.spec.rules![1].http!.paths.map((p) => p.backend.service?.name), ['svc-2', 'app'], 'a stale backend is replaced, not duplicated');

  const removed = withoutChallengePath(moved, c)!;
  assert.deepEqual(removed.spec.rules, web.spec.rules);
  assert.equal(withoutChallengePath(removed, c), undefined, 'nothing left to remove');

  // a host without a rule gets one, and loses the whole rule on clean-up
  const bare: Ingress = { ...web, spec: { rules: [web.spec.rules![0]] } };
  const withRule = withChallengePath(bare, c, 'svc-1')!;
  assert.deepEqual(withRule.spec.rules!.map((r) => r.host), ['other.example.test', 'www.example.test']);
  assert.deepEqual(withoutChallengePath(withRule, c)!.spec.rules, bare.spec.rules);
});
