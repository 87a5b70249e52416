// certsmith inspect secret NAME [-n NS], as cmctl: what a kubernetes.io/tls Secret really holds
// (the leaf, its chain, whether the key and the CA fit) without ever showing the private key.
import crypto from 'node:crypto';
import { SecretType } from '../api/resources.ts';
import type { Secret } from '../api/meta.ts';
import { CERT_MANAGER_PREFIX } from '../api/annotations.ts';
import type { Store } from '../store/store.ts';
import { certificateMatchesKey, parseCertificate, splitPEM, type CertificateInfo } from '../pki/parse.ts';
import { encodeUsages, isKnownUsage } from '../pki/usages.ts';
import { formatDuration } from '../api/duration.ts';
import { CliError } from './cli-error.ts';
import { byCodeUnits } from '../api/ordering.ts';

function decoded(secret: Secret, key: string): string | undefined {
  const v = secret.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

function list(values: readonly string[] | undefined): string {
  return values?.length ? values.join(', ') : '<none>';
}

/** cert-manager's usage names fall into key usage bits and extended key usages; an unknown EKU stays an OID. */
function splitUsages(usages: readonly string[] | undefined): { keyUsages: string[]; extKeyUsages: string[] } {
  const keyUsages: string[] = [];
  const extKeyUsages: string[] = [];
  for (const u of usages ?? []) {
    if (isKnownUsage(u) && encodeUsages([u], false).extKeyUsageOids.length === 0) keyUsages.push(u);
    else extKeyUsages.push(u);
  }
  return { keyUsages, extKeyUsages };
}

function publicKeyAlgorithm(info: CertificateInfo): string {
  const k = info.keyType;
  if ('unsupported' in k) return k.unsupported;
  return k.size ? `${k.algorithm} ${k.size}` : k.algorithm;
}

function wholeSeconds(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

function validity(info: CertificateInfo, now: Date): string[] {
  const out = [`Not Before: ${info.notBefore.toISOString()}`, `Not After: ${info.notAfter.toISOString()}`];
  if (now < info.notBefore) out.push(`Status: not yet valid (starts in ${formatDuration(wholeSeconds(info.notBefore.getTime() - now.getTime()))})`);
  else if (now > info.notAfter) out.push(`Status: EXPIRED ${formatDuration(wholeSeconds(now.getTime() - info.notAfter.getTime()))} ago`);
  else out.push(`Status: valid for another ${formatDuration(wholeSeconds(info.notAfter.getTime() - now.getTime()))}`);
  return out;
}

/** node:crypto gives one RDN a line, and undefined for an empty name (a SAN-only leaf). */
function dn(name: string | undefined): string {
  return name ? name.replace(/\n/g, ', ') : '<empty>';
}

/** Each certificate's link to the next one in tls.crt: issuer name and signature both have to fit. */
function chainLines(chain: crypto.X509Certificate[]): string[] {
  const out = ['Chain (tls.crt):'];
  chain.forEach((c, i) => {
    const next = chain[i + 1];
    let link: string;
    if (next) link = c.checkIssued(next) && c.verify(next.publicKey) ? `signed by [${i + 1}]` : `NOT signed by [${i + 1}]`;
    // not checkIssued: OpenSSL wants 'cert sign' on the issuer, which a self-signed leaf lacks
    else if (c.subject === c.issuer && c.verify(c.publicKey)) link = 'self-signed';
    else link = 'issuer not in tls.crt';
    out.push(`  [${i}] ${dn(c.subject)} → ${dn(c.issuer)} (${link})`);
  });
  return out;
}

/** Whether some certificate of ca.crt issued the top of the chain (or is the top itself). */
function caLines(chain: crypto.X509Certificate[], caPem: string | undefined): string[] {
  if (caPem === undefined) return ['CA (ca.crt): not present'];
  let cas: crypto.X509Certificate[];
  try {
    cas = splitPEM(caPem).filter((p) => p.includes('CERTIFICATE')).map((p) => new crypto.X509Certificate(p));
  } catch (e) {
    return [`CA (ca.crt): does not parse: ${(e as Error).message}`];
  }
  if (!cas.length) return ['CA (ca.crt): holds no certificate'];
  const top = chain[chain.length - 1];
  const issuer = cas.find((ca) => top.fingerprint256 === ca.fingerprint256 || (top.checkIssued(ca) && top.verify(ca.publicKey)));
  const subjects = cas.map((ca) => dn(ca.subject)).join('; ');
  return issuer
    ? [`CA (ca.crt): ${subjects}`, `  verifies the chain: yes (by ${dn(issuer.subject)})`]
    : [`CA (ca.crt): ${subjects}`, '  verifies the chain: NO'];
}

export function inspectSecret(secret: Secret, now: Date): string {
  const ref = `${secret.metadata.namespace ?? 'default'}/${secret.metadata.name}`;
  const crtPem = decoded(secret, 'tls.crt');
  if (!crtPem?.trim()) throw new CliError(`secret ${ref} has no tls.crt: it is not a TLS Secret or no certificate has been issued into it yet`);
  const pems = splitPEM(crtPem).filter((p) => p.startsWith('-----BEGIN CERTIFICATE-----'));
  if (!pems.length) throw new CliError(`secret ${ref}: tls.crt holds no PEM certificate`);
  let info: CertificateInfo;
  let chain: crypto.X509Certificate[];
  try {
    info = parseCertificate(pems[0]);
    chain = pems.map((p) => new crypto.X509Certificate(p));
  } catch (e) {
    throw new CliError(`secret ${ref}: tls.crt does not parse: ${(e as Error).message}`);
  }
  const t = info.template;
  const { keyUsages, extKeyUsages } = splitUsages(t.usages);
  const out: string[] = [
    `Secret: ${ref}`,
    `Type: ${secret.type ?? '<none>'}`,
    '',
    'Valid for:',
    ...validity(info, now).map((l) => `  ${l}`),
    '',
    'Certificate:',
    `  Subject: ${info.subject || '<empty>'}`,
    `  Issuer: ${info.issuer || '<empty>'}`,
    `  Serial Number: ${info.serialNumber}`,
    `  DNS Names: ${list(t.dnsNames)}`,
    `  IP Addresses: ${list(t.ipAddresses)}`,
    `  URIs: ${list(t.uris)}`,
    `  Email Addresses: ${list(t.emailAddresses)}`,
    `  Key Usages: ${list(keyUsages)}`,
    `  Extended Key Usages: ${list(extKeyUsages)}`,
    `  Is CA: ${info.isCA}`,
    `  Signature Algorithm: ${info.signatureAlgorithm}`,
    `  Public Key Algorithm: ${publicKeyAlgorithm(info)}`,
    `  Fingerprint (SHA-256): ${chain[0].fingerprint256}`,
    '',
    ...chainLines(chain),
    '',
  ];
  const keyPem = decoded(secret, 'tls.key');
  // only ever the verdict: the key itself stays out of the output
  if (keyPem === undefined || !keyPem.trim()) out.push('Private key (tls.key): not present');
  else out.push(`Private key (tls.key): ${certificateMatchesKey(pems[0], keyPem) ? 'matches the certificate' : 'does NOT match the certificate'}`);
  out.push(...caLines(chain, decoded(secret, 'ca.crt')));
  const annotations = Object.entries(secret.metadata.annotations ?? {}).filter(([k]) => k.startsWith(CERT_MANAGER_PREFIX)).sort(([a], [b]) => byCodeUnits(a, b));
  out.push('', 'Annotations:', ...(annotations.length ? annotations.map(([k, v]) => `  ${k}: ${v}`) : ['  <none>']));
  return out.join('\n') + '\n';
}

export async function inspectSecretNamed(store: Store, namespace: string, name: string, now: Date): Promise<string> {
  const secret = await store.get<Secret>(SecretType, namespace, name);
  if (!secret) throw new CliError(`secret ${namespace}/${name} not found`);
  return inspectSecret(secret, now);
}
