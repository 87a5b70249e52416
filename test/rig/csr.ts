import fsp from 'node:fs/promises';
import path from 'node:path';
import { makeTempDir, removeTempDir, runCommand } from './processes.ts';

/** A CSR (DER) and its EC P-256 key (PEM) for the given DNS names, made by openssl. */
export async function makeCsr(dnsNames: string[]): Promise<{ csrDer: Buffer; keyPem: string }> {
  const dir = await makeTempDir('csr');
  try {
    const san = dnsNames.map((n) => `DNS:${n}`).join(',');
    await runCommand('openssl', [
      'req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${dnsNames[0]}`,
      '-addext', `subjectAltName=${san}`, '-keyout', path.join(dir, 'key.pem'), '-outform', 'DER', '-out', path.join(dir, 'csr.der'),
    ]);
    return { csrDer: await fsp.readFile(path.join(dir, 'csr.der')), keyPem: await fsp.readFile(path.join(dir, 'key.pem'), 'utf8') };
  } finally {
    await removeTempDir(dir);
  }
}

/** `openssl verify` of a leaf against a root, with the rest of the chain as untrusted intermediates. Throws on failure. */
export async function verifyChain(chainPem: string, rootPem: string): Promise<string> {
  const dir = await makeTempDir('verify');
  try {
    const certs = chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
    await fsp.writeFile(path.join(dir, 'leaf.pem'), certs[0] ?? '');
    await fsp.writeFile(path.join(dir, 'chain.pem'), certs.slice(1).join('\n') || certs[0] || '');
    await fsp.writeFile(path.join(dir, 'root.pem'), rootPem);
    return await runCommand('openssl', [
      'verify', '-CAfile', path.join(dir, 'root.pem'), '-untrusted', path.join(dir, 'chain.pem'), path.join(dir, 'leaf.pem'),
    ]);
  } finally {
    await removeTempDir(dir);
  }
}
