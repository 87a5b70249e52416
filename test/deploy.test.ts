// deploy/ checked without a cluster: every manifest parses and is a kind a cluster knows, the
// Deployment runs `certsmith controller` with flags it accepts, and the RBAC rules grant
// what the controllers' code reads and writes (found by reading the sources) and no other writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import YAML from 'yaml';
import * as resources from '../src/api/resources.ts';
import type { ResourceType } from '../src/api/resources.ts';
import { leaseName } from '../src/cli/controller-lease.ts';
import { run, repoRoot, certsmithBin } from './e2e/harness.ts';

const deployDir = join(repoRoot, 'deploy');
const namespace = 'certsmith';
const serviceAccount = 'certsmith';

// deploy/monitoring/ is a kustomization of its own for the Prometheus Operator's kinds (and a
// plain Prometheus rule file), applied separately; test/e2e/monitoring.test.ts checks it.
const separatelyApplied = new Set([join(deployDir, 'monitoring')]);

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (separatelyApplied.has(p)) return [];
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(f) ? [p] : [];
  });
}

interface Doc { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; [k: string]: any }

const files = yamlFiles(deployDir);
const docsByFile = new Map<string, Doc[]>(files.map((f) => {
  const parsed = YAML.parseAllDocuments(readFileSync(f, 'utf8'));
  for (const d of parsed) assert.deepEqual(d.errors, [], `${relative(deployDir, f)} parses`);
  return [relative(deployDir, f), parsed.map((d) => d.toJS() as Doc).filter(Boolean)];
}));
const objects = [...docsByFile.entries()].filter(([f]) => f !== 'kustomization.yaml').flatMap(([, docs]) => docs);
const only = (kind: string, name?: string) => {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  assert.equal(found.length, 1, `exactly one ${kind}${name ? ` ${name}` : ''} in deploy/`);
  return found[0];
};

const knownKinds: Record<string, { apiVersion: string; namespaced: boolean }> = {
  Namespace: { apiVersion: 'v1', namespaced: false },
  ServiceAccount: { apiVersion: 'v1', namespaced: true },
  Service: { apiVersion: 'v1', namespaced: true },
  Deployment: { apiVersion: 'apps/v1', namespaced: true },
  ClusterRole: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: false },
  ClusterRoleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: false },
  Role: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: true },
  RoleBinding: { apiVersion: 'rbac.authorization.k8s.io/v1', namespaced: true },
  CustomResourceDefinition: { apiVersion: 'apiextensions.k8s.io/v1', namespaced: false },
  ValidatingWebhookConfiguration: { apiVersion: 'admissionregistration.k8s.io/v1', namespaced: false },
  MutatingWebhookConfiguration: { apiVersion: 'admissionregistration.k8s.io/v1', namespaced: false },
};

test('every YAML in deploy/ parses into objects of known kinds and apiVersions, in the certsmith namespace', () => {
  assert.ok(files.length >= 12, `found ${files.length} YAML files`);
  for (const o of objects) {
    const known = knownKinds[o.kind];
    assert.ok(known, `unexpected kind ${o.kind}`);
    assert.equal(o.apiVersion, known.apiVersion, `${o.kind} ${o.metadata.name}`);
    assert.ok(o.metadata.name, `${o.kind} has a name`);
    if (known.namespaced) assert.equal(o.metadata.namespace, namespace, `${o.kind} ${o.metadata.name} namespace`);
    else assert.equal(o.metadata.namespace, undefined, `${o.kind} ${o.metadata.name} is cluster-scoped`);
  }
  only('Namespace', namespace);
  const kustomization = docsByFile.get('kustomization.yaml')![0];
  assert.equal(kustomization.apiVersion, 'kustomize.config.k8s.io/v1beta1');
  assert.equal(kustomization.kind, 'Kustomization');
});

test('the CRDs are those of the resource registry, and the kustomization lists every manifest', () => {
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  const ours = resources.resourceTypes.filter((t) => t.group.endsWith('cert-manager.io'));
  assert.deepEqual(crds.map((c) => c.metadata.name).sort(), ours.map((t) => `${t.plural}.${t.group}`).sort());
  for (const c of crds) {
    const t = ours.find((x) => `${x.plural}.${x.group}` === c.metadata.name)!;
    assert.equal(c.spec.group, t.group);
    assert.equal(c.spec.names.kind, t.kind);
    assert.equal(c.spec.scope, t.namespaced ? 'Namespaced' : 'Cluster');
  }
  const listed: string[] = docsByFile.get('kustomization.yaml')![0].resources;
  assert.deepEqual([...listed].sort(), [...docsByFile.keys()].filter((f) => f !== 'kustomization.yaml').sort());
  // CRDs first: the API must know the kinds before anything refers to them
  const firstOther = listed.findIndex((f) => !f.startsWith('crds/'));
  assert.ok(listed.slice(firstOther).every((f) => !f.startsWith('crds/')), 'CRDs listed first');
});

test('the Deployment runs certsmith controller with flags that `certsmith controller --help` lists', async () => {
  const help = await run(process.execPath, [certsmithBin, 'controller', '--help']);
  assert.equal(help.code, 0, help.stderr);
  const accepted = new Set(help.stdout.match(/--[a-z0-9-]+/g));
  assert.ok(accepted.has('--leader-elect'), help.stdout);

  const dep = only('Deployment', 'certsmith');
  assert.equal(dep.spec.replicas, 2);
  const pod = dep.spec.template;
  assert.deepEqual(dep.spec.selector.matchLabels, Object.fromEntries(Object.entries(pod.metadata.labels).filter(([k]) => k in dep.spec.selector.matchLabels)));
  const [c] = pod.spec.containers;
  const args: string[] = c.args;
  assert.equal(args[0], 'controller');
  const flags = new Map<string, string | true>();
  for (let i = 1; i < args.length; i++) {
    assert.ok(args[i].startsWith('--'), `argument ${args[i]} is a flag`);
    const [name, ...value] = args[i].split('=');
    assert.ok(accepted.has(name), `${name} is a flag of certsmith controller`);
    flags.set(name, value.length ? value.join('=') : true);
  }
  assert.equal(flags.get('--leader-elect'), true);
  assert.equal(flags.get('--cluster-resource-namespace'), namespace);
  assert.equal(flags.get('--leader-election-namespace'), namespace);
  // the solver Pods run `certsmith acmesolver` from the controller's own image
  assert.equal(flags.get('--acme-http01-solver-image'), c.image);

  // cert-manager's ports, reachable from outside the pod for probes and scrapes
  const port = (name: string) => c.ports.find((p: { name: string }) => p.name === name)?.containerPort;
  assert.equal(port('http-metrics'), 9402);
  assert.equal(port('http-healthz'), 9403);
  assert.equal(flags.get('--metrics-listen'), '0.0.0.0:9402');
  assert.equal(flags.get('--health-listen'), '0.0.0.0:9403');
  for (const [probe, path] of [['livenessProbe', '/healthz'], ['readinessProbe', '/readyz']] as const) {
    assert.equal(c[probe].httpGet.path, path);
    assert.ok([9403, 'http-healthz'].includes(c[probe].httpGet.port), `${probe} on 9403`);
  }
  assert.deepEqual(pod.metadata.annotations, { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9402', 'prometheus.io/path': '/metrics' });

  assert.equal(pod.spec.serviceAccountName, serviceAccount);
  assert.equal(pod.spec.securityContext.runAsNonRoot, true);
  assert.ok(pod.spec.securityContext.runAsUser > 0);
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
  // Node writes its compile cache there: the only writable place is an emptyDir
  const tmp = c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/tmp');
  assert.ok(pod.spec.volumes.some((v: { name: string; emptyDir?: object }) => v.name === tmp?.name && v.emptyDir), '/tmp is an emptyDir');
  assert.ok(c.resources.requests.cpu && c.resources.requests.memory && c.resources.limits.memory);

  const svc = only('Service', 'certsmith');
  assert.equal(svc.spec.ports[0].port, 9402);
  assert.equal(svc.spec.ports[0].targetPort, 'http-metrics');
  for (const [k, v] of Object.entries(svc.spec.selector)) assert.equal(pod.metadata.labels[k], v, 'the Service selects the pods');
  only('ServiceAccount', serviceAccount);
});

test('the Dockerfile builds a non-root image from node:22-slim that runs the compiled build with runtime dependencies only', () => {
  const text = readFileSync(join(deployDir, 'Dockerfile'), 'utf8');
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.ok(!pkg.dependencies.tsx && pkg.devDependencies.tsx, 'tsx is for tests and development only');
  assert.ok(!pkg.dependencies.typescript && pkg.devDependencies.typescript, 'the compiler is a build dependency');
  const stages = text.split(/^FROM /m).slice(1);
  assert.equal(stages.length, 2, 'a build stage and the image');
  for (const s of stages) assert.match(s, /^node:22-slim\b/);
  assert.match(stages[0], /npm run build/);
  assert.match(stages[0], /npm prune --omit=dev/);
  assert.match(stages[1], /^COPY --from=build \/app\/dist \.\/dist$/m);
  assert.doesNotMatch(stages[1], /COPY src\b(?!\/dashboard\/assets )/, 'the image carries no TypeScript sources');
  // the dashboard (certsmith server, certsmith dashboard) serves its page from there
  assert.match(stages[1], /^COPY src\/dashboard\/assets \.\/src\/dashboard\/assets$/m, 'the image carries the dashboard\'s assets');
  // node runs with the flags `certsmith` itself runs with (its exec line)
  const bin = readFileSync(join(repoRoot, 'bin', 'certsmith.mjs'), 'utf8').split('\n');
  assert.equal(bin[0], '#!/bin/sh', 'sh starts it: env -S is not in BusyBox\'s env (Alpine) nor the BSDs\'');
  const exec = /^":" \/\/; exec node((?: --[a-z-]+)*) "\$0" "\$@"$/.exec(bin[1]);
  assert.ok(exec, 'the second line execs node with its flags on the file');
  const flags = exec[1].trim().split(' ').filter(Boolean);
  assert.ok(flags.includes('--no-memory-reducer'));
  assert.match(text, new RegExp(`^ENTRYPOINT \\[${['node', ...flags, 'bin/certsmith.mjs'].map((a) => `"${a.replace(/[./]/g, '\\$&')}"`).join(', ')}\\]$`, 'm'));
  const user = /^USER (\d+)(?::(\d+))?$/m.exec(text);
  assert.ok(user, 'a numeric USER, so runAsNonRoot can be verified');
  assert.equal(Number(user[1]), only('Deployment', 'certsmith').spec.template.spec.securityContext.runAsUser);
  assert.match(text, /^EXPOSE 9402 9403$/m);
});

// ---- RBAC: what the code does against what the roles allow

interface Rule { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }
interface Access { group: string; resource: string; verb: string; type: ResourceType; where: string }

const typeByIdentifier = new Map<string, ResourceType>(
  Object.entries(resources).filter(([, v]) => v && typeof v === 'object' && 'plural' in v && 'kind' in v) as Array<[string, ResourceType]>,
);

/** The production sources under dir: not tests, and not the test rigs in `testing/` folders (they never run in the controller). */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === 'testing' ? [] : sources(p);
    return f.endsWith('.ts') && !f.endsWith('.test.ts') ? [p] : [];
  });
}

/** Every store call and informer in the controllers and their runtime, as API accesses. */
function accessesInCode(): Access[] {
  const out: Access[] = [];
  for (const file of [...sources(join(repoRoot, 'src/controllers')), ...sources(join(repoRoot, 'src/runtime'))]) {
    const text = readFileSync(file, 'utf8');
    // `Certificate as CertificateType` too: the local name maps to the type it imports
    const importedNames = new Map([...text.matchAll(/^import \{([^}]*)\} from '[./]+\/api\/resources\.ts'/gm)]
      .flatMap((m) => m[1].split(',').map((s) => s.trim().split(/\s+as\s+/)))
      .filter(([name]) => typeByIdentifier.has(name))
      .map(([name, local]) => [local ?? name, typeByIdentifier.get(name)!] as const));
    const imported = [...new Set(importedNames.values())];
    const calls = /(?:store\.(create|update|updateStatus|patch|delete|get|list)|informers?\.informerFor|\binformerFor)(?:<[^>(]*>)?\((\w+)/g;
    for (const m of text.matchAll(calls)) {
      const method = m[1] ?? 'informer';
      const line = text.slice(0, m.index).split('\n').length;
      // a variable (e.g. `type` for Issuer or ClusterIssuer): any type the file imports
      const known = importedNames.get(m[2]) ?? typeByIdentifier.get(m[2]);
      const types = known ? [known] : imported.filter((t) => method !== 'updateStatus' || t.statusSubresource);
      for (const type of types) {
        const verbs = method === 'informer' ? ['get', 'list', 'watch'] : method === 'updateStatus' ? ['update'] : [method];
        const resource = method === 'updateStatus' && type.statusSubresource ? `${type.plural}/status` : type.plural;
        for (const verb of verbs) out.push({ group: type.group, resource, verb, type, where: `${relative(repoRoot, file)}:${line}` });
      }
    }
  }
  return out;
}

function allows(rules: Rule[], a: { group: string; resource: string; verb: string }, name?: string) {
  return rules.some((r) => r.apiGroups.includes(a.group) && r.resources.includes(a.resource) && r.verbs.includes(a.verb) &&
    // kube-apiserver cannot limit create (or collection reads) by name
    (!r.resourceNames || (name !== undefined && !['create', 'list', 'watch'].includes(a.verb) && r.resourceNames.includes(name))));
}

function rulesBound(bindingKind: 'ClusterRoleBinding' | 'RoleBinding', roleKind: 'ClusterRole' | 'Role', ns?: string): Rule[] {
  return objects
    .filter((b) => b.kind === bindingKind && b.metadata.namespace === ns &&
      b.subjects.some((s: { kind: string; name: string; namespace: string }) => s.kind === 'ServiceAccount' && s.name === serviceAccount && s.namespace === namespace))
    .flatMap((b) => {
      assert.equal(b.roleRef.kind, roleKind);
      return objects.find((r) => r.kind === roleKind && r.metadata.name === b.roleRef.name && r.metadata.namespace === ns)!.rules as Rule[];
    });
}

test('the RBAC rules grant every read and write the controllers\' code makes, and the leader election Lease', () => {
  const accesses = accessesInCode();
  const seen = new Set(accesses.map((a) => `${a.verb} ${a.resource}`));
  // the scan itself works: these calls are known to exist
  for (const k of ['create certificaterequests', 'update certificates/status', 'create secrets', 'create events', 'list orders', 'update leases', 'update challenges/status', 'update issuers/status', 'update clusterissuers/status']) {
    assert.ok(seen.has(k), `the source scan finds "${k}"`);
  }
  const clusterRules = rulesBound('ClusterRoleBinding', 'ClusterRole');
  const electionRules = rulesBound('RoleBinding', 'Role', namespace);
  for (const a of accesses) {
    if (a.type === resources.LeaseType) {
      assert.ok(allows(electionRules, a, leaseName), `Role in ${namespace} allows ${a.verb} on Lease ${leaseName} (${a.where})`);
      continue;
    }
    assert.ok(allows(clusterRules, a), `ClusterRole allows ${a.verb} on ${a.group || 'core'}/${a.resource} (${a.where})`);
  }
  // owner references with blockOwnerDeletion need the owner's finalizers subresource
  for (const owner of ['certificates', 'certificaterequests', 'orders', 'challenges']) {
    const group = owner === 'orders' || owner === 'challenges' ? 'acme.cert-manager.io' : 'cert-manager.io';
    assert.ok(allows(clusterRules, { group, resource: `${owner}/finalizers`, verb: 'update' }), `${owner}/finalizers`);
  }
});

test('the ClusterRoles and the Role grant no write the code does not make', () => {
  const seen = new Set(accessesInCode().map((a) => `${a.group}|${a.resource}|${a.verb}`));
  const roles = [
    { role: only('ClusterRole', 'certsmith-controller'), checkReads: true },
    { role: only('Role', 'certsmith-leader-election'), checkReads: true },
    // the HTTP-01 solver's reads follow cert-manager's role; its writes must be ours
    { role: only('ClusterRole', 'certsmith-http01-solver'), checkReads: false },
  ];
  for (const { role, checkReads } of roles) {
    for (const r of role.rules as Rule[]) {
      for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) {
        if (res.endsWith('/finalizers') && v === 'update') continue;
        if (!checkReads && ['get', 'list', 'watch'].includes(v)) continue;
        assert.notEqual(res, '*', 'no wildcard resources');
        assert.notEqual(v, '*', 'no wildcard verbs');
        const used = seen.has(`${g}|${res}|${v}`) ||
          // patch is granted beside update as client-go does; it writes nothing update could not
          (v === 'patch' && seen.has(`${g}|${res}|update`));
        assert.ok(used, `${role.kind} ${role.metadata.name} grants ${v} on ${g || 'core'}/${res}, which the controllers never do`);
      }
    }
  }
});

test('kubectl kustomize renders deploy/ offline into every object, with the image set', async () => {
  const r = await run(process.env.KUBECTL ?? 'kubectl', ['kustomize', deployDir]);
  assert.equal(r.code, 0, r.stderr);
  const rendered = YAML.parseAllDocuments(r.stdout).map((d) => d.toJS() as Doc);
  assert.deepEqual(rendered.map((o) => `${o.kind}/${o.metadata.name}`).sort(), objects.map((o) => `${o.kind}/${o.metadata.name}`).sort());
  const deployments = rendered.filter((o) => o.kind === 'Deployment');
  assert.deepEqual(deployments.map((d) => d.metadata.name).sort(), ['certsmith', 'certsmith-webhook']);
  for (const dep of deployments) assert.match(dep.spec.template.spec.containers[0].image, /^ghcr\.io\/certsmith\/certsmith:\d+\.\d+\.\d+$/);
});

// ---- the admission webhook (deploy/webhook.yaml)

test('the webhook Deployment runs certsmith webhook with flags it lists, behind Service certsmith-webhook on 443', async () => {
  const help = await run(process.execPath, [certsmithBin, 'webhook', '--help']);
  assert.equal(help.code, 0, help.stderr);
  const accepted = new Set(help.stdout.match(/--[a-z0-9-]+/g));
  const dep = only('Deployment', 'certsmith-webhook');
  const pod = dep.spec.template;
  for (const [k, v] of Object.entries(dep.spec.selector.matchLabels)) assert.equal(pod.metadata.labels[k], v);
  const [c] = pod.spec.containers;
  assert.equal(c.image, only('Deployment', 'certsmith').spec.template.spec.containers[0].image, 'one image for controller and webhook');
  const args: string[] = c.args;
  assert.equal(args[0], 'webhook');
  const flags = new Map<string, string>();
  for (const a of args.slice(1)) {
    const [name, ...value] = a.split('=');
    assert.ok(accepted.has(name), `${name} is a flag of certsmith webhook`);
    flags.set(name, value.join('='));
  }
  assert.equal(flags.get('--namespace'), namespace);
  const port = c.ports.find((p: { name: string }) => p.name === 'https');
  assert.equal(flags.get('--listen'), `0.0.0.0:${port.containerPort}`);
  // the serving certificate must carry the name the API server dials: <service>.<namespace>.svc
  assert.ok(flags.get('--dns-names')!.split(',').includes(`certsmith-webhook.${namespace}.svc`));
  for (const [probe, path] of [['livenessProbe', '/healthz'], ['readinessProbe', '/readyz']] as const) {
    assert.equal(c[probe].httpGet.path, path);
    assert.equal(c[probe].httpGet.scheme, 'HTTPS');
  }
  assert.equal(pod.spec.serviceAccountName, 'certsmith-webhook');
  only('ServiceAccount', 'certsmith-webhook');
  assert.equal(pod.spec.securityContext.runAsNonRoot, true);
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);

  const svc = only('Service', 'certsmith-webhook');
  assert.equal(svc.spec.ports[0].port, 443);
  assert.ok([port.containerPort, 'https'].includes(svc.spec.ports[0].targetPort));
  for (const [k, v] of Object.entries(svc.spec.selector)) assert.equal(pod.metadata.labels[k], v, 'the Service selects the webhook pods');
});

test('the webhook configurations send CREATE/UPDATE of the cert-manager groups to /validate and /mutate, with the CA injected from the webhook\'s Secret', () => {
  const dep = only('Deployment', 'certsmith-webhook');
  const args: string[] = dep.spec.template.spec.containers[0].args;
  const caSecret = args.find((a) => a.startsWith('--ca-secret-name='))!.split('=')[1];
  for (const [kind, path] of [['ValidatingWebhookConfiguration', '/validate'], ['MutatingWebhookConfiguration', '/mutate']] as const) {
    const cfg = only(kind, 'certsmith-webhook');
    assert.equal(cfg.metadata.annotations?.['cert-manager.io/inject-ca-from-secret'], `${namespace}/${caSecret}`, `${kind}: the CA injector fills its caBundle`);
    assert.equal(cfg.webhooks.length, 1);
    const [w] = cfg.webhooks;
    assert.match(w.name, /^[a-z0-9-]+(\.[a-z0-9-]+){2,}$/, 'a fully qualified webhook name');
    assert.deepEqual(w.admissionReviewVersions, ['v1']);
    assert.equal(w.sideEffects, 'None');
    assert.equal(w.failurePolicy, 'Fail');
    assert.equal(w.timeoutSeconds, 10);
    assert.deepEqual(w.rules, [{ apiGroups: ['cert-manager.io', 'acme.cert-manager.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['*/*'] }]);
    // every kind of those groups is one the webhook handles
    const groups = new Set(w.rules[0].apiGroups);
    assert.deepEqual(resources.resourceTypes.filter((t) => groups.has(t.group)).map((t) => t.kind).sort(), ['Certificate', 'CertificateRequest', 'Challenge', 'ClusterIssuer', 'Issuer', 'Order']);
    assert.deepEqual(w.namespaceSelector, { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [namespace] }] });
    assert.deepEqual(w.clientConfig, { service: { name: 'certsmith-webhook', namespace, path, port: 443 } });
    assert.equal(w.clientConfig.caBundle, undefined, 'the caBundle comes from the CA injector');
  }
  // the controller's CA injector may update both
  const controllerRules = only('ClusterRole', 'certsmith-controller').rules as Rule[];
  for (const resource of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
    assert.ok(allows(controllerRules, { group: 'admissionregistration.k8s.io', resource, verb: 'update' }), resource);
  }
});

test('the webhook\'s ServiceAccount may get, create and update its CA Secret and nothing else', () => {
  const caSecret = only('Deployment', 'certsmith-webhook').spec.template.spec.containers[0].args.find((a: string) => a.startsWith('--ca-secret-name=')).split('=')[1];
  const bindings = objects.filter((b) => (b.kind === 'RoleBinding' || b.kind === 'ClusterRoleBinding') &&
    b.subjects.some((s: { kind: string; name: string }) => s.kind === 'ServiceAccount' && s.name === 'certsmith-webhook'));
  assert.deepEqual(bindings.map((b) => `${b.kind}/${b.metadata.namespace}/${b.metadata.name}`), [`RoleBinding/${namespace}/certsmith-webhook`]);
  const rules = only('Role', bindings[0].roleRef.name).rules as Rule[];
  const secrets = { group: '', resource: 'secrets' };
  // what src/webhook/serving-ca.ts does: get, then create or update
  for (const verb of ['get', 'create', 'update']) assert.ok(allows(rules, { ...secrets, verb }, caSecret), `${verb} secrets/${caSecret}`);
  assert.ok(!allows(rules, { ...secrets, verb: 'get' }, 'another-secret'), 'no other Secret may be read');
  for (const verb of ['list', 'watch', 'delete', 'patch']) assert.ok(!allows(rules, { ...secrets, verb }, caSecret), `no ${verb}`);
  const code = readFileSync(join(repoRoot, 'src/webhook/serving-ca.ts'), 'utf8');
  const calls = new Set([...code.matchAll(/store\.(\w+)(?:<[^>(]*>)?\(SecretType/g)].map((m) => m[1]));
  assert.deepEqual([...calls].sort(), ['create', 'get', 'update'], 'the source scan finds the webhook\'s Secret calls');
});
