// The ACME client registry keeps one client per issuer, as cert-manager's account registry is
// keyed by issuer uid: two issuers sharing one account key Secret each use the account URL in
// their own status. A shared client took the URL of whichever issuer wrote last, so after the CA
// forgot the account, one issuer's Orders went out under the other's dead account URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { AcmeClientRegistry } from './registry.ts';

const key = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const server = 'https://127.0.0.1:1/dir';

test('issuers sharing an account key keep their own account URLs', () => {
  const registry = new AcmeClientRegistry();
  try {
    const fresh = registry.clientFor('le-http', { server, accountKeyPem: key, accountUrl: `${server}/acct/new` });
    const stale = registry.clientFor('le-dns', { server, accountKeyPem: key, accountUrl: `${server}/acct/old` });
    assert.equal(registry.forIssuer('le-http')?.accountUrl, `${server}/acct/new`);
    assert.equal(registry.forIssuer('le-dns')?.accountUrl, `${server}/acct/old`);
    assert.equal(fresh.accountUrl, `${server}/acct/new`, "the other issuer's stale URL does not replace this one's");
    assert.notEqual(fresh, stale);
    // the same issuer asking again with the same account keeps its client (its nonces and directory)
    assert.equal(registry.clientFor('le-http', { server, accountKeyPem: key, accountUrl: `${server}/acct/new` }), fresh);
    // a new account URL in the issuer's own status gives it a new client
    const moved = registry.clientFor('le-dns', { server, accountKeyPem: key, accountUrl: `${server}/acct/newer` });
    assert.equal(moved.accountUrl, `${server}/acct/newer`);
    assert.equal(registry.forIssuer('le-http'), fresh);
    registry.forget('le-dns');
    assert.equal(registry.forIssuer('le-dns'), undefined);
    assert.equal(registry.forIssuer('le-http'), fresh);
  } finally {
    registry.close();
  }
});
