// The embedded API server's own PKI: a private CA (trusted through the kubeconfig) and a
// serving certificate for loopback. Kept under the data dir so that kubeconfigs handed out
// earlier keep working after a restart.
import { mkdirSync, readFileSync, writeFileSync, existsSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { X509Certificate, webcrypto, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';

// @peculiar/x509 builds the certificates. It takes longer to load than the rest of the server
// (hundreds of modules), so only a start that must create or renew one loads it; stored ones
// are checked with Node's own X509Certificate.
let peculiar: Promise<typeof X509> | undefined;
function peculiarX509(): Promise<typeof X509> {
  return (peculiar ??= (async () => {
    await import('reflect-metadata'); // @peculiar/x509's dependency injection needs it loaded first
    const m = await import('@peculiar/x509');
    m.cryptoProvider.set(webcrypto as unknown as Crypto);
    return m;
  })());
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
const keyAlgorithm = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const signingAlgorithm = { name: 'ECDSA', hash: 'SHA-256' } as const;

/** Loads the CA and serving certificate from dataDir/pki, creating or renewing what is missing, stale or too narrow. */
export async function ensureServingCertificate(dataDir: string, opts: ServingCertificateOptions = {}): Promise<ServingCertificate> {
  const now = opts.now ?? new Date();
  const dir = join(dataDir, 'pki');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = {
    caCert: join(dir, 'ca.crt'), caKey: join(dir, 'ca.key'),
    cert: join(dir, 'serving.crt'), key: join(dir, 'serving.key'),
  };
  const hosts = [...new Set(['127.0.0.1', 'localhost', ...(opts.hosts ?? [])].filter((h) => h && h !== '0.0.0.0' && h !== '::'))];

  let ca = loadPair(files.caCert, files.caKey);
  let caRenewed = false;
  if (!ca || nearExpiry(ca.cert, now)) {
    ca = await createCA(now);
    writePair(files.caCert, files.caKey, ca.certPem, ca.keyPem);
    caRenewed = true;
  }

  let serving = loadPair(files.cert, files.key);
  if (!serving || caRenewed || nearExpiry(serving.cert, now) || !covers(serving.cert, hosts) || !issuedBy(serving.cert, ca.cert)) {
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
  writeFileSync(keyPath, keyPem, { mode: 0o600 });
  chmodSync(keyPath, 0o600); // mode only applies when the file is created
  writeFileSync(certPath, certPem, { mode: 0o644 });
}

/** Renew once two thirds of the lifetime have passed, as cert-manager does by default. */
function nearExpiry(cert: X509Certificate, now: Date): boolean {
  const notBefore = Date.parse(cert.validFrom);
  const notAfter = Date.parse(cert.validTo);
  const lifetime = notAfter - notBefore;
  return now.getTime() >= notAfter - lifetime / 3 || now.getTime() < notBefore;
}

/** Every host among the certificate's subjectAltNames (IP addresses as iPAddress entries, names as dNSName entries). */
function covers(cert: X509Certificate, hosts: string[]): boolean {
  if (!cert.subjectAltName) return false;
  return hosts.every((h) => (isIP(h) ? cert.checkIP(h) !== undefined : cert.checkHost(h, { subject: 'never', wildcards: false }) !== undefined));
}

function issuedBy(cert: X509Certificate, ca: X509Certificate): boolean {
  return cert.issuer === ca.subject;
}

async function pemOfKey(x: typeof X509, key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey);
  return x.PemConverter.encode(der, 'PRIVATE KEY') + '\n';
}

function serial(): string {
  const b = randomBytes(16);
  b[0] &= 0x7f; // a positive INTEGER
  return b.toString('hex');
}

async function createCA(now: Date): Promise<Pair> {
  const x509 = await peculiarX509();
  const keys = await webcrypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']) as unknown as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=certsmith-ca-${randomBytes(4).toString('hex')}`,
    notBefore: new Date(now.getTime() - 3600_000),
    notAfter: new Date(now.getTime() + caLifetime),
    signingAlgorithm,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return pairOf(cert.toString('pem'), await pemOfKey(x509, keys.privateKey));
}

async function createServing(ca: Pair, hosts: string[], now: Date): Promise<Pair> {
  const x509 = await peculiarX509();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.keyPem), keyAlgorithm, false, ['sign']);
  const keys = await webcrypto.subtle.generateKey(keyAlgorithm, true, ['sign', 'verify']) as unknown as CryptoKeyPair;
  const notAfter = new Date(Math.min(now.getTime() + servingLifetime, caCert.notAfter.getTime()));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=certsmith-apiserver',
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - 3600_000),
    notAfter,
    signingAlgorithm,
    publicKey: keys.publicKey,
    signingKey: caKey as unknown as CryptoKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hosts.map((h) => ({ type: isIP(h) ? 'ip' as const : 'dns' as const, value: h }))),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return pairOf(cert.toString('pem'), await pemOfKey(x509, keys.privateKey));
}
