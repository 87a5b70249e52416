// The embedded API server's own PKI: a private CA (trusted through the kubeconfig) and a
// serving certificate for loopback. Kept under the data dir so that kubeconfigs handed out
// earlier keep working after a restart.
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { replaceFile } from './private-files.ts';
import { privateFolder } from './data-dir.ts';
import { join } from 'node:path';
import { X509Certificate, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { createSelfSignedCA, issueServingPair } from '../pki/serving.ts';
import type { Clock } from '../runtime/clock.ts';

// The certificates are built by certsmith's own signer (pki/sign.ts, what the CA and SelfSigned
// issuers use), which the server loads anyway, and checked with Node's X509Certificate:
// @peculiar/x509, which built them before, took longer to load than the rest of the server.

/**
 * What a TLS listener of certsmith offers: TLS 1.2 and 1.3, and to TLS 1.2 clients only the
 * ECDHE AEAD suites Go's crypto/tls (kube-apiserver, cert-manager's webhook) offers, not Node's
 * whole "HIGH" list (CCM8's 8-byte tag, ARIA, CBC with SHA-1). TLS 1.3's suites are all AEAD.
 */
export const SERVER_TLS_OPTIONS = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: true,
} as const;

/** Refuses client-initiated renegotiation on every connection, as Go's TLS server does. */
export function refuseRenegotiation(server: import('node:tls').Server): void {
  server.on('secureConnection', (socket: import('node:tls').TLSSocket) => socket.disableRenegotiation());
}

export interface ServingCertificate {
  caPem: string;
  certPem: string;
  keyPem: string;
}

export interface ServingCertificateOptions {
  /** extra names the serving certificate must cover (the listen host) */
  hosts?: string[];
  now?: Date;
}

const day = 24 * 3600 * 1000;
const caLifetime = 10 * 365 * day;
const servingLifetime = 365 * day;

/** Loads the CA and serving certificate from dataDir/pki, creating or renewing what is missing, stale or too narrow. */
export async function ensureServingCertificate(dataDir: string, opts: ServingCertificateOptions = {}): Promise<ServingCertificate> {
  const now = opts.now ?? new Date();
  const dir = join(dataDir, 'pki');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  privateFolder(dir);
  const files = {
    caCert: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'),
    cert: join(dir, 'serving.crt'), key: join(dir, 'serving.key'),
  };
  const hosts = [...new Set(['127.0.0.1', 'localhost', ...(opts.hosts ?? [])].filter((h) => h && h !== '0.0.0.0' && h !== '::'))];

  let ca = loadPair(files.caCert, files.caKey);
  let caRenewed = false;
  // not for a clock that is behind the CA (a box without a real-time clock booting before NTP
  // steps it, a step back): kubeconfigs handed out trust this CA, and a new one would break them
  // for good once the clock is right; the serving certificate, below, is re-issued valid now
  if (!ca || dueForRenewal(ca.cert, now)) {
    ca = await createCA(now);
    writePair(files.caCert, files.caKey, ca.certPem, ca.keyPem);
    caRenewed = true;
  }

  let serving = loadPair(files.cert, files.key);
  if (!serving || caRenewed || dueForRenewal(serving.cert, now) || notYetValid(serving.cert, now) || !covers(serving.cert, hosts) || !issuedBy(serving.cert, ca.cert)) {
    serving = await createServing(ca, hosts, now);
    writePair(files.cert, files.key, serving.certPem, serving.keyPem);
  }
  return { caPem: ca.certPem, certPem: serving.certPem, keyPem: serving.keyPem };
}

interface Pair { cert: X509Certificate; certPem: string; keyPem: string }

function pairOf(certPem: string, keyPem: string): Pair {
  return { cert: new X509Certificate(certPem), certPem, keyPem };
}

function loadPair(certPath: string, keyPath: string): Pair | undefined {
  if (!existsSync(certPath) || !existsSync(keyPath)) return undefined;
  try {
    return pairOf(readFileSync(certPath, 'utf8'), readFileSync(keyPath, 'utf8'));
  } catch {
    return undefined; // unreadable material is replaced rather than fatal
  }
}

function writePair(certPath: string, keyPath: string, certPem: string, keyPem: string) {
  replaceFile(keyPath, keyPem, 0o600);
  replaceFile(certPath, certPem, 0o644);
}

/** Renew once two thirds of the lifetime have passed, as cert-manager does by default. */
function dueForRenewal(cert: X509Certificate, now: Date): boolean {
  const notBefore = Date.parse(cert.validFrom);
  const notAfter = Date.parse(cert.validTo);
  return now.getTime() >= notAfter - (notAfter - notBefore) / 3;
}

function notYetValid(cert: X509Certificate, now: Date): boolean {
  return now.getTime() < Date.parse(cert.validFrom);
}

/** How often a running server looks at its serving certificate. */
export const SERVING_CHECK_MS = 10 * 60_000;

/**
 * Keeps a running server's certificate valid: it was looked at only at start, so a server up for
 * a year served an expired one, and after the wall clock stepped back, one not yet valid, and
 * kubectl failed until a restart. Every SERVING_CHECK_MS the files are checked as at start and
 * what changed is handed to apply (the listener's new context; a new CA, which only a CA near
 * its own expiry brings, for the kubeconfig too). Returns the function that stops it.
 */
export function keepServingCertificateFresh(o: {
  dataDir: string;
  hosts?: string[];
  clock: Clock;
  current: ServingCertificate;
  apply: (tls: ServingCertificate) => void;
  onError?: (e: Error) => void;
}): () => void {
  let current = o.current;
  let cancel: (() => void) | undefined;
  let stopped = false;
  const arm = () => {
    cancel = o.clock.setTimer(SERVING_CHECK_MS, () => {
      cancel = undefined;
      ensureServingCertificate(o.dataDir, { hosts: o.hosts, now: o.clock.now() }).then((next) => {
        if (stopped || next.certPem === current.certPem) return;
        current = next;
        o.apply(next);
      }, (e: Error) => o.onError?.(e)).finally(() => {
        if (!stopped) arm();
      });
    });
  };
  arm();
  return () => {
    stopped = true;
    cancel?.();
  };
}

/** Every host among the certificate's subjectAltNames (IP addresses as iPAddress entries, names as dNSName entries). */
function covers(cert: X509Certificate, hosts: string[]): boolean {
  if (!cert.subjectAltName) return false;
  return hosts.every((h) => (isIP(h) ? cert.checkIP(h) !== undefined : cert.checkHost(h, { subject: 'never', wildcards: false }) !== undefined));
}

function issuedBy(cert: X509Certificate, ca: X509Certificate): boolean {
  return cert.issuer === ca.subject;
}

async function createCA(now: Date): Promise<Pair> {
  const { certPem, keyPem } = await createSelfSignedCA({
    commonName: `certsmith-ca-${randomBytes(4).toString('hex')}`, maxPathLen: 0, usages: ['cert sign', 'crl sign'],
    notBefore: new Date(now.getTime() - 3600_000), durationMs: caLifetime + 3600_000,
  });
  return pairOf(certPem, keyPem);
}

async function createServing(ca: Pair, hosts: string[], now: Date): Promise<Pair> {
  const { certPem, keyPem } = await issueServingPair(ca, {
    hosts, commonName: 'certsmith-apiserver', usages: ['digital signature', 'server auth'], oneOffIssuer: true,
    notBefore: new Date(now.getTime() - 3600_000), durationMs: servingLifetime + 3600_000,
  });
  return pairOf(certPem, keyPem);
}
