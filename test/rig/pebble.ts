import fs from 'node:fs';
import fsp from 'node:fs/promises';
import https from 'node:https';
import http from 'node:http';
import path from 'node:path';
import { freePort } from './ports.ts';
import { makeTempDir, removeTempDir, startProcess, waitUntilReady } from './processes.ts';
import { makeListenerCert } from './tls.ts';

export interface PebbleOptions {
  /** PEBBLE_WFE_NONCEREJECT: percentage of good nonces rejected. Pinned to 0 (Pebble's default is 5). */
  nonceReject?: number;
  /** PEBBLE_VA_NOSLEEP; default true so that validation takes milliseconds. */
  vaNoSleep?: boolean;
  /** PEBBLE_VA_SLEEPTIME: the longest random sleep (s) before each validation when vaNoSleep is false (Pebble's default 5). */
  vaSleepTime?: number;
  /** PEBBLE_AUTHZREUSE; pinned to 0 (Pebble's default is 50) so request counts are deterministic. */
  authzReuse?: number;
  /** key id → HMAC key (base64url); when given, newAccount requires external account binding. */
  eabKeys?: Record<string, string>;
  /** HOST:PORT of the DNS server Pebble's VA resolves through (always set: the system resolver is off loopback). */
  dnsServer: string;
  /** Port on 127.0.0.1 that Pebble's VA connects to for HTTP-01. */
  httpPort: number;
  /** PEBBLE_ALTERNATE_ROOTS: extra chains served as Link rel="alternate". */
  alternateRoots?: number;
  /** PEBBLE_CHAIN_LENGTH. */
  chainLength?: number;
  /** certificateValidityPeriod in seconds (Pebble's default: 5 years); 576000 = 160 h, Let's Encrypt's short-lived profile. */
  certificateValidityPeriod?: number;
}

export interface Pebble {
  directoryUrl: string;
  /** The rig CA that signs Pebble's HTTPS listeners (ACME and management), not the ACME issuing root. */
  caPem: string;
  managementUrl: string;
  /** The issuing root; Pebble generates new ones on every start. */
  rootPem(index?: number): Promise<string>;
  intermediatePem(index?: number): Promise<string>;
  /** ACME requests Pebble has handled so far, counted from its log. */
  requestCount(): number;
  logPath: string;
  stop(): Promise<void>;
}

function httpsGet(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
  });
}

export async function startPebble(opts: PebbleOptions): Promise<Pebble> {
  const dir = await makeTempDir('pebble');
  const tls = await makeListenerCert(dir);
  const [acmePort, mgmtPort, tlsPort] = [await freePort(), await freePort(), await freePort()];
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${mgmtPort}`,
      certificate: tls.certPath,
      privateKey: tls.keyPath,
      httpPort: opts.httpPort,
      tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: !!opts.eabKeys,
      externalAccountMACKeys: opts.eabKeys ?? {},
      ...(opts.certificateValidityPeriod ? { certificateValidityPeriod: opts.certificateValidityPeriod } : {}),
    },
  };
  const configPath = path.join(dir, 'pebble-config.json');
  await fsp.writeFile(configPath, JSON.stringify(config, null, 2), { mode: 0o600 });
  const env: Record<string, string> = {
    PEBBLE_WFE_NONCEREJECT: String(opts.nonceReject ?? 0),
    PEBBLE_AUTHZREUSE: String(opts.authzReuse ?? 0),
  };
  if (opts.vaNoSleep ?? true) env.PEBBLE_VA_NOSLEEP = '1';
  else if (opts.vaSleepTime !== undefined) env.PEBBLE_VA_SLEEPTIME = String(opts.vaSleepTime);
  if (opts.alternateRoots) env.PEBBLE_ALTERNATE_ROOTS = String(opts.alternateRoots);
  if (opts.chainLength) env.PEBBLE_CHAIN_LENGTH = String(opts.chainLength);
  const logPath = path.join(dir, 'pebble.log');
  const proc = startProcess('pebble', ['-config', configPath, '-dnsserver', opts.dnsServer, '-strict=false'], {
    logPath,
    env,
    cwd: dir,
  });
  const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  const managementUrl = `https://127.0.0.1:${mgmtPort}`;
  await waitUntilReady(proc, 'pebble', async () => {
    const [a, m] = await Promise.all([httpsGet(directoryUrl, tls.caPem), httpsGet(`${managementUrl}/roots/0`, tls.caPem)]);
    return a.status === 200 && m.status === 200;
  });
  // The readiness probe's GET /dir is in the log too; count from here so callers see only their own requests.
  const baseline = countHandlerLines(logPath);
  const management = async (p: string) => {
    const r = await httpsGet(`${managementUrl}${p}`, tls.caPem);
    if (r.status !== 200) throw new Error(`pebble management ${p}: HTTP ${r.status}`);
    return r.body;
  };
  return {
    directoryUrl,
    caPem: tls.caPem,
    managementUrl,
    rootPem: (index = 0) => management(`/roots/${index}`),
    intermediatePem: (index = 0) => management(`/intermediates/${index}`),
    requestCount: () => countHandlerLines(logPath) - baseline,
    logPath,
    async stop() {
      await proc.stop();
      await removeTempDir(dir);
    },
  };
}

function countHandlerLines(logPath: string): number {
  return (fs.readFileSync(logPath, 'utf8').match(/-> calling handler\(\)/g) ?? []).length;
}

export interface ChallTestSrv {
  /** HOST:PORT of its mock DNS server (answers every A query with 127.0.0.1, no AAAA). */
  dnsServer: string;
  managementUrl: string;
  setTXT(fqdn: string, value: string): Promise<void>;
  clearTXT(fqdn: string): Promise<void>;
  /** fqdn becomes an alias of target (answers to any query at fqdn carry the CNAME and target's records) */
  setCNAME(fqdn: string, target: string): Promise<void>;
  stop(): Promise<void>;
}

/** pebble-challtestsrv as a mock DNS server only: its own HTTP-01/TLS responders are off so they never collide with ours. */
export async function startChallTestSrv(): Promise<ChallTestSrv> {
  const dir = await makeTempDir('challtestsrv');
  const dnsPort = await freePort({ udp: true });
  const mgmtPort = await freePort();
  const managementUrl = `http://127.0.0.1:${mgmtPort}`;
  const proc = startProcess(
    'pebble-challtestsrv',
    ['-dns01', `127.0.0.1:${dnsPort}`, '-management', `127.0.0.1:${mgmtPort}`, '-http01', '', '-https01', '', '-tlsalpn01', '',
      // Pebble's VA dials the first address and asks AAAA first: a ::1 answer would divert HTTP-01 away from 127.0.0.1.
      '-defaultIPv4', '127.0.0.1', '-defaultIPv6', ''],
    { logPath: path.join(dir, 'challtestsrv.log'), cwd: dir },
  );
  const post = (endpoint: string, body: unknown) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(`${managementUrl}${endpoint}`, { method: 'POST', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  await waitUntilReady(proc, 'pebble-challtestsrv', async () => (await post('/clear-txt', { host: 'probe.invalid.' })) === 200);
  // challtestsrv silently serves nothing for a host without the trailing dot.
  const absolute = (fqdn: string) => (fqdn.endsWith('.') ? fqdn : `${fqdn}.`);
  const check = async (endpoint: string, body: unknown) => {
    const status = await post(endpoint, body);
    if (status !== 200) throw new Error(`challtestsrv ${endpoint}: HTTP ${status}`);
  };
  return {
    dnsServer: `127.0.0.1:${dnsPort}`,
    managementUrl,
    setTXT: (fqdn, value) => check('/set-txt', { host: absolute(fqdn), value }),
    clearTXT: (fqdn) => check('/clear-txt', { host: absolute(fqdn) }),
    setCNAME: (fqdn, target) => check('/set-cname', { host: absolute(fqdn), target: absolute(target) }),
    async stop() {
      await proc.stop();
      await removeTempDir(dir);
    },
  };
}
