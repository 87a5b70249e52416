import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AcmeError } from '../../../acme/errors.ts';
import { replacesRefused } from './controller.ts';

const problem = (status: number, type: string, detail: string) => new AcmeError({ type: `urn:ietf:params:acme:error:${type}`, detail, status });

test('replacesRefused: which newOrder refusals mean "order again without replaces" (RFC 9773 §5: ARI must never block a renewal)', () => {
  const rows: Array<[string, unknown, boolean]> = [
    ['409 alreadyReplaced', problem(409, 'alreadyReplaced', 'the certificate was already replaced by another order'), true],
    ['malformed naming the field', problem(400, 'malformed', 'Invalid replaces field: certificate serial not found'), true],
    // Let's Encrypt (boulder) when the certificate came from another account, e.g. after an issuerRef change
    ['unauthorized from another account', problem(403, 'unauthorized', "Could not validate ARI 'replaces' field :: requester account did not request the certificate being replaced by this order"), true],
    ['conflict naming the field', problem(409, 'conflict', 'cannot replace a certificate that was replaced by a pending order'), true],
    // refusals about something else are the order's own failure
    ['rate limited, even when the detail says replace', problem(429, 'rateLimited', 'too many new orders recently (replacement orders count too)'), false],
    ['badNonce', problem(400, 'badNonce', 'JWS has an invalid anti-replay nonce'), false],
    ['unauthorized for another reason', problem(403, 'unauthorized', 'account is not authorized for this identifier'), false],
    ['rejectedIdentifier', problem(400, 'rejectedIdentifier', 'Cannot issue for "localhost"'), false],
    ['server error naming the field', problem(500, 'serverInternal', 'error processing replaces'), false],
    ['not an ACME problem', new Error('connect ECONNREFUSED 127.0.0.1:14000'), false],
  ];
  for (const [what, e, expected] of rows) assert.equal(replacesRefused(e), expected, what);
});
