// Which certificate a CertID names, for a test's renewal-info answers (RFC 9773 §4.1): the
// certificates Pebble handed out through the fault proxy, each with its first DNS name and
// the how-manyth certificate for that name it is (0-based).
import { parseCertMemo } from '../../src/shared/parse-memo.ts';
import { certIdOf } from '../../src/acme/ari.ts';
import type { FaultProxy } from '../rig/fault-proxy.ts';

export function issuedByCertId(proxy: FaultProxy): Map<string, { dnsName: string; n: number }> {
  const out = new Map<string, { dnsName: string; n: number }>();
  const count = new Map<string, number>();
  for (const x of proxy.exchanges) {
    if (!/\/certZ\//.test(x.path) || x.status !== 200 || !x.body.includes('BEGIN CERTIFICATE')) continue;
    const leaf = parseCertMemo(x.body).value;
    if (!leaf) continue;
    const id = certIdOf(leaf);
    const dnsName = leaf.template.dnsNames?.[0];
    if (!id || !dnsName || out.has(id)) continue;
    const n = count.get(dnsName) ?? 0;
    count.set(dnsName, n + 1);
    out.set(id, { dnsName, n });
  }
  return out;
}
