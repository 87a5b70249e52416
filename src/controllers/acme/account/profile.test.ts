import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeProfiles, profileProblem } from './account.ts';

test('spec.acme.profile against the directory meta.profiles (table)', () => {
  const offered = { classic: 'The same profile you have been getting', shortlived: 'Six-day certificates', tlsserver: '' };
  const rows: [string | undefined, Record<string, string> | undefined, RegExp | undefined][] = [
    [undefined, undefined, undefined],
    [undefined, offered, undefined],
    ['shortlived', offered, undefined],
    ['tlsserver', offered, undefined],
    ['short', offered, /"short" is not offered .* it offers: classic \(The same profile you have been getting\), shortlived \(Six-day certificates\), tlsserver$/],
    ['shortlived', undefined, /offers no profiles/],
    ['shortlived', {}, /offers no profiles/],
    // not inherited object keys
    ['toString', offered, /not offered/],
  ];
  for (const [profile, profiles, want] of rows) {
    const got = profileProblem(profile, 'https://ca.example/dir', profiles);
    if (want) assert.match(got ?? '', want, `${profile}`);
    else assert.equal(got, undefined, `${profile}`);
  }
  assert.equal(describeProfiles(undefined), 'none');
});
