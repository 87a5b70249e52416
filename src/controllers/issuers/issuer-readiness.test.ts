// decideIssuerReady as a table: the Ready condition of SelfSigned and CA issuers (cert-manager's
// issuers controller: the CA issuer checks its key pair Secret), one row per reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideIssuerReady, issuerReadyEvent } from './issuer-readiness.ts';
import type { IssuerView as IssuerLike } from '../requests/signing.ts';
import type { Secret } from '../../api/meta.ts';
import type { Condition } from '../../api/meta.ts';
import { NOW, caKeyPair, cert, cond, issuer, key, secretFor } from '../testing/fixtures.ts';

interface Row {
  name: string;
  why: string;
  issuer: IssuerLike;
  caSecret?: Secret;
  /** "status reason: message" of Ready; undefined: nothing to write */
  want?: string | RegExp;
}

test('decideIssuerReady: one row per reason', async () => {
  const ca = await caKeyPair('ca');
  const leaf = await caKeyPair('leaf', false);
  const otherKey = await key('other');
  const caIssuer = issuer({ generation: 4 });
  const keypair = (o: Parameters<typeof secretFor>[0]) => secretFor({ name: 'ca-keypair', ...o });
  const verified = 'True KeyPairVerified: Signing CA verified';

  const rows: Row[] = [
    { name: 'SelfSigned', why: 'always ready: it has nothing to check', issuer: issuer({ spec: { selfSigned: {} } }), want: 'True IsReady: ' },
    { name: 'CA without its Secret', why: 'ErrGetKeyPair naming the Secret', issuer: caIssuer, want: 'False ErrGetKeyPair: Error getting keypair for CA issuer: secrets "ca-keypair" not found' },
    { name: 'CA Secret without tls.key', why: 'both halves are needed to sign', issuer: caIssuer, caSecret: keypair({ certPem: ca.certPem }), want: /^False ErrInvalidKeyPair: .*does not hold a valid PEM tls\.crt and tls\.key$/ },
    { name: 'CA Secret whose tls.crt holds the key too', why: 'cert-manager parses every PEM block of tls.crt as a certificate: a combined PEM is not a key pair (signing with it failed at every request)', issuer: caIssuer, caSecret: keypair({ keyPem: ca.keyPem, certPem: ca.certPem + ca.keyPem }), want: /^False ErrInvalidKeyPair: Error getting keypair for CA issuer: error parsing X\.509 certificate: tls\.crt holds a "[A-Z ]*PRIVATE KEY" PEM block, not a certificate$/ },
    { name: 'CA Secret whose ca.crt holds a key', why: 'ca.crt joins the chain of every certificate the issuer signs', issuer: caIssuer, caSecret: keypair({ keyPem: ca.keyPem, certPem: ca.certPem, caPem: ca.certPem + ca.keyPem }), want: /^False ErrInvalidKeyPair: .*ca\.crt holds a "[A-Z ]*PRIVATE KEY" PEM block, not a certificate$/ },
    { name: 'CA Secret with a garbage certificate', why: 'an unreadable certificate is not a key pair', issuer: caIssuer, caSecret: keypair({ keyPem: ca.keyPem, certPem: 'garbage' }), want: /^False ErrInvalidKeyPair: .*does not hold a valid PEM/ },
    { name: 'CA key does not match its certificate', why: 'signing with it would produce certificates no one can verify', issuer: caIssuer, caSecret: keypair({ keyPem: otherKey, certPem: ca.certPem }), want: /^False ErrInvalidKeyPair: .*private key in secret "ca-keypair" does not match its certificate$/ },
    { name: 'CA Secret holds a leaf', why: 'a certificate without CA basic constraints cannot sign', issuer: caIssuer, caSecret: keypair({ keyPem: leaf.keyPem, certPem: leaf.certPem }), want: 'False ErrInvalidKeyPair: Error getting keypair for CA issuer: certificate is not a CA' },
    { name: 'CA key pair valid', why: 'Ready once the pair is a CA and matches', issuer: caIssuer, caSecret: keypair({ keyPem: ca.keyPem, certPem: ca.certPem }), want: verified },
    {
      name: 'CA Secret holds a chain', why: 'the first certificate of tls.crt is the CA\'s',
      issuer: caIssuer, caSecret: keypair({ keyPem: ca.keyPem, certPem: ca.certPem + await cert({ keyPem: otherKey, isCA: true }) }), want: verified,
    },
    { name: 'ACME issuer', why: 'left to the ACME account controller', issuer: issuer({ spec: { acme: {} } }) },
    { name: 'issuer naming no type', why: 'not certsmith\'s to judge', issuer: issuer({ spec: {} }) },
    {
      name: 'Vault issuer', why: 'not implemented: Ready=False naming it rather than silently never Ready (issue 15)',
      issuer: issuer({ spec: { vault: {} } }), want: /^False UnsupportedIssuerType: certsmith does not implement the Vault issuer \(spec\.vault\)/,
    },
    {
      name: 'Venafi issuer', why: 'not implemented: Ready=False naming it (issue 15)',
      issuer: issuer({ spec: { venafi: {} } }), want: /^False UnsupportedIssuerType: certsmith does not implement the Venafi issuer \(spec\.venafi\)/,
    },
    {
      // fed its own earlier output, as the store returns it (the comparison is of the JSON text)
      name: 'already Ready with the same condition', why: 'no write when nothing changes',
      issuer: issuer({ generation: 4, conditions: decideIssuerReady(caIssuer, keypair({ keyPem: ca.keyPem, certPem: ca.certPem }), new Date('2026-01-01T00:00:00Z')) }),
      caSecret: keypair({ keyPem: ca.keyPem, certPem: ca.certPem }),
    },
  ];

  const failures: string[] = [];
  for (const r of rows) {
    const conds = decideIssuerReady(r.issuer, r.caSecret, NOW);
    const ready = conds?.find((c) => c.type === 'Ready');
    const got = ready ? `${ready.status} ${ready.reason}: ${ready.message}` : undefined;
    const ok = r.want instanceof RegExp ? got !== undefined && r.want.test(got) : got === r.want;
    if (!ok) failures.push(`${r.name} (${r.why}): got ${got}`);
  }
  assert.deepEqual(failures, []);
});

test('decideIssuerReady: observedGeneration and lastTransitionTime', async () => {
  const ca = await caKeyPair('ca');
  const secret = secretFor({ name: 'ca-keypair', keyPem: ca.keyPem, certPem: ca.certPem });
  const was: Condition = cond('Ready', 'False', 'ErrGetKeyPair', 'x', { lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 });
  const ready = decideIssuerReady(issuer({ generation: 2, conditions: [was] }), secret, NOW)?.find((c) => c.type === 'Ready');
  assert.equal(ready?.observedGeneration, 2, 'the generation judged');
  assert.equal(ready?.lastTransitionTime, '2026-06-01T00:00:00Z', 'False → True is a transition at now');
  const again = decideIssuerReady(issuer({ generation: 3, conditions: [{ ...ready!, observedGeneration: 2 }] }), secret, NOW);
  assert.equal(again?.find((c) => c.type === 'Ready')?.lastTransitionTime, '2026-06-01T00:00:00Z', 'a new generation alone is no transition');
});

test('issuerReadyEvent: a CA issuer\'s Ready changing is told as cert-manager\'s CA issuer tells it (KeyPairVerified, ErrGetKeyPair, ErrInvalidKeyPair); nothing when it stays', async () => {
  const ca = await caKeyPair('ca');
  const caIssuer = issuer({ generation: 1 });
  const good = secretFor({ name: 'ca-keypair', keyPem: ca.keyPem, certPem: ca.certPem });
  const missing = decideIssuerReady(caIssuer, undefined, NOW);
  assert.deepEqual(issuerReadyEvent(caIssuer, missing), { type: 'Warning', reason: 'ErrGetKeyPair', message: 'Error getting keypair for CA issuer: secrets "ca-keypair" not found' });
  const fixed = issuer({ generation: 1, conditions: missing });
  const verified = decideIssuerReady(fixed, good, NOW);
  assert.deepEqual(issuerReadyEvent(fixed, verified), { type: 'Normal', reason: 'KeyPairVerified', message: 'Signing CA verified' });
  // the same condition at a new generation: no second event
  const again = decideIssuerReady(issuer({ generation: 2, conditions: verified }), good, NOW);
  assert.equal(issuerReadyEvent(issuer({ generation: 2, conditions: verified }), again), undefined);
  assert.equal(issuerReadyEvent(issuer({ spec: { selfSigned: {} } }), decideIssuerReady(issuer({ spec: { selfSigned: {} } }), undefined, NOW)), undefined, 'SelfSigned has none');
});
