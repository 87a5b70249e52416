// The flags of the files mirror (certsmith server): each of them acts on files under
// --secrets-dir, so given without it, it would do nothing; the server refuses to start instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controllerOptionsFrom, type ControllerFlags } from './server.ts';
import { CliError } from './cli-error.ts';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const flags = (over: Partial<ControllerFlags>): ControllerFlags => ({
  autoApprove: true, metricsListen: '127.0.0.1:0', healthListen: '127.0.0.1:0', clusterResourceNamespace: 'cert-manager',
  ingressShim: true, defaultIssuerKind: 'Issuer', defaultIssuerGroup: 'cert-manager.io', autoCertificateAnnotations: 'kubernetes.io/tls-acme',
  caInjector: true, ...over,
});

test('--deploy-hook, --files-owner and --keep-files without --secrets-dir are refused, naming the flag', () => {
  const rows: [Partial<ControllerFlags>, string][] = [
    [{ deployHook: 'systemctl reload nginx' }, '--deploy-hook'],
    [{ filesOwner: 'www-data' }, '--files-owner'],
    [{ keepFiles: true }, '--keep-files'],
    [{ deployHookTimeout: '30s' }, '--deploy-hook-timeout'],
  ];
  for (const [given, flag] of rows) {
    assert.throws(() => controllerOptionsFrom(flags(given)), (e: Error) => e instanceof CliError && e.message.startsWith(`${flag} needs --secrets-dir`), flag);
    assert.equal(controllerOptionsFrom(flags({ ...given, secretsDir: '/var/lib/certsmith/live' })).secretsDir, '/var/lib/certsmith/live');
  }
});

test('--files-owner naming a user or group this host does not have is refused at start, naming the flag; a known one passes', () => {
  for (const owner of ['nobody:nosuchgroup', 'nosuchuser:nogroup', 'nobody:', 'nosuchuser']) {
    assert.throws(() => controllerOptionsFrom(flags({ secretsDir: '/var/lib/certsmith/live', filesOwner: owner })),
      (e: Error) => e instanceof CliError && e.message.startsWith('--files-owner') && e.message.includes(`"${owner}"`), owner);
  }
  assert.equal(controllerOptionsFrom(flags({ secretsDir: '/var/lib/certsmith/live', filesOwner: '0:0' })).filesOwner, '0:0');
  assert.equal(controllerOptionsFrom(flags({ secretsDir: '/var/lib/certsmith/live', filesOwner: 'root' })).filesOwner, 'root');
});

test('--secrets-dir below a folder another account controls is refused at start, naming the folder', () => {
  const base = mkdtempSync(join(tmpdir(), 'secrets-flag-'));
  try {
    const theirs = join(base, 'theirs');
    mkdirSync(theirs);
    chownSync(theirs, 65534, 65534);
    assert.throws(() => controllerOptionsFrom(flags({ secretsDir: join(theirs, 'live') })),
      (e: Error) => e instanceof CliError && e.message.startsWith(`--secrets-dir ${join(theirs, 'live')}: ${theirs} is owned by uid 65534`));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('--acme-http01-webroot that does not exist or is no folder is refused at start, naming the flag; an empty --secrets-dir too', () => {
  const base = mkdtempSync(join(tmpdir(), 'webroot-flag-'));
  try {
    assert.throws(() => controllerOptionsFrom(flags({ acmeHttp01Webroot: join(base, 'missing') })),
      (e: Error) => e instanceof CliError && e.message === `--acme-http01-webroot ${join(base, 'missing')}: no such directory (the web server's document root, which must exist)`);
    writeFileSync(join(base, 'file'), '');
    assert.throws(() => controllerOptionsFrom(flags({ acmeHttp01Webroot: join(base, 'file') })), /--acme-http01-webroot .*file: not a directory/);
    assert.equal(controllerOptionsFrom(flags({ acmeHttp01Webroot: base })).acmeHTTP01Webroot, base);
    assert.throws(() => controllerOptionsFrom(flags({ secretsDir: '' })), (e: Error) => e instanceof CliError && e.message.startsWith('--secrets-dir: an empty path'));
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('--deploy-hook-timeout is a duration, refused otherwise, naming the flag', () => {
  assert.equal(controllerOptionsFrom(flags({ secretsDir: '/l', deployHook: 'true', deployHookTimeout: '30s' })).deployHookTimeoutMs, 30_000);
  assert.equal(controllerOptionsFrom(flags({ secretsDir: '/l', deployHook: 'true' })).deployHookTimeoutMs, undefined);
  assert.throws(() => controllerOptionsFrom(flags({ secretsDir: '/l', deployHook: 'true', deployHookTimeout: 'soon' })), (e: Error) => e instanceof CliError && e.message.startsWith('--deploy-hook-timeout'));
});
