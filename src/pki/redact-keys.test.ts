// No private key, whole or cut at either end, survives into an Event or a notification message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redactKeyMaterial } from './redact-keys.ts';

test('redactKeyMaterial: whole blocks, a block cut at its start (a tail of output) or its end', () => {
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const sec1 = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
  const body = pem.split('\n').slice(1, -2).join('\n');
  const rows: [string, string, string][] = [
    ['a whole PKCS#8 block', `before\n${pem}after`, 'before\n[private key redacted]\nafter'],
    ['a whole SEC1 block', `${sec1}`, '[private key redacted]\n'],
    ['the BEGIN line cut off, mid-line', `…${body.slice(7)}\n-----END PRIVATE KEY-----\nreload failed`, '…[private key redacted]\nreload failed'],
    ['the BEGIN line cut off, on a line boundary', `status 1: ${body.split('\n').at(-1)}\n-----END RSA PRIVATE KEY-----`, 'status 1: [private key redacted]'],
    ['the END line cut off', `a -----BEGIN PRIVATE KEY-----\n${body.slice(0, 30)}`, 'a [private key redacted]'],
    ['two blocks', `${pem}${pem}`, '[private key redacted]\n[private key redacted]\n'],
    ['a certificate stays', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----'],
    ['ordinary words stay', 'exited with status 1 (attempt 1, retrying in 1m0s): reload of web failed', 'exited with status 1 (attempt 1, retrying in 1m0s): reload of web failed'],
  ];
  for (const [why, input, want] of rows) assert.equal(redactKeyMaterial(input), want, why);
});

/**
 * The key's bytes as they could reach the output: any 9-byte run of its base64 body, or any
 * 8-byte run of its DER in hex (separators between hex digits ignored).
 */
function leaks(output: string, pem: string): string[] {
  const body = pem.split('\n').filter((l) => l && !l.startsWith('-----')).join('');
  const found: string[] = [];
  for (let i = 0; i + 12 <= body.length; i += 4) if (output.includes(body.slice(i, i + 12))) found.push(`base64 ${body.slice(i, i + 12)}`);
  const hex = Buffer.from(body, 'base64').toString('hex');
  const outHex = output.toLowerCase().replace(/[^0-9a-f]/g, '');
  for (let i = 0; i + 16 <= hex.length; i += 2) if (outHex.includes(hex.slice(i, i + 16))) found.push(`hex ${hex.slice(i, i + 16)}`);
  return found;
}

test('redactKeyMaterial: a key that a hook passed through another program (prefixed lines, a diff, a text or hex dump) leaves no fragment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-redact-'));
  try {
    const keys: [string, crypto.KeyObject][] = [
      ['rsa', crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey],
      ['ec', crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey],
      ['ed25519', crypto.generateKeyPairSync('ed25519').privateKey],
    ];
    for (const [name, privateKey] of keys) {
      const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      const path = join(dir, `${name}.key`);
      writeFileSync(path, pem, { mode: 0o600 });
      const sh = (cmd: string) => spawnSync('/bin/sh', ['-c', cmd], { env: { K: path, PATH: process.env.PATH }, encoding: 'utf8' }).stdout;
      const outputs: Record<string, string> = {
        'sed prefix': sh('sed "s/^/key> /" "$K"'),
        'diff': sh('diff /dev/null "$K"'),
        'timestamps': sh('while read -r l; do echo "2026-11-27T01:02:03Z hook: $l"; done < "$K"'),
        'without the PEM lines': sh('grep -v -- ----- "$K"'),
        'indented': sh('sed "s/^/    /" "$K"'),
        'openssl text': sh('openssl pkey -in "$K" -text -noout'),
        'od bytes': sh('openssl pkey -in "$K" -outform DER | od -A x -t x1'),
        'od words': sh('openssl pkey -in "$K" -outform DER | od -x'),
        'plain hex': sh('openssl pkey -in "$K" -outform DER | od -A n -t x1 | tr -d " \\n"'),
      };
      for (const [how, out] of Object.entries(outputs)) {
        assert.ok(out.length > 40, `${name} ${how}: the tool printed something (${JSON.stringify(out)})`);
        const redacted = redactKeyMaterial(`reload failed\n${out}${out.endsWith('\n') ? '' : '\n'}exit 1`);
        assert.deepEqual(leaks(redacted, pem), [], `${name} ${how}:\n${redacted}`);
        assert.match(redacted, /^reload failed\n[\s\S]*exit 1$/, `${name} ${how}: the rest stays`);
        // and a tail of it, cut anywhere, as the 512 bytes an Event keeps
        for (const cut of [37, 101, 263]) {
          if (out.length <= cut) continue;
          assert.deepEqual(leaks(redactKeyMaterial(out.slice(cut)), pem), [], `${name} ${how}, cut at ${cut}`);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('redactKeyMaterial: a key printed as a JWK (base64url), as base64url DER or as decimal bytes leaves no fragment of its private parts', () => {
  const keys: [string, crypto.KeyObject][] = [
    ['rsa', crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey],
    ['ec', crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey],
    ['ed25519', crypto.generateKeyPairSync('ed25519').privateKey],
  ];
  for (const [name, privateKey] of keys) {
    const jwk = privateKey.export({ format: 'jwk' }) as Record<string, string>;
    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    const outputs: Record<string, string> = {
      'jwk': JSON.stringify(jwk),
      'jwk indented': JSON.stringify(jwk, null, 2),
      'base64url der': der.toString('base64url'),
      'node buffer json': JSON.stringify(der),
      'python list': `[${[...der].join(', ')}]`,
    };
    // the private parts: a JWK's d (and RSA's factors and exponents), the DER's bytes
    const secrets = ['d', 'p', 'q', 'dp', 'dq', 'qi'].map((k) => jwk[k]).filter(Boolean);
    for (const [how, out] of Object.entries(outputs)) {
      for (const text of [`reload failed: ${out}\nexit 1`, out.slice(29)]) {
        const redacted = redactKeyMaterial(text);
        const found: string[] = [];
        for (const secret of secrets) for (let i = 0; i + 12 <= secret.length; i += 4) if (redacted.includes(secret.slice(i, i + 12))) found.push(secret.slice(i, i + 12));
        const decimal = redacted.replace(/,\s+/g, ',');
        for (let i = 0; i + 8 <= der.length; i++) if (decimal.includes([...der.subarray(i, i + 8)].join(','))) found.push(`bytes at ${i}`);
        const b64url = der.toString('base64url');
        for (let i = 0; i + 12 <= b64url.length; i += 4) if (redacted.includes(b64url.slice(i, i + 12))) found.push(`der ${b64url.slice(i, i + 12)}`);
        assert.deepEqual(found, [], `${name} ${how}:\n${redacted}`);
      }
    }
  }
});

test('redactKeyMaterial: what a failing reload prints stays readable', () => {
  const keep = [
    'nginx: [emerg] cannot load certificate key "/etc/ssl/private/web.key": PEM_read_bio_PrivateKey() failed (SSL: error:1E08010C:DECODER routines::unsupported)',
    'Job for nginx.service failed because the control process exited with error code.',
    'See "systemctl status nginx.service" and "journalctl -xeu nginx.service" for details.',
    '/usr/local/bin/reload-web: line 3: /var/lib/certsmith/secrets/default/web-tls/fullchain.pem: Permission denied',
    'curl: (7) Failed to connect to 127.0.0.1 port 8443 after 0 ms: Couldn\'t connect to server',
    'sha256 3f2a9c1d (serial 1234 5678 9012 3456 7890) at 2026-11-27 01:02:03',
    'Aborted (core dumped)  [2026-11-27T01:02:03.123Z] pid 12345',
    'certsmith-deploy-hook_web-frontend-production failed with status 1',
    'retrying in [1, 2, 4, 8] seconds',
    'listen tcp 127.0.0.1:8443: bind: address already in use (ports [80, 443, 8080, 8443])',
  ];
  for (const line of keep) assert.equal(redactKeyMaterial(line), line);
});
