// What the HTTP-01 responder tests share: the CA's view of a token (a GET of
// /.well-known/acme-challenge/TOKEN with its status and body).
import http from 'node:http';

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
