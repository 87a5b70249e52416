// A fake HTTP-01 keeper for tests: it listens on the keeper's control socket for host:port (so
// startHTTP01Keeper adopts it instead of spawning one), records what each connection was told,
// acknowledges it, and drops connections or dies exactly when the test says.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { keeperSocketPath, privateKeeperDir } from '../http01-keeper.ts';

export interface KeeperMsg { op: string; token?: string; keyAuth?: string; id?: number }

export interface FakeKeeper {
  conns: { msgs: KeeperMsg[]; sock: net.Socket }[];
  /** every message acknowledged, on any connection */
  acked: KeeperMsg[];
  /** what connection n was told, as "op token" */
  told(n: number): string[];
  /** the keeper process is gone: its socket and every connection */
  die(): Promise<void>;
}

/** `drop` says which message closes its connection instead of being acknowledged. */
export async function fakeKeeper(port: number, drop: (conn: number, msg: KeeperMsg) => boolean = () => false, host = '127.0.0.1'): Promise<FakeKeeper> {
  const socketPath = keeperSocketPath(host, port);
  privateKeeperDir(path.dirname(socketPath));
  fs.rmSync(socketPath, { force: true });
  const conns: FakeKeeper['conns'] = [];
  const acked: KeeperMsg[] = [];
  const server = net.createServer((sock) => {
    const me = { msgs: [] as KeeperMsg[], sock };
    const n = conns.push(me) - 1;
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('error', () => {});
    sock.on('data', (d: string) => {
      buf += d;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const msg = JSON.parse(buf.slice(0, i)) as KeeperMsg;
        buf = buf.slice(i + 1);
        me.msgs.push(msg);
        if (drop(n, msg)) {
          sock.destroy();
          return;
        }
        acked.push(msg);
        if (msg.id !== undefined) sock.write(`${JSON.stringify({ id: msg.id })}\n`);
      }
    });
  });
  await new Promise<void>((r) => server.listen(socketPath, () => r()));
  return {
    conns, acked,
    told: (n) => (conns[n]?.msgs ?? []).map((m) => `${m.op}${m.token ? ` ${m.token}` : ''}`),
    async die() {
      for (const c of conns) c.sock.destroy();
      await new Promise((r) => server.close(r));
      fs.rmSync(socketPath, { force: true });
    },
  };
}
