// TLS for certsmith's own listeners (the embedded API server, the admission webhook): an ECDSA
// P-256 CA that signs itself, and serving certificates from it for a list of host names and
// addresses. Each caller picks names, usages and lifetimes; the making is here once.
import { isIP } from 'node:net';
import { generatePrivateKey } from './keys.ts';
import { createCSR } from './csr.ts';
import { signCertificate } from './sign.ts';

export interface PemKeyPair { certPem: string; keyPem: string }

/** Host names and IP addresses apart, as a certificate carries them (DNS and IP SANs). */
export function splitHosts(hosts: readonly string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const h of hosts) (isIP(h) ? ipAddresses : dnsNames).push(h);
  return { dnsNames, ipAddresses };
}

/** A self-signed CA; usages and maxPathLen only when given (else the signer's CA defaults). */
export async function createSelfSignedCA(o: { commonName: string; notBefore: Date; durationMs: number; maxPathLen?: number; usages?: string[] }): Promise<PemKeyPair> {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS8' });
  const limits = { ...(o.maxPathLen !== undefined ? { maxPathLen: o.maxPathLen } : {}), ...(o.usages ? { usages: o.usages } : {}) };
  const certPem = await signCertificate({
    csrPem: await createCSR({ commonName: o.commonName, isCA: true, ...limits }, keyPem),
    selfSignKeyPem: keyPem, isCA: true, ...limits, notBefore: o.notBefore, durationMs: o.durationMs,
  });
  return { certPem, keyPem };
}

/**
 * A serving certificate from `ca` for `hosts` (clipped to the CA's notAfter by the signer).
 * `oneOffIssuer` for a CA signed with once, so the signer does not keep its key in its cache.
 */
export async function issueServingPair(ca: PemKeyPair, o: {
  hosts: readonly string[]; commonName: string; usages: string[]; notBefore: Date; durationMs: number; oneOffIssuer?: boolean;
}): Promise<PemKeyPair> {
  const keyPem = await generatePrivateKey({ algorithm: 'ECDSA', size: 256, encoding: 'PKCS8' });
  const certPem = await signCertificate({
    csrPem: await createCSR({ commonName: o.commonName, usages: o.usages, ...splitHosts(o.hosts) }, keyPem),
    issuer: { certPem: ca.certPem, keyPem: ca.keyPem }, ...(o.oneOffIssuer ? { oneOffIssuer: true } : {}),
    usages: o.usages, notBefore: o.notBefore, durationMs: o.durationMs,
  });
  return { certPem, keyPem };
}
