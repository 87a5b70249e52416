// Builders for the decision-table tests: Certificates, Secrets holding real keys and
// certificates (made by src/pki, so the policies parse what production parses), requests,
// issuers and a fixed clock. Keys, CSRs and certificates are cached by their inputs: a table
// of forty rows costs a handful of key generations, and the suite stays fast.
import { generatePrivateKey, type KeySpec } from '../../pki/keys.ts';
import { createCSR } from '../../pki/csr.ts';
import { signCertificate } from '../../pki/sign.ts';
import type { CertificateTemplate } from '../../pki/template.ts';
import { FakeClock } from '../../runtime/clock.ts';
import type { Condition } from '../../api/meta.ts';
import { type Certificate as CertificateObj, type CertificateRequest as CertificateRequestObj } from '../../api/types.ts';
import { type Secret } from '../../api/meta.ts';
import type { IssuerView as IssuerLike } from '../requests/signing.ts';
import { CertificateAnnotation } from '../../api/annotations.ts';

/** The instant every table is evaluated at, unless a row says otherwise. */
export const NOW = new Date('2026-06-01T00:00:00Z');
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** A clock fixed at NOW (or `at`): it moves only when a test advances it. */
export function fixedClock(at: Date = NOW): FakeClock {
  return new FakeClock(at);
}

export const b64 = (s: string): string => Buffer.from(s).toString('base64');

export function cond(type: string, status: Condition['status'], reason: string, message = '', extra: Partial<Condition> = {}): Condition {
  return { type, status, reason, message, ...extra };
}

function cached<T>(fn: (k: string) => Promise<T>): (k: string) => Promise<T> {
  const memo = new Map<string, Promise<T>>();
  return (k) => {
    let p = memo.get(k);
    if (!p) memo.set(k, (p = fn(k)));
    return p;
  };
}

const keys = cached((k) => {
  const { spec } = JSON.parse(k) as { label: string; spec: KeySpec };
  return generatePrivateKey(spec);
});

/**
 * A private key (PEM) named by `label`: the same label and spec give the same key within a run,
 * different labels give different keys (a "foreign" key for mismatch rows).
 */
export function key(label = 'main', spec: KeySpec = { algorithm: 'ECDSA', size: 256, encoding: 'PKCS8' }): Promise<string> {
  return keys(JSON.stringify({ label, spec }));
}

const csrs = cached((k) => {
  const { template, keyPem } = JSON.parse(k) as { template: CertificateTemplate; keyPem: string };
  return createCSR(template, keyPem);
});

export function csr(template: CertificateTemplate, keyPem: string): Promise<string> {
  return csrs(JSON.stringify({ template, keyPem }));
}

export interface CertOptions {
  template?: CertificateTemplate;
  keyPem: string;
  notBefore?: Date;
  durationMs?: number;
  isCA?: boolean;
  usages?: string[];
  /** signed by this CA; self-signed with keyPem otherwise */
  issuer?: { certPem: string; keyPem: string };
}

const certs = cached(async (k) => {
  const o = JSON.parse(k) as CertOptions & { notBefore: string };
  return signCertificate({
    csrPem: await csr(o.template ?? {}, o.keyPem),
    notBefore: new Date(o.notBefore),
    durationMs: o.durationMs ?? 90 * DAY,
    ...(o.isCA ? { isCA: true } : {}),
    ...(o.usages ? { usages: o.usages } : {}),
    ...(o.issuer ? { issuer: o.issuer } : { selfSignKeyPem: o.keyPem }),
  });
});

/** A certificate (PEM) for keyPem; valid from an hour before NOW for 90 days unless told. */
export function cert(o: CertOptions): Promise<string> {
  return certs(JSON.stringify({ template: { dnsNames: ['a.example.test'] }, durationMs: 90 * DAY, ...o, notBefore: (o.notBefore ?? new Date(NOW.getTime() - HOUR)).toISOString() }));
}

/** A self-signed CA certificate and its key, for CA issuer rows. */
export async function caKeyPair(label = 'ca', isCA = true): Promise<{ certPem: string; keyPem: string }> {
  const keyPem = await key(label);
  return { keyPem, certPem: await cert({ keyPem, template: { commonName: `${label} root` }, isCA }) };
}

export function certificate(o: {
  name?: string;
  namespace?: string;
  spec?: Partial<CertificateObj['spec']>;
  status?: CertificateObj['status'];
  generation?: number;
  uid?: string;
  deletionTimestamp?: string;
} = {}): CertificateObj {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
    metadata: {
      name: o.name ?? 'a', namespace: o.namespace ?? 'default', uid: o.uid ?? 'crt-uid', generation: o.generation ?? 1,
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: { secretName: 'a-tls', dnsNames: ['a.example.test'], issuerRef: { name: 'ca' }, privateKey: { algorithm: 'ECDSA' }, ...o.spec },
    ...(o.status ? { status: o.status } : {}),
  };
}

/** The annotations the issuing controller writes on a Secret for Certificate `name` and issuer `issuer`. */
export function issuedAnnotations(name = 'a', issuer: { name: string; kind?: string; group?: string } = { name: 'ca' }): Record<string, string> {
  return {
    [CertificateAnnotation.certificateName]: name,
    [CertificateAnnotation.issuerName]: issuer.name,
    [CertificateAnnotation.issuerKind]: issuer.kind ?? 'Issuer',
    [CertificateAnnotation.issuerGroup]: issuer.group ?? 'cert-manager.io',
  };
}

/** A Secret holding keyPem, certPem and caPem (PEM, stored base64 as Kubernetes does); undefined entries are left out. */
export function secretFor(o: { keyPem?: string; certPem?: string; caPem?: string; name?: string; annotations?: Record<string, string>; data?: Record<string, string> | null }): Secret {
  const data = o.data === null ? undefined : o.data ?? {
    ...(o.keyPem !== undefined ? { 'tls.key': b64(o.keyPem) } : {}),
    ...(o.certPem !== undefined ? { 'tls.crt': b64(o.certPem) } : {}),
    ...(o.caPem !== undefined ? { 'ca.crt': b64(o.caPem) } : {}),
  };
  return {
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
    metadata: { name: o.name ?? 'a-tls', namespace: 'default', ...(o.annotations ? { annotations: o.annotations } : {}) },
    ...(data ? { data } : {}),
  };
}

export function certificateRequest(o: {
  name?: string;
  csrPem: string;
  issuerRef?: CertificateRequestObj['spec']['issuerRef'];
  annotations?: Record<string, string>;
  status?: CertificateRequestObj['status'];
  spec?: Partial<CertificateRequestObj['spec']>;
  uid?: string;
  creationTimestamp?: string;
}): CertificateRequestObj {
  return {
    apiVersion: 'cert-manager.io/v1', kind: 'CertificateRequest',
    metadata: {
      name: o.name ?? 'a-1', namespace: 'default', uid: o.uid ?? 'cr-uid',
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.creationTimestamp ? { creationTimestamp: o.creationTimestamp } : {}),
    },
    spec: { request: b64(o.csrPem), issuerRef: o.issuerRef ?? { name: 'ca' }, ...o.spec },
    ...(o.status ? { status: o.status } : {}),
  };
}

export function issuer(o: { name?: string; kind?: 'Issuer' | 'ClusterIssuer'; spec?: IssuerLike['spec']; conditions?: Condition[]; generation?: number } = {}): IssuerLike {
  return {
    kind: o.kind ?? 'Issuer',
    metadata: { name: o.name ?? 'ca', namespace: o.kind === 'ClusterIssuer' ? undefined : 'default', generation: o.generation ?? 1 },
    spec: o.spec ?? { ca: { secretName: 'ca-keypair' } },
    ...(o.conditions ? { status: { conditions: o.conditions } } : {}),
  };
}
