// A challenge is accepted once (RFC 8555 §7.5.1), also across a kill -9 between the accepting
// POST and the write that records it: the mark is written first, and a process that finds it
// reads the CA's view before anything else. Pebble validates a challenge POSTed twice twice; the
// second validation, after the first made the authorization valid and certsmith cleaned the
// record up, made it invalid, and the certificate went into an hour of backoff.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Challenge } from '../../../api/resources.ts';
import type { Challenge as ChallengeObj } from '../../../api/types.ts';
import type { AcmeAuthorization, AcmeClient } from '../../../acme/client.ts';
import { ACMELookAnnotation } from '../../../api/annotations.ts';
import { NOW } from '../../testing/fixtures.ts';
import { CHALLENGE_URL, presentedChallenge } from './testing/presented-challenge.ts';

const authz = (challenge: 'pending' | 'processing' | 'valid', status: 'pending' | 'valid' = 'pending'): AcmeAuthorization => ({
  url: 'https://ca.test/authz/1', status, identifier: { type: 'dns', value: 'a.example.test' },
  challenges: [{ type: 'http-01', url: CHALLENGE_URL, token: 'tok', status: challenge }],
});

/** A presented Challenge with `annotations`, and a CA whose authorization says `ca` (setCA changes it). */
async function rig(annotations: Record<string, string>, ca: AcmeAuthorization) {
  let atCA = ca;
  /** what the Challenge carried in the store when each accepting POST left */
  const posts: (Record<string, string> | undefined)[] = [];
  const r = await presentedChallenge({
    annotations,
    acme: (store) => ({
      accountUrl: undefined,
      respondChallenge: async () => {
        posts.push((await store.get<ChallengeObj>(Challenge, 'default', 'c'))!.metadata.annotations);
        return { status: 'processing' };
      },
      lookAtAuthorization: async () => ({ authorization: atCA }),
      getAuthorization: async () => atCA,
    }) as unknown as AcmeClient,
  });
  return { ...r, posts, setCA(next: AcmeAuthorization) { atCA = next; } };
}

test('the accepting POST leaves only after the Challenge records that it is about to (write-ahead), and is sent once', async () => {
  const r = await rig({}, authz('processing'));
  try {
    await r.pass();
    assert.equal(r.posts.length, 1);
    assert.ok(r.posts[0]?.[ACMELookAnnotation.acceptingSince], `the mark was stored before the POST: ${JSON.stringify(r.posts[0])}`);
    assert.equal(r.current().status?.state, 'processing');
  } finally {
    await r.stop();
  }
});

test('killed between the POST and its record: the restarted process reads the CA, sees the challenge accepted and polls it, with no second POST', async () => {
  const r = await rig({ [ACMELookAnnotation.acceptingSince]: NOW.toISOString() }, authz('processing'));
  try {
    await r.pass();
    assert.equal(r.posts.length, 0, 'not accepted a second time');
    assert.equal(r.current().status?.state, 'processing');
    assert.ok(r.events.includes('AlreadyAccepted'), r.events.join(', '));
  } finally {
    await r.stop();
  }
});

test('killed between the POST and its record, the CA already done: valid at once, no second POST', async () => {
  const r = await rig({ [ACMELookAnnotation.acceptingSince]: NOW.toISOString() }, authz('valid', 'valid'));
  try {
    await r.pass();
    assert.equal(r.posts.length, 0);
    assert.equal(r.current().status?.state, 'valid');
  } finally {
    await r.stop();
  }
});

test('a mark, and the CA still says pending: it may be validating the POST sent before the restart (Pebble 2.4 shows pending until done), so no second POST until 30 s after the mark; then the CA\'s answer decides', async () => {
  const r = await rig({ [ACMELookAnnotation.acceptingSince]: NOW.toISOString() }, authz('pending'));
  try {
    r.clock.advance(4_000);
    await r.pass();
    assert.equal(r.posts.length, 0, '4 s after the mark: not accepted again');
    // the CA finished the first validation meanwhile
    r.setCA(authz('valid', 'valid'));
    r.clock.advance(10_000);
    await r.pass();
    assert.equal(r.posts.length, 0);
    assert.equal(r.current().status?.state, 'valid');
  } finally {
    await r.stop();
  }
});

test('killed after the mark but before the POST left: 30 s after the mark, still pending at the CA, it is accepted, once', async () => {
  const r = await rig({ [ACMELookAnnotation.acceptingSince]: NOW.toISOString() }, authz('pending'));
  try {
    await r.pass();
    assert.equal(r.posts.length, 0);
    r.clock.advance(31_000);
    await r.pass();
    assert.equal(r.posts.length, 1);
    assert.equal(r.current().status?.state, 'processing');
  } finally {
    await r.stop();
  }
});
