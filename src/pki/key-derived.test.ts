// A deploy hook that passes its key through another program must not get the key into its Event:
// each transformation here leaked it past redactKeyMaterial (found by testing as a local attacker
// would). The outputs are what the real tools print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { redactKeyDerived, showsKeyMaterial } from './key-derived.ts';

const sh = (script: string, input: string) => execFileSync('/bin/sh', ['-c', script], { input, encoding: 'utf8' });
const tail = (s: string) => s.slice(-512);

const keys = {
  'rsa pkcs1': generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string,
  'rsa pkcs8': generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  'ec sec1': generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }) as string,
  ed25519: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
};

const transformations: [string, string][] = [
  ['cat', 'cat'],
  ['fold -w 16', 'fold -w 16'],
  ['DER as base64, 20 a line', 'openssl pkey -outform DER | base64 -w 20'],
  ['DER as base32, 20 a line', 'openssl pkey -outform DER | base32 -w 20'],
  ['traditional DER as hex', 'openssl pkey -traditional -outform DER | xxd -p'],
  ['the file as base64', 'base64'],
  ['od -c', 'od -c'],
  ['od -An -c', 'od -An -c'],
  ['spaced', "sed 's/./& /g'"],
  ['lower case, 23 a line', "tr 'A-Z' 'a-z' | fold -w 23"],
  ['stamped lines', "sed 's/^/2026-11-27T07:00:00Z hook: /'"],
];

for (const [kind, pem] of Object.entries(keys)) {
  test(`the key shows through every transformation: ${kind}`, () => {
    for (const [name, script] of transformations) {
      // the Event keeps the last 512 bytes: an RSA key's tail holds dQ and qInv; an EC key's tail
      // is its public key, so the whole output is checked for the small keys
      const full = `reloading nginx\n${sh(script, pem)}\nnginx: [emerg] bad key\n`;
      const out = kind.startsWith('rsa') ? tail(full) : full;
      assert.ok(showsKeyMaterial(out, [pem]), `${name}: not found in\n${out}`);
      // the lines that show it go, the hook's own words stay
      const redacted = redactKeyDerived(out, [pem], '[private key redacted]');
      assert.ok(redacted.found && !showsKeyMaterial(redacted.text, [pem]), `${name}: left in\n${redacted.text}`);
      assert.match(redacted.text, /nginx: \[emerg\] bad key/, name);
    }
  });
}

test('what a reload prints, the certificate and another key are not the key', () => {
  const pem = keys['ec sec1'];
  const cert = sh('f=$(mktemp) && cat > "$f" && openssl req -x509 -new -key "$f" -subj /CN=a.example.test -days 1; rm -f "$f"', pem);
  const innocent = [
    'nginx: [emerg] cannot load certificate "/etc/certsmith/live/default/web/tls.crt": PEM_read_bio_X509_AUX() failed',
    'Job for nginx.service failed because the control process exited with error code.\nSee "systemctl status nginx.service" and "journalctl -xeu nginx.service" for details.',
    cert,
    keys['rsa pkcs8'],
    '/var/lib/certsmith/live/default/web-frontend-2026-11-27/fullchain.pem 3f2a9c1b7e8d4f60 sha256',
    '',
  ];
  for (const out of innocent) assert.equal(showsKeyMaterial(out, [pem]), false, out.slice(0, 80));
  assert.equal(showsKeyMaterial(pem, []), false, 'no key given, nothing to compare');
});
