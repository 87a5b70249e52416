// A loopback HTTPS proxy in front of Pebble that can lose answers on purpose (issue 20): the
// request reaches Pebble and takes effect there, but its response is dropped (the client's socket
// is destroyed) or held back until released. It also records every ACME request, decodes the
// identifiers of each newOrder, and can be pointed at another Pebble while running, which is how
// the tests "restart" the CA behind the same directory URL.
//
// Pebble builds every URL it hands out from the request's Host header, so forwarding the Host
// unchanged makes the directory, Location and Link headers all point back at the proxy.
//
// Issue 16: Debian's Pebble 2.4 has neither ARI nor profiles, so the proxy can add them. The
// directory gains `renewalInfo` (RFC 9773 §3) and `meta.profiles` (draft-aaron-acme-profiles §3);
// GET /renewal-info/{certID} answers the window the test sets (RFC 9773 §4.2: suggestedWindow,
// explanationURL, Retry-After); and a matching request can be answered with a problem document
// instead of being forwarded: 409 alreadyReplaced (RFC 9773 §5), 400 invalidProfile (profiles
// draft §4), 429 rateLimited with Retry-After (RFC 8555 §6.6). Everything else is forwarded
// unchanged; Pebble ignores the newOrder fields it does not know (replaces, profile).
import https from 'node:https';
import fs from 'node:fs';
import { makeTempDir, removeTempDir } from './processes.ts';
import { makeListenerCert } from './tls.ts';

export interface ProxiedRequest {
  method: string;
  path: string;
  /** the JWS payload, decoded; '' for POST-as-GET, undefined for GET/HEAD or a body that is not JWS */
  payload?: string;
}

export interface ProxiedExchange extends ProxiedRequest {
  status: number;
  location?: string;
  body: string;
  /** what happened to the answer on its way back */
  fate: 'delivered' | 'dropped' | 'held';
}

export interface FaultMatch {
  method?: string;
  path: RegExp;
  /** only requests with a non-empty JWS payload (a state-changing POST rather than a POST-as-GET) */
  withPayload?: boolean;
  /** the Nth matching request (1-based); default the first */
  nth?: number;
}

export interface Fault {
  /** resolves with the exchange once its answer has been dropped or held */
  readonly hit: Promise<ProxiedExchange>;
  /** for 'hold': lets the answer go (if the client is still there); for 'drop': nothing */
  release(): void;
}

/** What GET /renewal-info/{certID} answers; undefined: 404 (the CA does not know the certificate). */
export interface RenewalInfoAnswer {
  status?: number;
  suggestedWindow?: { start: string; end: string };
  explanationURL?: string;
  /** seconds */
  retryAfter?: number;
}

export interface ProblemAnswer {
  status: number;
  /** short type, e.g. alreadyReplaced, or a whole URI such as about:blank (what Pebble sends with a 404) */
  type: string;
  detail: string;
  /** seconds */
  retryAfter?: number;
}

export interface FaultProxy {
  directoryUrl: string;
  /** the CA that signs the proxy's listener: the ACME issuer's caBundle */
  caPem: string;
  exchanges: ProxiedExchange[];
  /** every newOrder's identifiers, one entry per newOrder that reached the CA */
  newOrders: { identifiers: string[]; location?: string; fate: ProxiedExchange['fate'] }[];
  /** answers Pebble with the response to a matching request lost: the request still takes effect */
  drop(match: FaultMatch): Fault;
  hold(match: FaultMatch): Fault;
  /** calls fn for each exchange as its answer is delivered (before the client sees it) */
  onExchange(fn: (x: ProxiedExchange) => void): void;
  /** points the proxy at another upstream (a restarted Pebble) */
  setUpstream(origin: string, caPem: string): void;
  /** ARI: the answer for each certID asked about (issue 16); enables renewalInfo in the directory */
  setRenewalInfo(fn: ((certID: string) => RenewalInfoAnswer | undefined) | undefined): void;
  /** profiles offered in the directory's meta.profiles; undefined: none */
  setProfiles(profiles: Record<string, string> | undefined): void;
  /** answers the next matching request with a problem document instead of forwarding it */
  answer(match: FaultMatch, problem: ProblemAnswer): Fault;
  /** forwards the next matching request and hands its answer's body through fn (a CA state the test cannot make Pebble reach) */
  rewrite(match: FaultMatch, fn: (body: string) => string): Fault;
  stop(): Promise<void>;
}

interface Rule {
  match: FaultMatch;
  action: 'drop' | 'hold';
  seen: number;
  done: boolean;
  resolve: (x: ProxiedExchange) => void;
  release?: () => void;
  released: boolean;
}

function jwsPayload(body: string): string | undefined {
  try {
    const jws = JSON.parse(body) as { payload?: unknown };
    return typeof jws.payload === 'string' ? Buffer.from(jws.payload, 'base64url').toString('utf8') : undefined;
  } catch {
    return undefined;
  }
}

function matches(m: FaultMatch, r: ProxiedRequest): boolean {
  if (m.method && m.method !== r.method) return false;
  if (!m.path.test(r.path)) return false;
  if (m.withPayload && !r.payload) return false;
  return true;
}

export async function startFaultProxy(opts: { upstream: string; upstreamCaPem: string }): Promise<FaultProxy> {
  const dir = await makeTempDir('fault-proxy');
  const tls = await makeListenerCert(dir);
  let upstream = new URL(opts.upstream).origin;
  let upstreamAgent = new https.Agent({ ca: opts.upstreamCaPem, keepAlive: true });
  const rules: Rule[] = [];
  const listeners: ((x: ProxiedExchange) => void)[] = [];
  const exchanges: ProxiedExchange[] = [];
  const newOrders: FaultProxy['newOrders'] = [];
  const heldSockets = new Set<import('node:net').Socket>();
  let renewalInfo: ((certID: string) => RenewalInfoAnswer | undefined) | undefined;
  let profiles: Record<string, string> | undefined;
  const answers: { match: FaultMatch; problem: ProblemAnswer; seen: number; done: boolean; resolve: (x: ProxiedExchange) => void }[] = [];
  const rewrites: { match: FaultMatch; fn: (body: string) => string; seen: number; done: boolean; resolve: (x: ProxiedExchange) => void }[] = [];
  let portValue = 0;

  const server = https.createServer({ cert: fs.readFileSync(tls.certPath), key: fs.readFileSync(tls.keyPath) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const request: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', ...(req.method === 'POST' ? { payload: jwsPayload(body) } : {}) };
      const ri = /^\/renewal-info\/([^/?]+)$/.exec(request.path);
      if (ri && renewalInfo && request.method === 'GET') {
        const a = renewalInfo(ri[1]);
        const status = a ? a.status ?? 200 : 404;
        const body = status === 200 && a?.suggestedWindow
          ? JSON.stringify({ suggestedWindow: a.suggestedWindow, ...(a.explanationURL ? { explanationURL: a.explanationURL } : {}) })
          : JSON.stringify({ type: 'urn:ietf:params:acme:error:malformed', detail: status === 404 ? 'unknown certificate' : 'renewal information unavailable', status });
        exchanges.push({ ...request, status, body, fate: 'delivered' });
        res.writeHead(status, { 'content-type': status === 200 ? 'application/json' : 'application/problem+json', ...(a?.retryAfter !== undefined ? { 'retry-after': String(a.retryAfter) } : {}) });
        res.end(body);
        return;
      }
      const canned = answers.find((r) => !r.done && matches(r.match, request) && ++r.seen >= (r.match.nth ?? 1));
      if (canned) {
        canned.done = true;
        const p = canned.problem;
        const body = JSON.stringify({ type: p.type.includes(':') ? p.type : `urn:ietf:params:acme:error:${p.type}`, detail: p.detail, status: p.status });
        const x: ProxiedExchange = { ...request, status: p.status, body, fate: 'delivered' };
        exchanges.push(x);
        canned.resolve(x);
        res.writeHead(p.status, { 'content-type': 'application/problem+json', ...(p.retryAfter !== undefined ? { 'retry-after': String(p.retryAfter) } : {}) });
        res.end(body);
        return;
      }
      const rule = rules.find((r) => !r.done && matches(r.match, request) && ++r.seen >= (r.match.nth ?? 1));
      if (rule) rule.done = true;
      const rewrite = rewrites.find((r) => !r.done && matches(r.match, request) && ++r.seen >= (r.match.nth ?? 1));
      if (rewrite) rewrite.done = true;
      const up = https.request(`${upstream}${request.path}`, { method: request.method, headers: req.headers, agent: upstreamAgent }, (upRes) => {
        const upChunks: Buffer[] = [];
        upRes.on('data', (d: Buffer) => upChunks.push(d));
        upRes.on('end', () => {
          let upBody = Buffer.concat(upChunks);
          if (request.method === 'GET' && request.path === '/dir' && upRes.statusCode === 200 && (renewalInfo || profiles)) {
            const dirDoc = JSON.parse(upBody.toString('utf8')) as { meta?: Record<string, unknown>; renewalInfo?: string };
            if (renewalInfo) dirDoc.renewalInfo = `https://127.0.0.1:${portValue}/renewal-info`;
            if (profiles) dirDoc.meta = { ...(dirDoc.meta ?? {}), profiles };
            upBody = Buffer.from(JSON.stringify(dirDoc));
            delete upRes.headers['content-length'];
          }
          if (rewrite) {
            upBody = Buffer.from(rewrite.fn(upBody.toString('utf8')));
            delete upRes.headers['content-length'];
          }
          const x: ProxiedExchange = {
            ...request, status: upRes.statusCode ?? 0, body: upBody.toString('utf8'),
            ...(typeof upRes.headers.location === 'string' ? { location: upRes.headers.location } : {}),
            fate: rule ? (rule.action === 'drop' ? 'dropped' : 'held') : 'delivered',
          };
          exchanges.push(x);
          rewrite?.resolve(x);
          if (/\/order-plz$/.test(request.path) && request.method === 'POST' && x.status === 201) {
            let identifiers: string[] = [];
            try {
              identifiers = (JSON.parse(request.payload ?? '{}') as { identifiers?: { value: string }[] }).identifiers?.map((i) => i.value) ?? [];
            } catch {}
            newOrders.push({ identifiers, location: x.location, fate: x.fate });
          }
          const deliver = () => {
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            res.end(upBody);
          };
          if (rule?.action === 'drop') {
            req.socket.destroy();
            rule.resolve(x);
            return;
          }
          if (rule?.action === 'hold') {
            heldSockets.add(req.socket);
            rule.release = () => {
              heldSockets.delete(req.socket);
              if (!req.socket.destroyed) deliver();
            };
            if (rule.released) rule.release();
            rule.resolve(x);
            return;
          }
          for (const fn of listeners) fn(x);
          deliver();
        });
      });
      up.on('error', (e) => {
        // the upstream is down (a Pebble being restarted): the client sees what it would see without the proxy
        exchanges.push({ ...request, status: 0, body: e.message, fate: 'dropped' });
        req.socket.destroy();
      });
      up.end(body);
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as import('node:net').AddressInfo).port;
  portValue = port;

  function addRule(match: FaultMatch, action: 'drop' | 'hold'): Fault {
    let resolve!: (x: ProxiedExchange) => void;
    const hit = new Promise<ProxiedExchange>((r) => (resolve = r));
    const rule: Rule = { match, action, seen: 0, done: false, resolve, released: false };
    rules.push(rule);
    return {
      hit,
      release() {
        rule.released = true;
        rule.release?.();
      },
    };
  }

  return {
    directoryUrl: `https://127.0.0.1:${port}/dir`,
    caPem: tls.caPem,
    exchanges,
    newOrders,
    drop: (m) => addRule(m, 'drop'),
    hold: (m) => addRule(m, 'hold'),
    onExchange: (fn) => void listeners.push(fn),
    setRenewalInfo: (fn) => void (renewalInfo = fn),
    setProfiles: (p) => void (profiles = p),
    answer(match, problem) {
      let resolve!: (x: ProxiedExchange) => void;
      const hit = new Promise<ProxiedExchange>((r) => (resolve = r));
      answers.push({ match, problem, seen: 0, done: false, resolve });
      return { hit, release() {} };
    },
    rewrite(match, fn) {
      let resolve!: (x: ProxiedExchange) => void;
      const hit = new Promise<ProxiedExchange>((r) => (resolve = r));
      rewrites.push({ match, fn, seen: 0, done: false, resolve });
      return { hit, release() {} };
    },
    setUpstream(origin, caPem) {
      upstream = new URL(origin).origin;
      upstreamAgent.destroy();
      upstreamAgent = new https.Agent({ ca: caPem, keepAlive: true });
    },
    async stop() {
      for (const s of heldSockets) s.destroy();
      upstreamAgent.destroy();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      await removeTempDir(dir);
    },
  };
}

/** newOrders per certificate name (its first identifier) and the mean, as the issue asks the tests to print. */
export function newOrdersPerName(proxy: FaultProxy, names: string[]): { perName: Record<string, number>; mean: number } {
  const perName: Record<string, number> = {};
  for (const n of names) perName[n] = 0;
  for (const o of proxy.newOrders) for (const id of o.identifiers) if (id in perName) perName[id]++;
  const mean = names.length ? Object.values(perName).reduce((a, b) => a + b, 0) / names.length : 0;
  return { perName, mean };
}
