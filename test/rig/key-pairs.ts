// A real certificate and the key it was made for, per name, made once by openssl: for tests of
// code that checks that a key fits its certificate (the files controller publishes no other).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Map<string, { certPem: string; keyPem: string }>();

export function keyPair(name: string): { certPem: string; keyPem: string } {
  let pair = made.get(name);
  if (pair) return pair;
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-pair-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1', '-subj', `/CN=${name}`,
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    pair = { certPem: readFileSync(join(dir, 'cert.pem'), 'utf8'), keyPem: readFileSync(join(dir, 'key.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  made.set(name, pair);
  return pair;
}
