import net from 'node:net';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';

function tcpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function udpFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = dgram.createSocket('udp4');
    sock.once('error', () => resolve(false));
    sock.bind(port, '127.0.0.1', () => sock.close(() => resolve(true)));
  });
}

/**
 * The ports tests hand out lie below the kernel's ephemeral range. A port taken from that range
 * (listen on 0) can be picked by the kernel a moment later as the local end of some outgoing
 * connection, and the test that re-binds it (a server restarted on its own port) then fails with
 * EADDRINUSE; CI saw exactly that. Below the range only another explicit bind can take it.
 */
const range = ((): [number, number] => {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch { /* not Linux: keep the IANA default */ }
  return ephemeralLow > 12000 ? [10000, ephemeralLow - 1] : [1024, ephemeralLow - 1];
})();
const handedOut = new Set<number>();

/**
 * A port on 127.0.0.1 that is free for TCP and, when asked, for UDP too (DNS servers bind both).
 * The port is released before returning; another process binding the same port in between is
 * possible but unlikely (random choice over some 20,000 ports, never the same one twice here).
 */
export async function freePort(opts: { udp?: boolean } = {}): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = range[0] + Math.floor(Math.random() * (range[1] - range[0] + 1));
    if (handedOut.has(port)) continue;
    if ((await tcpFree(port)) && (!opts.udp || (await udpFree(port)))) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port found on 127.0.0.1 in ${range[0]}-${range[1]}`);
}
