// The real `certsmith server` against Pebble behind the fault proxy, for tests that SIGKILL it
// (issue 20): start and restart on one data dir, a ClusterIssuer plus Certificates, and the
// figures the issue asks for (newOrders per certificate, orders left invalid at the CA).
import assert from 'node:assert/strict';
import { AcmeClient } from '../../src/acme/client.ts';
import { startServer, type RunningServer } from '../e2e/harness.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { newOrdersPerName, startFaultProxy, type FaultProxy } from '../rig/fault-proxy.ts';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keeperSocketPath } from '../../src/controllers/acme/solvers/http01-keeper.ts';

export interface Target {
  cts: ChallTestSrv;
  /** where Pebble's VA sends HTTP-01: certsmith's embedded responder */
  httpPort: number;
}

interface Obj {
  metadata: { name: string; namespace?: string; annotations?: Record<string, string>; ownerReferences?: { kind: string; name: string }[] };
  spec?: Record<string, unknown>;
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[]; issuanceAttempts?: number; failedIssuanceAttempts?: number; lastFailureTime?: string; acme?: { uri?: string } };
  data?: Record<string, string>;
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  count?: number;
  lastTimestamp?: string;
  type?: string;
}

const envOf = new WeakMap<RunningServer, NodeJS.ProcessEnv>();
/** One server on a data dir: when it was up (compare a Challenge's accepted-at) and what it printed. */
interface Incarnation { readyAt: string; killedAt?: string; output: () => string }
/** The servers on this one's data dir, oldest first, this one last: a failure says which server accepted what. */
const incarnations = new WeakMap<RunningServer, Incarnation[]>();

/** env: e.g. CERTSMITH_HTTP01_KEEPER=0 for the in-process responder that dies with the server */
export async function startCertsmith(t: Target, dataDir: string, env: NodeJS.ProcessEnv = {}): Promise<RunningServer> {
  const s = await startServer({
    dataDir, env,
    args: ['--acme-http01-listen', `127.0.0.1:${t.httpPort}`, '--acme-http01-self-check-port', String(t.httpPort), '--acme-http01-solver-nameservers', t.cts.dnsServer],
  });
  envOf.set(s, env);
  incarnations.set(s, [{ readyAt: new Date().toISOString(), output: () => s.output() }]);
  return s;
}

/** SIGKILL, wait for the exit, start again on the same data dir (and environment). */
export async function killAndRestart(t: Target, s: RunningServer): Promise<RunningServer> {
  const killedAt = new Date().toISOString();
  s.kill();
  await s.stop();
  const next = await startCertsmith(t, s.dataDir, envOf.get(s));
  const out = s.output();
  const before = (incarnations.get(s) ?? []).map((x, i, all) => (i === all.length - 1 ? { ...x, killedAt, output: () => out } : x));
  incarnations.set(next, [...before, ...(incarnations.get(next) ?? [])]);
  return next;
}

/**
 * Ends the HTTP-01 keeper a SIGKILLed server left behind (it would otherwise serve for its grace
 * period after the test): the tests stop what they start.
 */
export async function stopKeeper(t: Target): Promise<void> {
  await new Promise<void>((resolve) => {
    const sock = net.connect(keeperSocketPath('127.0.0.1', t.httpPort));
    sock.once('connect', () => sock.end(`${JSON.stringify({ op: 'exit' })}\n`));
    sock.once('close', () => resolve());
    sock.once('error', () => resolve());
  });
}

/** challtestsrv, Pebble behind the fault proxy, and one certsmith server on a data dir of its own. */
export interface ProxiedRig {
  target: Target;
  pebble: Pebble;
  proxy: FaultProxy;
  server: RunningServer;
  /** stops all of it, the keeper too, and removes the data dir */
  stop(): Promise<void>;
}

/** What the single-server tests behind the fault proxy share; `prepare` sets the proxy up before certsmith starts. */
export async function startProxiedRig(name: string, prepare?: (proxy: FaultProxy) => void): Promise<ProxiedRig> {
  const dir = mkdtempSync(join(tmpdir(), `certsmith-${name}-`));
  let cts: ChallTestSrv | undefined;
  let pebble: Pebble | undefined;
  let proxy: FaultProxy | undefined;
  let target: Target | undefined;
  let server: RunningServer | undefined;
  const stop = async () => {
    await server?.stop();
    if (target) await stopKeeper(target);
    await proxy?.stop();
    await Promise.all([pebble?.stop(), cts?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    cts = await startChallTestSrv();
    target = { cts, httpPort: await freePort() };
    pebble = await startPebble({ dnsServer: cts.dnsServer, httpPort: target.httpPort });
    proxy = await startFaultProxy({ upstream: pebble.directoryUrl, upstreamCaPem: pebble.caPem });
    prepare?.(proxy);
    server = await startCertsmith(target, dir);
    return { target, pebble, proxy, server, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

export function manifest(issuer: string, proxy: FaultProxy, certs: { name: string; dnsName: string }[]): string {
  const docs = [
    `apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata: { name: ${issuer} }\nspec:\n  acme:\n    server: ${proxy.directoryUrl}\n    caBundle: ${b64(proxy.caPem)}\n    privateKeySecretRef: { name: ${issuer}-account }\n    solvers: [ { http01: { ingress: {} } } ]`,
  ];
  for (const c of certs) {
    docs.push(`apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: { name: ${c.name}, namespace: default }\nspec: { secretName: ${c.name}-tls, dnsNames: [${c.dnsName}], privateKey: { algorithm: ECDSA }, issuerRef: { name: ${issuer}, kind: ClusterIssuer } }`);
  }
  return docs.join('\n---\n');
}

export async function apply(s: RunningServer, yaml: string): Promise<void> {
  const r = await s.cli(['apply', '-f', '-'], { input: yaml });
  assert.equal(r.code, 0, r.stderr);
}

async function getJson<T>(s: RunningServer, args: string[]): Promise<T> {
  const r = await s.cli(['get', ...args, '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as T;
}

export const isReady = (o: Obj) => !!o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

export async function certificates(s: RunningServer, names: string[]): Promise<Obj[]> {
  const all = (await getJson<{ items: Obj[] }>(s, ['certificates', '-n', 'default'])).items;
  return all.filter((c) => names.includes(c.metadata.name));
}

/** Waits (real time, polling) until every named Certificate is Ready; fails with the ones that are not and what they are waiting for. */
export async function waitAllReady(s: RunningServer, names: string[], timeoutMs: number): Promise<Obj[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const certs = await certificates(s, names);
    if (certs.length === names.length && certs.every(isReady)) return certs;
    if (Date.now() > deadline) {
      const notReady = names.filter((n) => !certs.some((c) => c.metadata.name === n && isReady(c)));
      assert.fail(`not Ready after ${timeoutMs} ms: ${notReady.join(', ')}\n${await diagnose(s, notReady, certs)}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

const tail = (text: string, chars: number) => (text.length > chars ? `...${text.slice(-chars)}` : text);

/** Whether an object belongs to the named Certificate: its requests are `<name>-<n>`, their Orders and those Orders' Challenges carry the name on. */
const belongsTo = (cert: string, o: Obj) => o.metadata.name === cert || o.metadata.name.startsWith(`${cert}-`);

/**
 * What a failure needs to say which server accepted what: each not-Ready Certificate with its
 * requests, Orders and Challenges (annotations included: accepted-by, accepted-at, failure cause)
 * and Events, then the output tail of the last server and of the ones killed before it.
 */
export async function diagnose(s: RunningServer, notReady: string[], certs: Obj[]): Promise<string> {
  const list = async (args: string[]) => {
    try {
      return (await getJson<{ items: Obj[] }>(s, args)).items;
    } catch (e) {
      return [{ metadata: { name: `(could not list ${args.join(' ')}: ${(e as Error).message})` } }];
    }
  };
  const [requests, orders, challenges, evs] = await Promise.all([
    list(['certificaterequests', '-n', 'default']), list(['orders', '-n', 'default']), list(['challenges', '-n', 'default']), list(['events', '-A']),
  ]);
  // an Order's CSR says nothing here; the rest of the spec (URLs, token, DNS name) does
  const brief = (o: Obj) => ({ name: o.metadata.name, annotations: o.metadata.annotations, spec: o.spec && { ...o.spec, request: undefined }, status: o.status });
  const event = (e: Obj) => `${e.lastTimestamp ?? ''} ${e.type ?? ''} ${e.involvedObject?.kind}/${e.involvedObject?.name} ${e.reason}${(e.count ?? 1) > 1 ? ` x${e.count}` : ''}: ${e.message}`;
  const parts: string[] = [];
  for (const name of notReady.slice(0, 5)) {
    const cert = certs.find((c) => c.metadata.name === name);
    parts.push([
      `== Certificate ${name}: ${JSON.stringify(cert?.status ?? 'missing')}`,
      `-- CertificateRequests: ${JSON.stringify(requests.filter((o) => belongsTo(name, o)).map((o) => ({ name: o.metadata.name, annotations: o.metadata.annotations, status: o.status })))}`,
      `-- Orders: ${JSON.stringify(orders.filter((o) => belongsTo(name, o)).map(brief))}`,
      `-- Challenges: ${JSON.stringify(challenges.filter((o) => belongsTo(name, o)).map(brief))}`,
      `-- Events:\n${evs.filter((e) => e.involvedObject?.name !== undefined && belongsTo(name, { metadata: { name: e.involvedObject.name } })).map(event).join('\n')}`,
    ].join('\n'));
  }
  if (notReady.length > 5) parts.push(`(and ${notReady.length - 5} more not Ready: ${notReady.slice(5).join(', ')})`);
  const issuerEvents = evs.filter((e) => /Issuer$/.test(e.involvedObject?.kind ?? '')).map(event);
  if (issuerEvents.length) parts.push(`== Issuer Events:\n${issuerEvents.slice(-20).join('\n')}`);
  const servers = incarnations.get(s) ?? [{ readyAt: '?', output: () => s.output() }];
  parts.push(`== servers on this data dir (a Challenge's accepted-at says which one accepted it): ${servers.map((x, i) => `${i + 1}: ready ${x.readyAt}${x.killedAt ? `, SIGKILL ${x.killedAt}` : ', running'}`).join('; ')}`);
  servers.forEach((x, i) => {
    const last = i === servers.length - 1;
    parts.push(`== output of ${last ? `the last server (${i + 1})` : `server ${i + 1} (killed)`}, last ${last ? 6000 : 2000} chars:\n${tail(x.output(), last ? 6000 : 2000)}`);
  });
  return parts.join('\n');
}

/** No certificate counted a failed issuance attempt or started a backoff (seed 000). */
export function assertNoAttemptCounted(certs: Obj[]): void {
  for (const c of certs) {
    assert.equal(c.status?.issuanceAttempts ?? c.status?.failedIssuanceAttempts ?? 0, 0, `${c.metadata.name}: issuance attempt counted`);
    assert.equal(c.status?.lastFailureTime, undefined, `${c.metadata.name}: in backoff`);
  }
}

export async function events(s: RunningServer): Promise<Obj[]> {
  return (await getJson<{ items: Obj[] }>(s, ['events', '-A'])).items;
}

/**
 * The state at the CA of every order the proxy saw created, asked with the issuer's own account
 * (orders of an account the CA has forgotten count as "gone").
 */
/** An ACME client for the issuer's account: its key from the Secret, its URL from the issuer's status. */
export async function accountClient(s: RunningServer, proxy: FaultProxy, issuer: string): Promise<AcmeClient> {
  const secret = await getJson<Obj>(s, ['secret', `${issuer}-account`, '-n', 'cert-manager']);
  const iss = await getJson<Obj>(s, ['clusterissuer', issuer]);
  return new AcmeClient({
    directoryUrl: proxy.directoryUrl, caPem: proxy.caPem, accountKeyPem: Buffer.from(secret.data!['tls.key'], 'base64').toString(),
    accountUrl: iss.status?.acme?.uri, maxBadNonceRetries: 20,
  });
}

export async function issuerStatus(s: RunningServer, issuer: string): Promise<Obj['status']> {
  return (await getJson<Obj>(s, ['clusterissuer', issuer])).status;
}

export async function ordersAtCA(s: RunningServer, proxy: FaultProxy, issuer: string, dnsNames: string[]): Promise<Record<string, number>> {
  const client = await accountClient(s, proxy, issuer);
  const out: Record<string, number> = {};
  try {
    for (const o of proxy.newOrders) {
      if (!o.location || !o.identifiers.some((i) => dnsNames.includes(i))) continue;
      const status = await client.getOrder(o.location).then((x) => x.status as string, () => 'gone');
      out[status] = (out[status] ?? 0) + 1;
    }
  } finally {
    client.close();
  }
  return out;
}

/** Prints the issue's figures and returns them. */
export async function report(label: string, s: RunningServer, proxy: FaultProxy, issuer: string, dnsNames: string[]): Promise<{ mean: number; perName: Record<string, number>; atCA: Record<string, number> }> {
  const { perName, mean } = newOrdersPerName(proxy, dnsNames);
  const atCA = await ordersAtCA(s, proxy, issuer, dnsNames);
  const hist: Record<number, number> = {};
  for (const n of Object.values(perName)) hist[n] = (hist[n] ?? 0) + 1;
  console.log(`[${label}] certificates=${dnsNames.length} newOrders/certificate=${mean.toFixed(2)} (histogram ${JSON.stringify(hist)}) orders at the CA by state=${JSON.stringify(atCA)} invalid=${atCA.invalid ?? 0}`);
  return { mean, perName, atCA };
}
