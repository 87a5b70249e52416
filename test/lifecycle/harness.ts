// Runs every controller on an in-memory SQLite store with a fake clock, so tests can make
// hours pass instantly and look at what a user would see. The stack is the one `certsmith
// server` runs (src/composition): admission (defaulting and validation) in front of the store.
import { FakeClock, type Clock } from '../../src/runtime/clock.ts';
import { openSqliteStore } from '../../src/store/sqlite/index.ts';
import { compose, type ControllerOptions, type RunningControllers } from '../../src/composition/index.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { Certificate, CertificateRequest, ClusterIssuer, Issuer, SecretType, resourceTypeFor, type ResourceType } from '../../src/api/resources.ts';
import type { KubeObject, Secret } from '../../src/api/meta.ts';
import type { Store, WatchEvent } from '../../src/store/store.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../../src/api/types.ts';
import { certificateMatchesKey } from '../../src/pki/parse.ts';

export interface Lifecycle {
  clock: FakeClock;
  /** what every writer uses, as the API server's clients do: admission in front of the backend */
  store: Store;
  /** the SQLite store itself, without admission: for tests that stand for a backend without a webhook */
  backend: Store;
  running: RunningControllers;
  settle(): Promise<void>;
  advance(ms: number): Promise<void>;
  apply<T extends KubeObject>(obj: T): Promise<T>;
  certificate(name: string, namespace?: string): Promise<CertificateObj>;
  secret(name: string, namespace?: string): Promise<Secret | undefined>;
  requests(namespace?: string): Promise<CertificateRequestObj[]>;
  /** every Secret version seen whose key does not match its certificate */
  mismatchedSecretVersions: string[];
  stop(): Promise<void>;
}

/**
 * clock: ACME talks to a real Pebble in real time, so those tests pass realClock; the default
 * FakeClock lets the other tests make hours pass instantly (advance() needs it).
 */
export async function startLifecycle(o: {
  start?: string; options?: ControllerOptions; clock?: Clock;
  /** what the controllers see of the store, e.g. a backend that stores what the embedded one refuses */
  storeView?: (store: Store) => Store;
  /** false: no admission, as on a cluster with only the CRDs installed (no webhook); on by default */
  admission?: boolean;
  /** a state.db of its own (kept after stop(), as a data dir is), instead of one in memory */
  storePath?: string;
} = {}): Promise<Lifecycle> {
  const clock = (o.clock ?? new FakeClock(o.start ?? '2026-01-01T00:00:00Z')) as FakeClock;
  const stack = compose({ store: openSqliteStore({ path: o.storePath ?? ':memory:', clock }), clock, logger: silentLogger, admission: o.admission });
  const store = stack.store;
  const mismatchedSecretVersions: string[] = [];
  // Watches every Secret version: key and certificate must never disagree in any of them.
  const watch = stack.backend.watch<Secret>(SecretType, { resourceVersion: '0' }, (e: WatchEvent<Secret>) => {
    const d = e.object.data;
    if (e.type === 'DELETED' || !d?.['tls.crt'] || !d['tls.key']) return;
    const ok = certificateMatchesKey(Buffer.from(d['tls.crt'], 'base64').toString(), Buffer.from(d['tls.key'], 'base64').toString());
    if (!ok) mismatchedSecretVersions.push(`${e.object.metadata.namespace}/${e.object.metadata.name}@${e.object.metadata.resourceVersion}`);
  }, () => {});
  const running = await stack.startControllers({ view: o.storeView, options: { metricsListen: '', healthListen: '', ...o.options } });
  const lc: Lifecycle = {
    clock, store, backend: stack.backend, running, mismatchedSecretVersions,
    // reads lc.running each time: a test may restart the controllers
    settle: () => lc.running.manager.whenIdle({ timeoutMs: 60_000 }),
    async advance(ms) {
      // Step timer by timer so each controller sees the time it asked to wake at.
      const end = clock.now().getTime() + ms;
      for (;;) {
        const next = clock.nextTimerAt();
        if (!next || next.getTime() > end) break;
        clock.set(next);
        await lc.settle();
      }
      clock.set(end);
      await lc.settle();
    },
    async apply(obj) {
      const type = typeOf(obj);
      const existing = await store.get(type, obj.metadata.namespace, obj.metadata.name!);
      const out = existing
        ? await store.update(type, { ...obj, metadata: { ...existing.metadata, ...obj.metadata, resourceVersion: existing.metadata.resourceVersion } })
        : await store.create(type, obj);
      return out as typeof obj;
    },
    async certificate(name, namespace = 'default') {
      const c = await store.get<CertificateObj>(Certificate, namespace, name);
      if (!c) throw new Error(`certificate ${namespace}/${name} not found`);
      return c;
    },
    secret: (name, namespace = 'default') => store.get<Secret>(SecretType, namespace, name),
    async requests(namespace = 'default') {
      return (await store.list<CertificateRequestObj>(CertificateRequest, { namespace })).items;
    },
    async stop() {
      watch.stop();
      // a test may have restarted the controllers: stop the ones running now, then the stack
      await lc.running.stop();
      await stack.stop();
    },
  };
  return lc;
}

function typeOf(obj: KubeObject): ResourceType {
  const t = resourceTypeFor(obj.apiVersion, obj.kind);
  if (!t) throw new Error(`unknown kind ${obj.apiVersion} ${obj.kind}`);
  return t;
}

export const selfSignedClusterIssuer = {
  apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'selfsigned' }, spec: { selfSigned: {} },
};

export function caIssuer(name = 'ca', secretName = 'ca-keypair', namespace = 'default') {
  return { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name, namespace }, spec: { ca: { secretName } } };
}

export function certificate(name: string, spec: Record<string, unknown>, namespace = 'default'): CertificateObj {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace },
    spec: { secretName: `${name}-tls`, issuerRef: { name: 'ca', kind: 'Issuer' }, ...spec } as CertificateObj['spec'],
  };
}

/** A CA Issuer backed by a self-signed CA Certificate, all Ready. */
export async function withCA(lc: Lifecycle): Promise<void> {
  await lc.apply(selfSignedClusterIssuer);
  await lc.apply(certificate('root', {
    secretName: 'ca-keypair', isCA: true, commonName: 'test root', privateKey: { algorithm: 'ECDSA', size: 256 },
    issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer', group: 'cert-manager.io' },
  }));
  await lc.apply(caIssuer());
  await lc.settle();
}

export function condition(obj: { status?: { conditions?: { type: string; status: string; reason?: string }[] } }, type: string) {
  return obj.status?.conditions?.find((c) => c.type === type);
}

export { Issuer, ClusterIssuer };
