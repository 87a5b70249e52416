// The cap on connections to the TCP listener. Refusing the newcomer when it was full let anyone
// who could connect (no token needed) lock every client out: 1,024 TLS connections that sent
// nothing filled it and kubectl was reset for as long as they stayed. A full cap now closes the
// oldest connection with no request in flight (one still in its handshake, one that never sent a
// request, one idle between requests) to admit the newcomer; the newcomer is refused only when
// every connection is serving a request (a watch, a list being read).
import type http from 'node:http';
import type net from 'node:net';
import type { Logger } from 'pino';

/** how often a full cap is logged at most; the shed connections are counted in between */
const logIntervalMs = 60_000;

interface Connection {
  socket: net.Socket;
  /** requests whose response is still out */
  requests: number;
}

export class ConnectionCap {
  /** oldest first (a Map keeps insertion order), by remote address and port: a TLS socket has its TCP socket's */
  private readonly open = new Map<string, Connection>();
  private shed = 0;
  private refused = 0;
  private lastLog = -Infinity;

  constructor(
    private readonly cap: number,
    private readonly log?: Pick<Logger, 'warn'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** a TCP connection the listener accepted */
  admit(socket: net.Socket): void {
    if (this.open.size >= this.cap && !this.shedOne()) {
      this.refused++;
      this.report();
      socket.destroy();
      return;
    }
    const key = keyOf(socket);
    const conn: Connection = { socket, requests: 0 };
    this.open.set(key, conn);
    socket.once('close', () => {
      if (this.open.get(key) === conn) this.open.delete(key);
    });
  }

  /** a request came on one of the connections: it is not shed until its response is over */
  requestStarted(req: http.IncomingMessage, res: http.ServerResponse): void {
    // the Unix socket's connections are not capped
    if (req.socket.remotePort === undefined) return;
    const conn = this.open.get(keyOf(req.socket));
    if (!conn) return;
    conn.requests++;
    res.once('close', () => conn.requests--);
  }

  private shedOne(): boolean {
    for (const [key, conn] of this.open) {
      if (conn.requests > 0) continue;
      this.open.delete(key);
      conn.socket.destroy();
      this.shed++;
      this.report();
      return true;
    }
    return false;
  }

  private report(): void {
    const now = this.now();
    if (now - this.lastLog < logIntervalMs) return;
    this.lastLog = now;
    this.log?.warn({ maxConnections: this.cap, shed: this.shed, refused: this.refused },
      'API connection cap reached: closed the oldest connections with no request in flight to admit new ones (counts since the last such message); many idle connections from one client, or a flood');
    this.shed = 0;
    this.refused = 0;
  }
}

function keyOf(socket: net.Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}
