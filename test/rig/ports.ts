import net from 'node:net';
import dgram from 'node:dgram';

function tcpPort(port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const addr = server.address() as net.AddressInfo;
      server.close(() => resolve(addr.port));
    });
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
 * A port on 127.0.0.1 that is free for TCP and, when asked, for UDP too (DNS servers bind both).
 * The port is released before returning, so a race with another process is possible but rare.
 */
export async function freePort(opts: { udp?: boolean } = {}): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await tcpPort();
    if (!opts.udp || (await udpFree(port))) return port;
  }
  throw new Error('no free port found on 127.0.0.1');
}
