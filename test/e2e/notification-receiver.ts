// A loopback webhook receiver for the end-to-end notification tests (issue 16): records every
// POST as the raw body (so a test can look for what must never be in it) and as the parsed
// `certsmith` details, and answers 200.
import http from 'node:http';

export interface ReceivedNotification {
  kind: string;
  state: string;
  namespace: string;
  name: string;
  message: string;
  text: string;
  /** the body as sent */
  raw: string;
}

export interface NotificationReceiver {
  url: string;
  got: ReceivedNotification[];
  /** "firing Kind" / "resolved Kind", in arrival order, for one Certificate */
  seen(name: string): string[];
  stop(): Promise<void>;
}

export async function startNotificationReceiver(): Promise<NotificationReceiver> {
  const got: ReceivedNotification[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (raw += d));
    req.on('end', () => {
      const b = JSON.parse(raw) as { text: string; certsmith: { kind: string; state: string; message: string; certificate: { namespace: string; name: string } } };
      got.push({ kind: b.certsmith.kind, state: b.certsmith.state, namespace: b.certsmith.certificate.namespace, name: b.certsmith.certificate.name, message: b.certsmith.message, text: b.text, raw });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/services/T000/B000/hook`,
    got,
    seen: (name) => got.filter((g) => g.name === name).map((g) => `${g.state} ${g.kind}`),
    stop: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
