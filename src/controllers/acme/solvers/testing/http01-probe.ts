// What the HTTP-01 responder tests share: a free loopback port, and the CA's view of a token
// (a GET of /.well-known/acme-challenge/TOKEN with its status and body).
import http from 'node:http';

// below the ephemeral range, so a port a test re-binds after a restart is not an outgoing connection's by then
export { freePort } from '../../../../../test/rig/ports.ts';

export function getToken(port: number, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: `/.well-known/acme-challenge/${token}`, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}
