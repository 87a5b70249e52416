// certsmith acmesolver: the process inside the Kubernetes-mode HTTP-01 solver Pod, with
// cert-manager's acmesolver flags. It answers one token for one domain and nothing else.
import http from 'node:http';
import type net from 'node:net';
import type { Command } from 'commander';
import { CliError } from './cli-error.ts';
import type { Logger } from '../runtime/logger.ts';
import { listenForStop } from './signals.ts';

export interface AcmeSolverOptions {
  /** '' (or omitted) for every interface, as the Pod needs */
  host?: string;
  port: number;
  domain: string;
  token: string;
  key: string;
  logger: Logger;
}

export interface RunningAcmeSolver {
  port: number;
  close(): Promise<void>;
}

const CHALLENGE_BASE = '/.well-known/acme-challenge';

/** The host part of a Host header: "a.example:80" → "a.example", "[::1]:80" → "::1". */
export function hostWithoutPort(header: string | undefined): string {
  const h = header ?? '';
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(h);
  if (bracketed) return bracketed[1];
  const i = h.lastIndexOf(':');
  return i >= 0 && h.indexOf(':') === i ? h.slice(0, i) : h;
}

/**
 * cert-manager's acmesolver: 200 on / and /healthz (its probes), the key for GET of the token path
 * when the Host is the domain (port ignored), 404 for everything else. One log line per request.
 */
export function startAcmeSolver(o: AcmeSolverOptions): Promise<RunningAcmeSolver> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const host = hostWithoutPort(req.headers.host);
    const slash = path.lastIndexOf('/');
    const [base, token] = [path.slice(0, slash), path.slice(slash + 1)];
    let outcome: string;
    let health = false;
    let answer = false;
    if (path === '/' || path === '/healthz') {
      health = true;
      outcome = 'health check';
    } else if (base !== CHALLENGE_BASE) outcome = 'not a challenge path';
    // DNS names are case-insensitive; cert-manager compares exactly, which only ever refuses more
    else if (host.toLowerCase() !== o.domain.toLowerCase()) outcome = `host is not ${o.domain}`;
    else if (token !== o.token) outcome = 'unknown token';
    else if (req.method !== 'GET' && req.method !== 'HEAD') outcome = 'method not allowed';
    else {
      answer = true;
      outcome = 'challenge answered';
    }
    const status = health || answer ? 200 : 404;
    o.logger.info({ method: req.method, host, path, status, remote: req.socket.remoteAddress }, outcome);
    if (answer) {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(o.key) });
      res.end(req.method === 'HEAD' ? undefined : o.key);
    } else {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(health ? 'ok\n' : '404 page not found\n');
    }
  });
  // as cert-manager's ReadHeaderTimeout: a client that never finishes its headers does not hold a socket
  server.headersTimeout = 5000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host || undefined, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () => new Promise<void>((r) => {
          server.close(() => r());
          server.closeIdleConnections();
        }),
      });
    });
  });
}

interface AcmeSolverFlags {
  listenPort: string;
  listenHost: string;
  domain?: string;
  token?: string;
  key?: string;
}

export function registerAcmeSolverCommand(program: Command) {
  program
    .command('acmesolver')
    .description('serve one HTTP-01 token (the process of a Kubernetes-mode solver Pod, as cert-manager\'s acmesolver)')
    .option('--listen-port <port>', 'the port number to listen on for connections', '8089')
    .option('--listen-host <host>', 'the address to listen on (default: every interface)', '')
    .option('--domain <name>', 'the domain name to verify')
    .option('--token <token>', 'the challenge token to verify against')
    .option('--key <key>', 'the challenge key to respond with')
    .action(async (flags: AcmeSolverFlags) => {
      const stop = listenForStop();
      const port = Number(flags.listenPort);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--listen-port "${flags.listenPort}": expected a port number`);
      for (const f of ['domain', 'token', 'key'] as const) if (!flags[f]) throw new CliError(`--${f} is required`);
      // the solver's one line per request is its whole purpose: not silenced like the controllers under test
      // pino is loaded by this command only: every other command would pay for it at start
      const { createLogger, logLevelFromEnv } = await import('../runtime/logger.ts');
      const logger = createLogger({ name: 'acmesolver', level: logLevelFromEnv() ?? 'info' });
      let solver: RunningAcmeSolver;
      try {
        solver = await startAcmeSolver({ host: flags.listenHost, port, domain: flags.domain!, token: flags.token!, key: flags.key!, logger });
      } catch (e) {
        throw new CliError(`cannot listen on ${flags.listenHost || '*'}:${port}: ${(e as Error).message}`);
      }
      logger.info({ port: solver.port, domain: flags.domain, token: flags.token }, 'acmesolver listening');
      await stop.until(logger);
      await solver.close();
    });
}
