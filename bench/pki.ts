// Bench: the PKI steps of one ECDSA P-256 issuance (CSR creation and parsing, CA signing, certificate
// parsing), each averaged over 500 fresh keys, with the native sign/verify they cannot go below.
// The last round is the warm one. Run: npx tsx bench/pki.ts
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { generatePrivateKey, parsePrivateKey, publicKeyFingerprint } from '../src/pki/keys.ts';
import { createCSR, parseCSR } from '../src/pki/csr.ts';
import { signCertificate } from '../src/pki/sign.ts';
import { parseCertificate } from '../src/pki/parse.ts';

const N = 500;
const caKey = await generatePrivateKey({ algorithm: 'ECDSA', size: 256 });
const caCsr = await createCSR({ commonName: 'ca', isCA: true }, caKey);
const caPem = await signCertificate({ csrPem: caCsr, notBefore: new Date(), durationMs: 1e10, isCA: true, selfSignKeyPem: caKey });
const keys: string[] = [];
for (let i = 0; i < N; i++) keys.push(await generatePrivateKey({ algorithm: 'ECDSA', size: 256 }));

async function time(label: string, f: (i: number) => unknown): Promise<void> {
  const t = performance.now();
  for (let i = 0; i < N; i++) await f(i);
  console.log(`${label.padEnd(28)} ${(((performance.now() - t) / N) * 1000).toFixed(0).padStart(5)} µs`);
}

for (let round = 1; round <= 3; round++) {
  console.log(`round ${round}`);
  const csrs: string[] = [];
  const certs: string[] = [];
  await time('parse key + fingerprint', (i) => publicKeyFingerprint(parsePrivateKey(keys[i])));
  await time('createCSR', async (i) => { csrs.push(await createCSR({ dnsNames: [`c${i}.bench.test`], usages: ['digital signature', 'key encipherment'] }, keys[i])); });
  // a trailing newline defeats parseCSR's memo, so each call really parses and verifies
  await time('parseCSR', (i) => parseCSR(csrs[i] + '\n'));
  await time('signCertificate (CA)', async (i) => { certs.push(await signCertificate({ csrPem: csrs[i], notBefore: new Date(), durationMs: 7776000000, issuer: { certPem: caPem, keyPem: caKey } })); });
  await time('parseCertificate', (i) => parseCertificate(certs[i]));
}

const pairs = Array.from({ length: N }, () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }));
const data = Buffer.alloc(300, 1);
const sigs: Buffer[] = [];
await time('native ECDSA sign (floor)', (i) => sigs.push(sign('sha256', data, pairs[i].privateKey)));
await time('native ECDSA verify (floor)', (i) => verify('sha256', data, pairs[i].publicKey, sigs[i]));
