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
const time = async (label: string, f: (i: number) => unknown) => { const t = performance.now(); for (let i = 0; i < N; i++) await f(i); console.log(label, ((performance.now() - t) / N * 1000).toFixed(0), 'µs'); };
for (let round = 0; round < 3; round++) {
const csrs: string[] = []; const certs: string[] = [];
await time('parseKey', (i) => parsePrivateKey(keys[i]));
await time('fingerprint', (i) => publicKeyFingerprint(parsePrivateKey(keys[i])));
await time('createCSR', async (i) => { csrs.push(await createCSR({ dnsNames: [`c${i}.bench.test`], usages: ['digital signature', 'key encipherment'] }, keys[i])); });
await time('parseCSR', (i) => parseCSR(csrs[i] + '\n'));
await time('sign', async (i) => { certs.push(await signCertificate({ csrPem: csrs[i], notBefore: new Date(), durationMs: 7776000000, issuer: { certPem: caPem, keyPem: caKey } })); });
await time('parseCert', (i) => parseCertificate(certs[i]));
}
// The floor under createCSR/parseCSR/sign: one native ECDSA P-256 sign or verify (a cold-memo sign does both).
{
  const { generateKeyPairSync, sign, verify } = await import('node:crypto');
  const pairs = Array.from({ length: N }, () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }));
  const data = Buffer.alloc(300, 1);
  const sigs: Buffer[] = [];
  await time('native sign', (i) => sigs.push(sign('sha256', data, pairs[i].privateKey)));
  await time('native verify', (i) => verify('sha256', data, pairs[i].publicKey, sigs[i]));
}
