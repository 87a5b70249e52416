// Shared pieces of the ACME lifecycle tests: a ClusterIssuer for a rig Pebble, Certificates for
// it, and waiting in real time for what the controllers do.
import assert from 'node:assert/strict';
import type { Lifecycle } from '../lifecycle/harness.ts';
import { ClusterIssuer } from '../../src/api/resources.ts';
import type { ResourceType } from '../../src/api/resources.ts';
import type { ClusterIssuer as ClusterIssuerObj } from '../../src/api/types.ts';
import type { Certificate as CertificateObj } from '../../src/api/types.ts';

export const b64 = (s: string) => Buffer.from(s).toString('base64');

export function acmeCertificate(name: string, dnsNames: string[], issuer = 'pebble', extra: Record<string, unknown> = {}): CertificateObj {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: 'default' },
    spec: {
      secretName: `${name}-tls`, dnsNames, privateKey: { algorithm: 'ECDSA', size: 256 },
      issuerRef: { name: issuer, kind: 'ClusterIssuer', group: 'cert-manager.io' }, ...extra,
    } as CertificateObj['spec'],
  };
}

/** Polls until check returns a value (not undefined/false); fails with the last state described. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, describe: () => Promise<unknown> = async () => '', timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(await describe(), null, 1)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function ready(o: { status?: { conditions?: { type: string; status: string }[] } } | undefined): boolean {
  return o?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
}

export async function waitForReadyCertificate(lc: Lifecycle, name: string, timeoutMs = 30_000): Promise<CertificateObj> {
  return waitFor(`Certificate ${name} Ready`, async () => {
    const c = await lc.certificate(name);
    return ready(c) ? c : undefined;
  }, async () => (await lc.certificate(name)).status, timeoutMs);
}

/** Sum of certmanager_http_acme_client_request_count over all label sets. */
export async function acmeRequestCount(lc: Lifecycle): Promise<number> {
  const metric = lc.running.metrics.registry.getSingleMetric('certmanager_http_acme_client_request_count');
  if (!metric) return 0;
  return (await metric.get()).values.reduce((n, v) => n + v.value, 0);
}

/** Waits for the (Cluster)Issuer to say Ready=False InvalidSolverConfig with a message matching re; returns the message. */
export function waitForInvalidSolverConfig(lc: Lifecycle, name: string, re: RegExp, kind: ResourceType = ClusterIssuer, ns?: string): Promise<string> {
  const issuer = () => lc.store.get<ClusterIssuerObj>(kind, ns, name);
  return waitFor(`${name} Ready=False ${re}`, async () => {
    const cond = (await issuer())?.status?.conditions?.find((c) => c.type === 'Ready');
    return cond?.status === 'False' && cond.reason === 'InvalidSolverConfig' && re.test(cond.message ?? '') ? cond.message! : undefined;
  }, async () => (await issuer())?.status);
}
