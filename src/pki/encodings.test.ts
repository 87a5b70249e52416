import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCSR } from './csr.ts';
import {
  combinedPEM, createJKS, createPKCS12, createTruststoreJKS, createTruststorePKCS12, DEFAULT_PKCS12_PROFILE, pemToDER,
} from './encodings.ts';
import { generatePrivateKey, type KeySpec } from './keys.ts';
import { parseCertificate } from './parse.ts';
import { signCertificate } from './sign.ts';

const DAY = 86400_000;
const PASSWORD = 'changeit-Ω';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'certsmith-keystores-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
const write = (name: string, data: string | Buffer) => { const p = path.join(tmp, name); fs.writeFileSync(p, data, { mode: 0o600 }); return p; };

async function chain(spec: KeySpec) {
  const rootKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const root = await signCertificate({ csrPem: await createCSR({ commonName: 'Root CA', isCA: true }, rootKey), notBefore: new Date(), durationMs: 365 * DAY, selfSignKeyPem: rootKey, isCA: true });
  const interKey = await generatePrivateKey({ algorithm: 'ECDSA' });
  const inter = await signCertificate({ csrPem: await createCSR({ commonName: 'Intermediate CA', isCA: true }, interKey), notBefore: new Date(), durationMs: 300 * DAY, issuer: { certPem: root, keyPem: rootKey }, isCA: true });
  const keyPem = await generatePrivateKey(spec);
  const leaf = await signCertificate({ csrPem: await createCSR({ commonName: 'leaf.example.com', dnsNames: ['leaf.example.com'] }, keyPem), notBefore: new Date(), durationMs: 90 * DAY, issuer: { certPem: inter, keyPem: interKey } });
  return { keyPem, chainPem: leaf + inter, caPem: root, leaf };
}

test('combinedPEM and pemToDER follow cert-manager\'s checks', async () => {
  const c = await chain({ algorithm: 'ECDSA' });
  assert.equal(combinedPEM(c.keyPem, c.chainPem), `${c.keyPem}\n${c.chainPem}`);
  assert.deepEqual(pemToDER(c.chainPem), parseCertificate(c.leaf).der);
  assert.deepEqual(pemToDER(c.keyPem), execFileSync('openssl', ['ec', '-outform', 'DER'], { input: c.keyPem, stdio: ['pipe', 'pipe', 'ignore'] }));
});

const profiles = [
  { profile: undefined, legacyFlag: [] as string[], spec: { algorithm: 'RSA' } as KeySpec },
  { profile: 'LegacyDES' as const, legacyFlag: [], spec: { algorithm: 'ECDSA', size: 384 } as KeySpec },
  { profile: 'Modern2023' as const, legacyFlag: [], spec: { algorithm: 'Ed25519' } as KeySpec },
  { profile: 'LegacyRC2' as const, legacyFlag: ['-legacy'], spec: { algorithm: 'ECDSA' } as KeySpec },
];

for (const p of profiles) {
  test(`PKCS#12 ${p.profile ?? `default (${DEFAULT_PKCS12_PROFILE})`} opens with openssl pkcs12 ${p.legacyFlag.join(' ')}`, async () => {
    const c = await chain(p.spec);
    const file = write(`keystore-${p.profile ?? 'default'}.p12`, await createPKCS12({ ...c, password: PASSWORD, profile: p.profile }));
    const args = ['pkcs12', '-in', file, '-passin', `pass:${PASSWORD}`, ...p.legacyFlag];
    execFileSync('openssl', [...args, '-info', '-noout'], { stdio: 'pipe' });
    const certs = execFileSync('openssl', [...args, '-nokeys'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert.equal(certs.match(/BEGIN CERTIFICATE/g)?.length, 3, 'leaf, intermediate and root');
    const key = execFileSync('openssl', [...args, '-nocerts', '-nodes'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const pubFromP12 = execFileSync('openssl', ['pkey', '-pubout'], { input: key });
    const pubFromKey = execFileSync('openssl', ['pkey', '-pubout'], { input: c.keyPem });
    assert.deepEqual(pubFromP12, pubFromKey);
    assert.throws(() => execFileSync('openssl', ['pkcs12', '-in', file, '-passin', 'pass:wrong', ...p.legacyFlag, '-info', '-noout'], { stdio: 'pipe' }));
  });
}

test('PKCS#12 truststore holds the CA certificates', async () => {
  const c = await chain({ algorithm: 'ECDSA' });
  const file = write('truststore.p12', await createTruststorePKCS12({ caPem: c.caPem, password: PASSWORD }));
  const out = execFileSync('openssl', ['pkcs12', '-in', file, '-passin', `pass:${PASSWORD}`, '-nokeys'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.match(out, /subject=CN = Root CA/);
  assert.match(out, /2\.16\.840\.1\.113894\.746875\.1\.1|Trusted key usage/i);
  // go-pkcs12's EncodeTrustStore names each entry by its subject (Java shows it as the alias)
  assert.match(out, /friendlyName: CN=Root CA\n/);
});

// Java's PKCS#12 writer (used by -importkeystore below) refuses non-ASCII passwords.
const JKS_PASSWORD = 'changeit-jks';
const keytool = (...args: string[]) => execFileSync('/usr/bin/keytool', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('JKS keystore: keytool lists the PrivateKeyEntry with its chain and the CA entry', async () => {
  const c = await chain({ algorithm: 'RSA' });
  const file = write('keystore.jks', createJKS({ ...c, password: JKS_PASSWORD }));
  const out = keytool('-list', '-v', '-keystore', file, '-storepass', JKS_PASSWORD, '-storetype', 'JKS');
  assert.match(out, /Your keystore contains 2 entries/);
  assert.match(out, /Alias name: certificate\s+Creation date: .*\s+Entry type: PrivateKeyEntry\s+Certificate chain length: 2/);
  assert.match(out, /Owner: CN=leaf\.example\.com/);
  assert.match(out, /Alias name: ca\s+Creation date: .*\s+Entry type: trustedCertEntry\s+Owner: CN=Root CA/);
  // The key itself must decrypt with the password: export it through a PKCS#12 conversion.
  const p12 = path.join(tmp, 'converted.p12');
  keytool('-importkeystore', '-srckeystore', file, '-srcstoretype', 'JKS', '-srcstorepass', JKS_PASSWORD, '-srcalias', 'certificate',
    '-destkeystore', p12, '-deststoretype', 'PKCS12', '-deststorepass', JKS_PASSWORD, '-noprompt');
  const key = execFileSync('openssl', ['pkcs12', '-in', p12, '-passin', `pass:${JKS_PASSWORD}`, '-nocerts', '-nodes'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  assert.deepEqual(execFileSync('openssl', ['pkey', '-pubout'], { input: key }), execFileSync('openssl', ['pkey', '-pubout'], { input: c.keyPem }));
  assert.throws(() => keytool('-list', '-keystore', file, '-storepass', 'wrong-password', '-storetype', 'JKS'));
});

test('JKS truststore: keytool lists trustedCertEntry', async () => {
  const c = await chain({ algorithm: 'ECDSA' });
  const file = write('truststore.jks', createTruststoreJKS({ caPem: c.caPem + c.chainPem.split(/(?<=-----END CERTIFICATE-----\n)/)[1], password: JKS_PASSWORD }));
  const out = keytool('-list', '-v', '-keystore', file, '-storepass', JKS_PASSWORD, '-storetype', 'JKS');
  assert.match(out, /Your keystore contains 2 entries/);
  assert.match(out, /Alias name: ca\s+Creation date: .*\s+Entry type: trustedCertEntry\s+Owner: CN=Root CA/);
  assert.match(out, /Alias name: ca-1\s+Creation date: .*\s+Entry type: trustedCertEntry\s+Owner: CN=Intermediate CA/);
});
