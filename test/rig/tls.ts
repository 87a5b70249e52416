import fsp from 'node:fs/promises';
import path from 'node:path';
import { runCommand } from './processes.ts';

export interface ListenerCert {
  caPem: string;
  certPath: string;
  keyPath: string;
}

/**
 * A throwaway CA and a leaf for localhost/127.0.0.1, for servers that must speak HTTPS (Pebble).
 * Go refuses certificates without SANs, hence the explicit subjectAltName; dnsNames adds names
 * (e.g. a Service's `<name>.<namespace>.svc` for an aggregated API server).
 */
export async function makeListenerCert(dir: string, opts: { dnsNames?: string[] } = {}): Promise<ListenerCert> {
  const p = (f: string) => path.join(dir, f);
  await runCommand('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '30',
    '-subj', '/CN=certsmith rig CA', '-keyout', p('ca.key'), '-out', p('ca.pem'),
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await runCommand('openssl', [
    'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=localhost',
    '-keyout', p('key.pem'), '-out', p('leaf.csr'),
  ]);
  await fsp.writeFile(
    p('leaf.ext'),
    `subjectAltName=${['DNS:localhost', ...(opts.dnsNames ?? []).map((n) => `DNS:${n}`), 'IP:127.0.0.1'].join(',')}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`,
  );
  await runCommand('openssl', [
    'x509', '-req', '-in', p('leaf.csr'), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial',
    '-days', '30', '-extfile', p('leaf.ext'), '-out', p('cert.pem'),
  ]);
  await Promise.all([fsp.chmod(p('ca.key'), 0o600), fsp.chmod(p('key.pem'), 0o600)]);
  return { caPem: await fsp.readFile(p('ca.pem'), 'utf8'), certPath: p('cert.pem'), keyPath: p('key.pem') };
}
