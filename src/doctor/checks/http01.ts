// HTTP-01 reachability: what answers http://<name>/.well-known/acme-challenge/<token> when
// fetched from where the server runs, the way the CA fetches it.
import type { Finding } from '../finding.ts';

export type HTTPOutcome =
  /** the connection failed: ECONNREFUSED (nothing listens), ETIMEDOUT, EHOSTUNREACH... */
  | { kind: 'failed'; address: string; port: number; code: string }
  | { kind: 'answered'; address: string; port: number; status: number; server?: string; location?: string; body: string };

export interface HTTP01Probe {
  name: string;
  url: string;
  outcome: HTTPOutcome;
  /** the key authorization a pending challenge expects; absent for a made-up probe token */
  expected?: string;
}

function who(o: Extract<HTTPOutcome, { kind: 'answered' }>): string {
  return `${o.address}:${o.port}${o.server ? ` (Server: ${o.server})` : ''}`;
}

function snippet(body: string): string {
  const b = body.trim().replace(/\s+/g, ' ');
  if (!b) return 'an empty body';
  return JSON.stringify(b.length > 60 ? `${b.slice(0, 60)}...` : b);
}

export function checkHTTP01(p: HTTP01Probe): Finding {
  const o = p.outcome;
  if (o.kind === 'failed') {
    const what = o.code === 'ECONNREFUSED' ? `nothing listens on ${o.address}:${o.port} (connection refused)`
      : o.code === 'ETIMEDOUT' || o.code === 'ETIMEOUT' ? `${o.address}:${o.port} did not answer in time (${o.code})`
      : `the connection to ${o.address}:${o.port} failed (${o.code})`;
    if (p.expected === undefined && o.code === 'ECONNREFUSED') {
      // certsmith binds its responder on the first HTTP-01 challenge: with none pending, a refusal
      // only blocks if what the CA reaches is not this server (NAT, proxy, another host)
      return {
        check: 'http-01', severity: 'warning',
        sentence: `Nothing listens on ${o.address}:${o.port} for ${p.url} yet (connection refused); certsmith starts its HTTP-01 responder with the first challenge, so this blocks issuance only if that address does not lead to this server.`,
        fix: `Make port ${o.port} of ${p.name} reach this server's --acme-http01-listen address (forward it through NAT, a firewall or a load balancer), then run doctor again while a challenge is pending.`,
      };
    }
    return {
      check: 'http-01', severity: 'error',
      sentence: `The CA cannot fetch ${p.url}: ${what}.`,
      fix: `Run certsmith's HTTP-01 responder where ${p.name} points (--acme-http01-listen), or forward port ${o.port} there: a firewall, NAT or load balancer in front of this host must pass /.well-known/acme-challenge/ through.`,
    };
  }
  if (p.expected !== undefined) {
    if (o.status === 200 && o.body.trim() === p.expected) {
      return { check: 'http-01', severity: 'ok', sentence: `${p.url} serves the pending challenge's key authorization (answered by ${who(o)}).` };
    }
    return {
      check: 'http-01', severity: 'error',
      sentence: `${p.url} answered HTTP ${o.status} with ${snippet(o.body)} from ${who(o)} instead of the pending challenge's key authorization.`,
      fix: `Requests for ${p.name} reach a server that is not certsmith's responder: route /.well-known/acme-challenge/ for ${p.name} to it (--acme-http01-listen), or use --acme-http01-webroot with the web server that answers.`,
    };
  }
  if (o.status >= 300 && o.status < 400) {
    return { check: 'http-01', severity: 'info', sentence: `${p.url} redirects (HTTP ${o.status}) to ${o.location ?? 'nowhere'} from ${who(o)}; the CA follows redirects to ports 80 and 443 only.` };
  }
  if (o.status === 404) {
    return { check: 'http-01', severity: 'ok', sentence: `${p.url} reaches an HTTP server at ${who(o)}, which answered 404 to a token that does not exist, as certsmith's responder does.` };
  }
  return {
    check: 'http-01', severity: 'warning',
    sentence: `${p.url} answered HTTP ${o.status} with ${snippet(o.body)} from ${who(o)} to a token that does not exist; certsmith's responder answers 404.`,
    fix: `Something other than certsmith's responder answers for ${p.name}: make /.well-known/acme-challenge/ reach it (--acme-http01-listen or --acme-http01-webroot).`,
  };
}
