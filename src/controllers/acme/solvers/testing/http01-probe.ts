// What the HTTP-01 responder tests share: the CA's view of a token (a GET of
// /.well-known/acme-challenge/TOKEN with its status and body).
import http from 'node:http';
import net from 'node:net';

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

/** Sends `request` as it is (raw bytes: absolute-form, two Hosts...) and gives the status line's code and the headers' text. */
export function rawRequest(port: number, request: string): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(request));
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      text += d;
      const end = text.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(text)?.[1];
      if (end >= 0 && (length === undefined || text.length >= end + 4 + Number(length))) sock.end();
    });
    sock.on('end', () => {
      const [head, body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), head, body });
    });
    sock.on('error', reject);
  });
}

/** A TCP connection that says `partial` (or nothing) and waits: resolves with how long until the listener closed it. */
export function heldFor(port: number, partial = ''): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const sock = net.connect(port, '127.0.0.1', () => { if (partial) sock.write(partial); });
    sock.on('close', () => resolve(Date.now() - t0));
    sock.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? undefined : reject(e)));
    sock.resume();
  });
}
