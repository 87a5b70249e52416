// A Challenge this process accepted, whose validation failed with a 404 or a refused connection,
// is not the user's failure when this process's HTTP-01 responder connection was lost or
// replaced between the accept and the look (issue 20): the token may not have been served when
// the CA validated. It fails as solver-unavailable (the bounded retry that counts no issuance
// attempt). A loss before the accept changes nothing: the token was served again before the POST.
// The real runtime adopts a fake keeper, which drops the connection when the test says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AcmeAuthorization, AcmeClient } from '../../../acme/client.ts';
import { ANN_FAILURE_CAUSE } from '../recovery.ts';
import { CHALLENGE_URL, presentedChallenge, until } from './testing/presented-challenge.ts';

/** The CA's answer to every look: invalid, it got a 404 for the token. */
const notFound: AcmeAuthorization = {
  url: 'https://ca.test/authz/1', status: 'invalid', identifier: { type: 'dns', value: 'a.example.test' },
  challenges: [{
    type: 'http-01', url: CHALLENGE_URL, token: 'tok', status: 'invalid',
    error: { type: 'urn:ietf:params:acme:error:unauthorized', detail: 'Invalid response from http://a.example.test/.well-known/acme-challenge/tok: 404' },
  }],
};

async function rig() {
  const r = await presentedChallenge({
    acme: () => ({
      accountUrl: undefined,
      respondChallenge: async () => ({ status: 'processing' }),
      lookAtAuthorization: async () => ({ authorization: notFound }),
      getAuthorization: async () => notFound,
    }) as unknown as AcmeClient,
  });
  /** the keeper closes our connection; the runtime replaces it (the keeper is still alive) */
  async function dropConnection(): Promise<void> {
    const n = r.keeper.conns.length;
    const replaced = () => r.infos.filter((m) => /connection replaced/.test(m)).length;
    const before = replaced();
    r.keeper.conns[n - 1].sock.destroy();
    // the runtime marks the replacement once the keeper acknowledged the tokens, a moment after the
    // keeper received them: the clock must not move before that, or the loss would date after it
    await until('the connection was replaced', () => r.keeper.conns.length > n && r.keeper.told(n).includes('present tok') && replaced() > before);
  }
  return { ...r, dropConnection };
}

test('a 404 for a challenge accepted here, with the responder connection lost after the accept: solver-unavailable, not the user\'s failure', async () => {
  const r = await rig();
  try {
    await r.pass(); // accepts: the first pass takes the keeper over and serves the token
    assert.equal(r.current().status?.state, 'processing');
    assert.ok(r.keeper.told(0).includes('present tok'));
    r.clock.advance(20);
    await r.dropConnection();
    r.clock.advance(100);
    await r.pass(); // the look: the CA got a 404
    const c = r.current();
    assert.equal(c.status?.state, 'invalid');
    assert.equal(c.metadata.annotations?.[ANN_FAILURE_CAUSE], 'solver-unavailable');
    assert.ok(r.events.includes('SolverUnavailable'), r.events.join(', '));
    assert.match(c.status?.reason ?? '', /responder/);
  } finally {
    await r.stop();
  }
});

test('a 404 for a challenge accepted here, with the responder connection lost and replaced before the accept: the user\'s failure as before', async () => {
  const r = await rig();
  try {
    await r.rt.http01();
    await r.dropConnection();
    r.clock.advance(20);
    await r.pass(); // accepts after the replacement: the token was given to the new connection first
    assert.equal(r.current().status?.state, 'processing');
    r.clock.advance(100);
    await r.pass();
    const c = r.current();
    assert.equal(c.status?.state, 'invalid');
    assert.equal(c.metadata.annotations?.[ANN_FAILURE_CAUSE], undefined);
    assert.ok(r.events.includes('Failed') && !r.events.includes('SolverUnavailable'), r.events.join(', '));
  } finally {
    await r.stop();
  }
});
