// Bearer-token authentication: the one credential the embedded API server knows.
import type http from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';

function hashOf(s: string) {
  return createHash('sha256').update(s).digest();
}

/**
 * Whether a request carries the token; every request does when there is none. Both sides are
 * hashed first so the comparison takes the same time whatever the lengths.
 */
export function bearerTokenCheck(token: string | undefined): (req: http.IncomingMessage) => boolean {
  const tokenHash = token ? hashOf(token) : undefined;
  return (req) => {
    if (!tokenHash) return true;
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    return !!m && timingSafeEqual(hashOf(m[1].trim()), tokenHash);
  };
}
