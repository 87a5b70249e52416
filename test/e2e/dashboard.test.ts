// The dashboard in a real browser (Debian's chromium, headless, driven by playwright-core)
// against a real `certsmith server`: the examples, an ACME certificate Pebble cannot validate
// (HTTP-01 on a port nobody serves, so it fails and backs off), one whose self-check cannot pass,
// one renewing inside a maintenance window and a short-lived (healthy) one in another namespace. Both the
// server's own dashboard (--dashboard-listen) and `certsmith dashboard` through the kubeconfig
// are open while the server restarts and a renewal is asked for with `certsmith renew`.
// A second Pebble behind the ARI proxy (test/rig/fault-proxy.ts) issues one certificate with a
// suggested window the test sets, and the server mirrors Secrets to files with a deploy hook that
// succeeds for one certificate and fails, printing the key it was given, for another.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { certsmithBin, repoRoot, run, startServer, waitFor, type RunningServer } from './harness.ts';
import { freePort, startChallTestSrv, startPebble, type ChallTestSrv, type Pebble } from '../rig/index.ts';
import { startFaultProxy, type FaultProxy } from '../rig/fault-proxy.ts';
import { loadClientConfig } from '../../src/server/kubeconfig.ts';
import { HttpStore } from '../../src/store/http/http-store.ts';
import { SecretType } from '../../src/api/resources.ts';
import type { Secret } from '../../src/api/meta.ts';

const artifacts = join(repoRoot, 'test-artifacts', 'dashboard');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const DAY = 86_400_000;
/** the instant as the page prints it (app.js time()) */
const shown = (iso: string) => new Date(iso).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// The ARI window the proxy suggests for every certificate of the second Pebble: inside the
// certificate's 90 days and past the least time between issuances (10% of the validity), so the
// renewal time is a point in it.
const ARI_VALIDITY_S = 90 * 86_400;
const ariWindowFrom = (now: number) => ({
  start: new Date(now + 30 * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  end: new Date(now + 32 * DAY).toISOString().replace(/\.\d{3}Z$/, 'Z'),
});
const ARI_EXPLANATION = 'https://ca.example.test/why-this-window';

/** Succeeds for every certificate but hook-fails, which prints its key (redacted in the Event) and exits 3. */
const DEPLOY_HOOK = `#!/bin/sh
case "$CERTSMITH_CERTIFICATE_NAME" in
  hook-fails) echo "nginx: reload refused"; cat "$CERTSMITH_KEY_PATH"; exit 3 ;;
  *) echo "reloaded $CERTSMITH_NAMESPACE/$CERTSMITH_CERTIFICATE_NAME" ;;
esac
`;

function manifests(pebble: Pebble, ariProxy: FaultProxy): string {
  const docs = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
    {
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble' },
      spec: {
        acme: {
          server: pebble.directoryUrl, email: 'ops@example.test', caBundle: b64(pebble.caPem), privateKeySecretRef: { name: 'pebble-account' },
          solvers: [
            // Pebble connects to a port nobody serves: skip the self-check so that it tries and fails
            { selector: { dnsNames: ['unreachable.example.test'] }, http01: { ingress: {} }, waitInsteadOfSelfCheck: '0s' },
            { selector: { dnsNames: ['selfcheck.example.test'] }, dns01: { webhook: { groupName: 'certsmith.io', solverName: 'exec' } } },
          ],
        },
      },
    },
    {
      apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'pebble-ari' },
      spec: { acme: { server: ariProxy.directoryUrl, caBundle: b64(ariProxy.caPem), privateKeySecretRef: { name: 'pebble-ari-account' }, solvers: [{ http01: { ingress: {} } }] } },
    },
    {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'acme-ari', namespace: 'default' },
      spec: { secretName: 'acme-ari-tls', dnsNames: ['ari.example.test'], privateKey: { algorithm: 'ECDSA', size: 256 }, issuerRef: { name: 'pebble-ari', kind: 'ClusterIssuer' } },
    },
    ...['hook-ok', 'hook-fails'].map((name) => ({
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name, namespace: 'default' },
      spec: { secretName: `${name}-tls`, dnsNames: [`${name}.example.test`], privateKey: { algorithm: 'ECDSA', size: 256 }, issuerRef: { name: 'example-ca', kind: 'Issuer' } },
    })),
    {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'acme-failing', namespace: 'default' },
      spec: { secretName: 'acme-failing-tls', dnsNames: ['unreachable.example.test'], privateKey: { algorithm: 'ECDSA', size: 256 }, issuerRef: { name: 'pebble', kind: 'ClusterIssuer' } },
    },
    {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'acme-selfcheck', namespace: 'default' },
      spec: { secretName: 'acme-selfcheck-tls', dnsNames: ['selfcheck.example.test'], privateKey: { algorithm: 'ECDSA', size: 256 }, issuerRef: { name: 'pebble', kind: 'ClusterIssuer' } },
    },
    {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'in-window', namespace: 'default' },
      spec: {
        secretName: 'in-window-tls', dnsNames: ['window.example.test'], duration: '720h', renewBefore: '240h',
        renewal: { policy: 'RenewBefore', windows: [{ cron: '0 0 * * *', duration: '24h' }] },
        issuerRef: { name: 'example-ca', kind: 'Issuer' },
      },
    },
    {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'short-lived', namespace: 'team-a' },
      spec: { secretName: 'short-lived-tls', commonName: 'short.example.test', duration: '2h', issuerRef: { name: 'selfsigned', kind: 'ClusterIssuer' } },
    },
  ];
  return docs.map((d) => JSON.stringify(d)).join('\n---\n') + '\n';
}

interface DashboardProcess { url: string; child: ChildProcess; output(): string; stop(): Promise<void> }

async function startDashboardCommand(kubeconfig: string): Promise<DashboardProcess> {
  const child = spawn(process.execPath, [certsmithBin, '--kubeconfig', kubeconfig, 'dashboard', '--listen', '127.0.0.1:0'], {
    cwd: repoRoot, env: { ...process.env, CERTSMITH_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const url = await waitFor('certsmith dashboard to listen', () => /certsmith dashboard on (\S+)/.exec(out)?.[1] ?? (child.exitCode !== null && 'exited'), 60_000)
    .catch((e: Error) => e.message);
  if (!url.startsWith('http://')) {
    child.kill('SIGKILL');
    throw new Error(`certsmith dashboard did not start (${url}):\n${out}`);
  }
  return {
    url, child, output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Records what the browser receives on the event stream, which Playwright cannot read back. */
const recordEventStream = () => {
  const w = window as unknown as { __sse: string[] };
  w.__sse = [];
  const Original = window.EventSource;
  window.EventSource = class extends Original {
    constructor(url: string | URL, init?: EventSourceInit) {
      super(url, init);
      for (const type of ['snapshot', 'changes']) this.addEventListener(type, (e) => w.__sse.push((e as MessageEvent<string>).data));
    }
  };
};

test('certsmith dashboard refuses an address other machines reach, naming the flag and the rule', async () => {
  const r = await run(process.execPath, [certsmithBin, 'dashboard', '--listen', '0.0.0.0:9404']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--listen 0\.0\.0\.0:9404: "0\.0\.0\.0" is not a loopback address: the dashboard has no login of its own/);
  const bad = await run(process.execPath, [certsmithBin, 'dashboard', '--listen', 'nowhere']);
  assert.match(bad.stderr, /--listen "nowhere": expected HOST:PORT/);
});

describe('dashboard in chromium against a real server', () => {
  let cts: ChallTestSrv;
  let pebble: Pebble;
  let ariPebble: Pebble;
  let ariProxy: FaultProxy;
  let ariWindow: { start: string; end: string };
  let server: RunningServer;
  let dashboard: DashboardProcess;
  let context: BrowserContext;
  let page: Page;
  let serverPage: Page;
  let workDir: string;
  let apiPort: number;
  let serverDashboardPort: number;
  let serverArgs: string[];
  const requests: string[] = [];
  const bodies: { url: string; body: string }[] = [];

  before(async () => {
    mkdirSync(artifacts, { recursive: true });
    workDir = mkdtempSync(join(tmpdir(), 'certsmith-dashboard-'));
    cts = await startChallTestSrv();
    const http01Port = await freePort();
    // the first Pebble validates HTTP-01 on a port nobody serves, the second on the server's
    [pebble, ariPebble] = await Promise.all([
      startPebble({ dnsServer: cts.dnsServer, httpPort: await freePort() }),
      startPebble({ dnsServer: cts.dnsServer, httpPort: http01Port, certificateValidityPeriod: ARI_VALIDITY_S }),
    ]);
    ariProxy = await startFaultProxy({ upstream: ariPebble.directoryUrl, upstreamCaPem: ariPebble.caPem });
    ariWindow = ariWindowFrom(Date.now());
    ariProxy.setRenewalInfo(() => ({ suggestedWindow: ariWindow, explanationURL: ARI_EXPLANATION, retryAfter: 3600 }));
    writeFileSync(join(workDir, 'acme.yaml'), manifests(pebble, ariProxy));
    writeFileSync(join(workDir, 'dns01-noop.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    writeFileSync(join(workDir, 'deploy-hook.sh'), DEPLOY_HOOK, { mode: 0o755 });
    [apiPort, serverDashboardPort] = [await freePort(), await freePort()];
    serverArgs = [
      '--listen', `127.0.0.1:${apiPort}`, '--dashboard-listen', `127.0.0.1:${serverDashboardPort}`,
      '--apply', 'examples/', '--apply', join(workDir, 'acme.yaml'),
      '--secrets-dir', join(workDir, 'live'), '--deploy-hook', join(workDir, 'deploy-hook.sh'),
      '--acme-http01-listen', `127.0.0.1:${http01Port}`, '--acme-http01-self-check-port', String(http01Port), '--acme-http01-solver-nameservers', cts.dnsServer,
      // the DNS-01 hook adds no record: the self-check at the only resolver never sees the TXT
      '--dns01-exec', join(workDir, 'dns01-noop.sh'), '--dns01-recursive-nameservers', cts.dnsServer, '--dns01-recursive-nameservers-only',
    ];
    server = await startServer({ dataDir: join(workDir, 'data'), args: serverArgs, timeoutMs: 60_000 });
    dashboard = await startDashboardCommand(server.kubeconfig);

    context = await chromium.launchPersistentContext(join(workDir, 'chromium-profile'), {
      executablePath: '/usr/bin/chromium', headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    await context.addInitScript(recordEventStream);
    context.on('request', (r) => requests.push(r.url()));
    context.on('response', (r) => {
      if ((r.headers()['content-type'] ?? '').startsWith('text/event-stream')) return;
      r.text().then((body) => bodies.push({ url: r.url(), body }), () => {});
    });
    page = context.pages()[0] ?? await context.newPage();
    serverPage = await context.newPage();
  });

  after(async () => {
    await context?.close();
    await dashboard?.stop();
    await server?.stop();
    await ariProxy?.stop();
    await Promise.all([pebble?.stop(), ariPebble?.stop(), cts?.stop()]);
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const row = (p: Page, key: string) => p.locator(`#certificates tbody tr[data-certificate="${key}"]`);
  /**
   * A certificate's page, once it shows that certificate: the page changes by its hash and renders
   * after fetching, so until then the previous certificate's page (same element ids) is still there
   * and a wait for one of its elements would pass on the old page.
   */
  const openDetail = async (p: Page, key: string) => {
    await p.goto(`${dashboard.url}#/certificates/${key}`);
    await p.locator('#page-title', { hasText: new RegExp(`^Certificate ${escapeRegExp(key)}$`) }).waitFor();
  };
  const shot = (p: Page, name: string) => p.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
  /**
   * A picture of one part of a page, for the artifacts. The page re-renders a section when its
   * objects change (a later Event, a status write), and an element replaced while the shot waits
   * for it to be stable fails it ("Element is not attached to the DOM", seen in CI): the locator
   * is asked again for the element that replaced it. What the test asserts it asserted before.
   */
  const partShot = async (part: Locator, name: string) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await part.screenshot({ path: join(artifacts, `${name}.png`) });
        return;
      } catch (e) {
        if (attempt >= 5 || !/not attached to the DOM/.test((e as Error).message)) throw e;
      }
    }
  };

  test('the list shows every certificate in its state, filters and sorts by expiry', async () => {
    await page.goto(dashboard.url);
    await page.locator('#connection[data-connection="live"]').waitFor();
    for (const key of ['default/example-ca', 'default/web-rsa', 'default/api-ecdsa', 'default/mesh-ed25519', 'default/java-app', 'default/in-window']) {
      await row(page, key).and(page.locator('[data-state="ready"]')).waitFor({ timeout: 60_000 });
    }
    // two hours long, freshly issued: healthy, not expiring (its last tenth is 12 minutes)
    await row(page, 'team-a/short-lived').and(page.locator('[data-state="ready"]')).waitFor({ timeout: 60_000 });
    // Pebble refuses the challenge: the order fails and the certificate backs off
    await row(page, 'default/acme-failing').and(page.locator('[data-state="backing-off"]')).waitFor({ timeout: 120_000 });
    assert.match(await row(page, 'default/acme-failing').innerText(), /Backing off[\s\S]*Failed/);
    // never issued: not ready (renewing is for a certificate that has one)
    assert.equal(await row(page, 'default/acme-selfcheck').getAttribute('data-state'), 'not-ready');
    await shot(page, 'list');

    await page.selectOption('#filter-state', 'backing-off');
    assert.deepEqual(await page.locator('#certificates tbody tr').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-certificate'))), ['default/acme-failing']);
    await page.selectOption('#filter-state', 'not-ready');
    assert.deepEqual(await page.locator('#certificates tbody tr').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-certificate'))), ['default/acme-selfcheck']);
    await page.selectOption('#filter-state', 'expiring');
    assert.equal(await page.locator('#certificates tbody tr').count(), 0, 'nothing is near its end');
    await page.selectOption('#filter-state', '');
    await page.selectOption('#filter-namespace', 'team-a');
    assert.equal(await page.locator('#certificates tbody tr').count(), 1);
    await page.selectOption('#filter-namespace', '');
    await page.selectOption('#filter-issuer', 'ClusterIssuer/pebble');
    assert.deepEqual((await page.locator('#certificates tbody tr').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-certificate')))).sort(), ['default/acme-failing', 'default/acme-selfcheck']);
    await shot(page, 'list-filtered-issuer');
    await page.selectOption('#filter-issuer', '');

    // soonest expiry first (the 2-hour certificate), then latest first after the header is pressed
    const keys = () => page.locator('#certificates tbody tr').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-certificate')));
    assert.equal((await keys())[0], 'team-a/short-lived');
    await page.locator('#sort-expiry').focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('th[aria-sort]').getAttribute('aria-sort'), 'descending');
    assert.equal((await keys())[0], 'default/example-ca');
  });

  test('the timeline shows validity, renewal windows, failures and the next attempt', async () => {
    await page.goto(`${dashboard.url}#/timeline`);
    const failing = page.locator('#timeline section[data-certificate="default/acme-failing"]');
    await failing.waitFor();
    assert.match(await failing.innerText(), /Failed attempts\s+1[\s\S]*Last failure[\s\S]*Next attempt\s+\d{4}-/);
    assert.equal(await failing.locator('.track .mark.next').count(), 1);
    const windowed = page.locator('#timeline section[data-certificate="default/in-window"]');
    assert.match(await windowed.innerText(), /InsideWindow/);
    assert.match(await windowed.innerText(), /Renewal window[\s\S]*windows\[0\] "0 0 \* \* \*"/);
    assert.equal(await windowed.locator('.track .window').count(), 1);
    assert.match(await page.locator('#timeline section[data-certificate="default/web-rsa"]').innerText(), /RenewBefore: /);
    await shot(page, 'timeline');
  });

  test("a failing certificate's page shows its order, challenge and ACME error; a self-check failure shows its reason", async () => {
    await openDetail(page, 'default/acme-failing');
    await page.locator('#chain [data-order-state="invalid"]').waitFor({ timeout: 60_000 });
    const chain = await page.locator('#chain').innerText();
    assert.match(chain, /CertificateRequest acme-failing-\S+ \(revision 1\)/);
    assert.match(chain, /Order \S+: invalid/);
    assert.match(chain, /ACME: /);
    assert.match(await page.locator('#chain table.challenges').innerText(), /unreachable\.example\.test\s+invalid/);
    assert.match(await page.locator('#conditions').innerText(), /Issuing\s+False\s+Failed/);
    assert.ok(await page.locator('#events tbody tr').count() > 0);
    assert.match(await page.locator('#renewal-reason').innerText(), /not known until the certificate is issued/);
    // headings and labelled controls: what a screen reader lists
    assert.deepEqual(await page.locator('h2').allInnerTexts(), ['Summary', 'Next renewal', 'Conditions', 'Certificate in the Secret', 'Requests, orders and challenges', 'Deploy hooks and files', 'Revisions', 'Events']);
    await shot(page, 'detail-acme-failing');

    await openDetail(page, 'default/acme-selfcheck');
    const challenge = page.locator('#chain table.challenges tbody tr');
    await waitFor('the self-check result on the challenge', async () => /selfcheck\.example\.test\s+pending\s+yes\s+\S/.test(await challenge.first().innerText().catch(() => '')), 60_000, 500);
    await shot(page, 'detail-selfcheck');
  });

  test('the timeline draws the ARI window with its dates, inside the validity and around the renewal time; the page names it', async () => {
    await page.goto(`${dashboard.url}#/timeline`);
    const ari = page.locator('#timeline section[data-certificate="default/acme-ari"]');
    // issued, then the window fetched into status.acme.ari
    await ari.locator('.track .ari').waitFor({ timeout: 60_000 });
    const band = ari.locator('.track .ari');
    assert.equal(await band.getAttribute('title'), 'ARI suggested window');
    const [bandBox, validityBox, renewalBox] = await Promise.all([band, ari.locator('.track .validity'), ari.locator('.track .mark.renewal')].map((l) => l.boundingBox()));
    assert.ok(bandBox && validityBox && renewalBox);
    assert.ok(bandBox.width >= 2, `the window is drawn (${bandBox.width}px)`);
    assert.ok(bandBox.x >= validityBox.x && bandBox.x + bandBox.width <= validityBox.x + validityBox.width + 1, 'the window lies inside the validity');
    assert.ok(renewalBox.x >= bandBox.x - 1 && renewalBox.x <= bandBox.x + bandBox.width, 'the renewal time is drawn inside the window');

    const facts = async (scope: Locator, term: string) => {
      const dd = scope.locator('dl.facts dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]');
      return { text: await dd.innerText(), times: await dd.locator('time').evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime') ?? '')) };
    };
    const w = await facts(ari, 'ARI window');
    assert.deepEqual(w.times.map((t) => Date.parse(t)), [Date.parse(ariWindow.start), Date.parse(ariWindow.end)]);
    assert.match(w.text, new RegExp(`^${escapeRegExp(shown(ariWindow.start))} \\(in \\d+ d\\) – ${escapeRegExp(shown(ariWindow.end))} \\(in \\d+ d\\)$`));
    assert.equal((await facts(ari, 'ARI explanation')).text, ARI_EXPLANATION);
    // where the band sits on the validity bar is where its dates fall in the validity
    const [notBefore, notAfter] = [Date.parse((await facts(ari, 'Valid from')).times[0]), Date.parse((await facts(ari, 'Valid until')).times[0])];
    const at = (iso: string) => validityBox.x + (validityBox.width * (Date.parse(iso) - notBefore)) / (notAfter - notBefore);
    assert.ok(Math.abs(bandBox.x - at(ariWindow.start)) <= 2, `the window starts at ${at(ariWindow.start)}px, drawn at ${bandBox.x}px`);
    assert.ok(Math.abs(bandBox.x + bandBox.width - at(ariWindow.end)) <= 2, `the window ends at ${at(ariWindow.end)}px, drawn to ${bandBox.x + bandBox.width}px`);
    const renewal = Date.parse((await facts(ari, 'Renewal time')).times[0]);
    assert.ok(renewal >= Date.parse(ariWindow.start) && renewal < Date.parse(ariWindow.end), 'the renewal time is in the window');
    assert.match((await facts(ari, 'Why then')).text, /^ARI: renewing at \S+, a random point in the ACME server's suggested window/);
    // no ARI row for certificates whose CA has no ARI
    assert.equal(await page.locator('#timeline section[data-certificate="default/web-rsa"] .track .ari').count(), 0);
    // the row alone: a full-page shot of the timeline is already taken, and costs seconds here
    await partShot(ari, 'timeline-ari');

    await openDetail(page, 'default/acme-ari');
    await page.locator('#renewal-reason').waitFor();
    assert.match(await page.locator('#renewal-reason').innerText(),
      new RegExp(`^ARI: renewing at \\S+, a random point in the ACME server's suggested window ${escapeRegExp(ariWindow.start)} to ${escapeRegExp(ariWindow.end)} \\(${escapeRegExp(ARI_EXPLANATION)}\\)$`));
    const section = page.locator('section[aria-labelledby="h-renewal"]');
    assert.equal(await section.locator('.track .ari').count(), 1);
    const onPage = await facts(section, 'ARI window');
    assert.deepEqual(onPage.times.map((t) => Date.parse(t)), [Date.parse(ariWindow.start), Date.parse(ariWindow.end)]);
    await shot(page, 'detail-acme-ari');
  });

  test("a certificate's page shows its deploy hook's outcome: exit status and output, the key it printed redacted", async () => {
    const hookRows = (p: Page) => p.locator('section[aria-labelledby="h-hooks"] table tbody tr');
    await openDetail(page, 'default/hook-ok');
    await hookRows(page).filter({ hasText: 'DeployHookSucceeded' }).first().waitFor({ timeout: 60_000 });
    assert.match(await hookRows(page).first().innerText(), /^DeployHookSucceeded\s+Normal\s+Deploy hook for revision 1 exited with status 0: reloaded default\/hook-ok\s+\d{4}-/);
    assert.equal(await hookRows(page).filter({ hasText: 'DeployHookFailed' }).count(), 0);
    await partShot(page.locator('section[aria-labelledby="h-hooks"]'), 'detail-hook-ok');

    await openDetail(page, 'default/hook-fails');
    // the first attempt's row: on a slow machine the retry a minute later may already be listed above it
    const failed = hookRows(page).filter({ hasText: 'DeployHookFailed' }).filter({ hasText: '(attempt 1,' });
    await failed.waitFor({ timeout: 60_000 });
    assert.match(await failed.innerText(), /^DeployHookFailed\s+Warning\s+Deploy hook for revision 1 exited with status 3 \(attempt 1, retrying in \S+\): nginx: reload refused\s+\[private key redacted\]\s+\d{4}-/);
    assert.equal(await hookRows(page).filter({ hasText: 'DeployHookSucceeded' }).count(), 0);
    // the certificate itself is fine: a hook's failure is not an issuance failure
    assert.equal(await page.locator('#detail-state [data-state]').first().getAttribute('data-state'), 'ready');
    assert.doesNotMatch(await page.locator('main').innerText(), /PRIVATE KEY/);
    await shot(page, 'detail-hook-fails');
  });

  test('a renewal through the CLI appears without a reload, also across a server restart', async () => {
    await openDetail(page, 'default/web-rsa');
    await page.locator('#detail-revision', { hasText: '1' }).waitFor();
    assert.match(await page.locator('#renewal-reason').innerText(), /^RenewBefore: /);
    assert.match(await page.locator('#leaf').innerText(), /Subject\s+CN=www\.example\.test/);
    await serverPage.goto(`http://127.0.0.1:${serverDashboardPort}/`);
    await row(serverPage, 'default/web-rsa').and(serverPage.locator('[data-revision="1"]')).waitFor({ timeout: 30_000 });
    // marks that a reload would wipe
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));
    await serverPage.evaluate(() => ((window as unknown as { marker: number }).marker = 1));

    assert.equal(await server.stop(), 0);
    // the server's own dashboard went with it; `certsmith dashboard` says its API does not answer
    await serverPage.locator('#connection[data-connection="reconnecting"]').waitFor({ timeout: 30_000 });
    await page.locator('#connection[data-connection="upstream-down"]').waitFor({ timeout: 30_000 });
    await shot(page, 'api-down');
    server = await startServer({ dataDir: join(workDir, 'data'), args: serverArgs, timeoutMs: 60_000 });
    await serverPage.locator('#connection[data-connection="live"]').waitFor({ timeout: 30_000 });
    await page.locator('#connection[data-connection="live"]').waitFor({ timeout: 30_000 });

    const renew = await server.cli(['renew', 'web-rsa', '-n', 'default']);
    assert.equal(renew.code, 0, renew.stderr);
    await page.locator('#detail-revision', { hasText: '2' }).waitFor({ timeout: 60_000 });
    await row(serverPage, 'default/web-rsa').and(serverPage.locator('[data-revision="2"]')).waitFor({ timeout: 60_000 });
    assert.equal(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 1);
    assert.equal(await serverPage.evaluate(() => (window as unknown as { marker?: number }).marker), 1);
    assert.match(await page.locator('#revisions').innerText(), /\n2\s+web-rsa-\S+\s.*Issued/);
    await shot(page, 'detail-web-rsa-renewed');
    await shot(serverPage, 'server-dashboard-after-restart');
  });

  test('the browser talks to 127.0.0.1 only and never receives a private key', async () => {
    assert.ok(requests.length > 0);
    const elsewhere = requests.filter((u) => new URL(u).hostname !== '127.0.0.1');
    assert.deepEqual(elsewhere, []);

    const config = loadClientConfig({ kubeconfig: server.kubeconfig });
    const store = new HttpStore({ server: config.server, caPem: config.caPem, token: config.token, qps: 0 });
    let secrets: Secret[];
    try {
      secrets = (await store.list<Secret>(SecretType)).items;
    } finally {
      await store.close();
    }
    // every Secret value but the public certificates: keys, keystores, passwords, the ACME account key
    const secretValues = secrets.flatMap((s) => Object.entries(s.data ?? {}).filter(([k]) => k !== 'tls.crt' && k !== 'ca.crt').map(([k, v]) => ({ where: `${s.metadata.namespace}/${s.metadata.name} ${k}`, v })));
    assert.ok(secretValues.some((x) => x.where.endsWith('tls.key')));
    const received = [...bodies, ...(await Promise.all([page, serverPage].map(async (p) => ({ url: `${p.url()} (event stream)`, body: (await p.evaluate(() => (window as unknown as { __sse: string[] }).__sse)).join('\n') }))))];
    assert.ok(received.some((r) => r.body.includes('"certificates"')), 'the event stream was recorded');
    // the pages that carry a hook's output (one that printed its key) and the ARI window were among them
    for (const key of ['default/hook-ok', 'default/hook-fails', 'default/acme-ari']) {
      assert.ok(received.some((r) => r.url.endsWith(`/api/certificates/${key}`)), `the page of ${key} was checked`);
    }
    assert.ok(received.some((r) => r.url.endsWith('/api/certificates/default/hook-fails') && r.body.includes('[private key redacted]')));
    assert.ok(secretValues.some((x) => x.where === 'default/hook-fails-tls tls.key'));
    for (const r of received) {
      assert.doesNotMatch(r.body, /PRIVATE KEY/, r.url);
      for (const { where, v } of secretValues) {
        if (v.length < 12) continue;
        assert.ok(!r.body.includes(v), `${r.url} carries ${where}`);
        const decoded = Buffer.from(v, 'base64').toString('utf8');
        const pemBody = decoded.split('\n').filter((l) => l && !l.startsWith('-----')).join('');
        if (pemBody.length >= 40) assert.ok(!r.body.includes(pemBody.slice(0, 40)), `${r.url} carries ${where}`);
      }
    }
  });
});
