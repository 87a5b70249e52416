// certsmith server: the embedded API server on SQLite with every controller, for one host.
import { mkdirSync, chmodSync, existsSync, statSync } from 'node:fs';
import { resolve, join } from 'node:path';
import type { Command } from 'commander';
import { durationFlag } from './duration-flag.ts';
import { NamespaceType } from '../api/resources.ts';
import type { ControllerOptions } from '../shared/controller-options.ts';
import { isConflict, type Store } from '../store/store.ts';
import type { EncryptionConfiguration } from '../store/sqlite/encryption.ts';
import { readManifests, ManifestError } from './manifests.ts';
import { applyManifests } from './apply-manifests.ts';
import { CliError } from './cli-error.ts';
import { listenFailure, parseListen, parsePortFlag } from './listen-flag.ts';
import { listenForStop } from './signals.ts';
import { backoffFromFlags, BackoffFlagError } from '../composition/backoff.ts';
import { checkDataDir, DataDirError, ensureAccessToken, lockDataDir } from '../server/data-dir.ts';
import { parseFileOwner } from '../shared/file-owner.ts';
import { checkTrustedPath, TrustedPathError } from '../server/trusted-path.ts';

export interface ControllerFlags {
  autoApprove: boolean;
  approveSignerNames?: string;
  enableCertificateOwnerRef?: boolean;
  clusterIssuerAmbientCredentials?: boolean;
  issuerAmbientCredentials?: boolean;
  backoffInitial?: string;
  backoffMax?: string;
  secretsDir?: string;
  keepFiles?: boolean;
  filesOwner?: string;
  deployHook?: string;
  deployHookTimeout?: string;
  acmeHttp01Listen?: string;
  acmeHttp01SelfCheckPort?: string;
  acmeHttp01SolverNameservers?: string;
  acmeHttp01Webroot?: string;
  dns01AuthHook?: string;
  dns01CleanupHook?: string;
  dns01Exec?: string;
  dns01HookTimeout?: string;
  dns01RecursiveNameservers?: string;
  dns01RecursiveNameserversOnly?: boolean;
  notifyWebhook?: string;
  notifyExec?: string;
  notifyAfterFailures?: string;
  notifyRenewalGrace?: string;
  notifyExpiryBefore?: string;
  metricsListen: string;
  healthListen: string;
  clusterResourceNamespace: string;
  ingressShim: boolean;
  defaultIssuerName?: string;
  defaultIssuerKind: string;
  defaultIssuerGroup: string;
  autoCertificateAnnotations: string;
  /** undefined unless given: each command picks its own default */
  enableGatewayApi?: boolean;
  caInjector: boolean;
}

interface ServerFlags extends ControllerFlags {
  dataDir: string;
  listen: string;
  apply: string[];
  controllers: boolean;
  builtinAdmission: boolean;
  encryptionProviderConfig?: string;
  dashboardListen?: string;
}


const list = (v: string | undefined) => v?.split(',').map((s) => s.trim()).filter(Boolean);

/**
 * --approve-signer-names: signer names as cert-manager's approval check spells them,
 * `<resource>.<group>/<namespace>.<name>`, `<resource>.<group>/<name>` or `<resource>.<group>/*`.
 * An empty value approves every issuer.
 */
function approveSignerNamesFlag(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const names = list(value)!;
  const bad = names.find((n) => !/^[a-z0-9-]+(\.[a-z0-9-]+)+\/[^/]+$/.test(n));
  if (bad !== undefined) throw new CliError(`--approve-signer-names: "${bad}" is not a signer name (<resource>.<group>/* or <resource>.<group>/<namespace>.<name>, e.g. stepissuers.certmanager.step.sm/*)`);
  return names;
}

/** cert-manager's rules for the two backoff flags: 0 is the default, negative or max < initial is refused. */
function backoffFlags(f: ControllerFlags): { initialMs: number; maxMs: number } {
  try {
    return backoffFromFlags(
      { flag: '--backoff-initial', text: f.backoffInitial, ms: durationFlag(f.backoffInitial, '--backoff-initial') },
      { flag: '--backoff-max', text: f.backoffMax, ms: durationFlag(f.backoffMax, '--backoff-max') },
    );
  } catch (e) {
    if (e instanceof BackoffFlagError) throw new CliError(e.message);
    throw e;
  }
}

/** Where notifications go and when (issue 16); undefined without a webhook or an exec hook. */
function notificationFlags(f: ControllerFlags): ControllerOptions['notifications'] {
  if (f.notifyWebhook !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(f.notifyWebhook);
    } catch {}
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new CliError(`--notify-webhook: "${f.notifyWebhook}" is not an http(s) URL`);
  }
  let failures: number | undefined;
  if (f.notifyAfterFailures !== undefined) {
    failures = Number(f.notifyAfterFailures);
    if (!Number.isInteger(failures) || failures < 1) throw new CliError(`--notify-after-failures: "${f.notifyAfterFailures}" is not a whole number of 1 or more`);
  }
  if (!f.notifyWebhook && !f.notifyExec) {
    if (failures !== undefined || f.notifyRenewalGrace || f.notifyExpiryBefore) throw new CliError('--notify-after-failures, --notify-renewal-grace and --notify-expiry-before need --notify-webhook or --notify-exec');
    return undefined;
  }
  return {
    webhookUrl: f.notifyWebhook,
    exec: f.notifyExec ? resolve(f.notifyExec) : undefined,
    failures,
    renewalGraceMs: durationFlag(f.notifyRenewalGrace, '--notify-renewal-grace'),
    expiryThresholdMs: durationFlag(f.notifyExpiryBefore, '--notify-expiry-before'),
  };
}

export function controllerOptionsFrom(f: ControllerFlags): ControllerOptions {
  if (f.secretsDir === '') throw new CliError('--secrets-dir: an empty path; name the folder the files go to, or leave the flag out');
  if (f.acmeHttp01Webroot !== undefined) {
    // checked now, not when the first challenge comes
    const root = resolve(f.acmeHttp01Webroot);
    const st = statSync(root, { throwIfNoEntry: false });
    if (!st) throw new CliError(`--acme-http01-webroot ${root}: no such directory (the web server's document root, which must exist)`);
    if (!st.isDirectory()) throw new CliError(`--acme-http01-webroot ${root}: not a directory`);
  }
  // each acts on the mirrored files: without them it would be ignored, and a reload never run
  if (!f.secretsDir) {
    const given = f.deployHook !== undefined ? '--deploy-hook' : f.filesOwner !== undefined ? '--files-owner' : f.keepFiles ? '--keep-files'
      : f.deployHookTimeout !== undefined ? '--deploy-hook-timeout' : undefined;
    if (given) throw new CliError(`${given} needs --secrets-dir: it acts on the files certsmith writes there, and there are none without it`);
  }
  if (f.secretsDir) {
    // keys are written below it: no other account may be able to redirect it
    try {
      checkTrustedPath(resolve(f.secretsDir), '--secrets-dir');
    } catch (e) {
      if (e instanceof TrustedPathError) throw new CliError(e.message);
      throw e;
    }
  }
  if (f.filesOwner !== undefined) {
    // checked now: the files controller, finding no such user, would fail after the server started
    try {
      parseFileOwner(f.filesOwner);
    } catch (e) {
      throw new CliError(`--files-owner: ${(e as Error).message}`);
    }
  }
  parseListen(f.metricsListen, '--metrics-listen');
  parseListen(f.healthListen, '--health-listen');
  const backoff = backoffFlags(f);
  return {
    noAutoApprove: !f.autoApprove,
    approveSignerNames: approveSignerNamesFlag(f.approveSignerNames),
    enableCertificateOwnerRef: !!f.enableCertificateOwnerRef,
    backoffInitialMs: backoff.initialMs,
    backoffMaxMs: backoff.maxMs,
    secretsDir: f.secretsDir ? resolve(f.secretsDir) : undefined,
    keepFiles: f.keepFiles,
    filesOwner: f.filesOwner,
    deployHook: f.deployHook,
    deployHookTimeoutMs: durationFlag(f.deployHookTimeout, '--deploy-hook-timeout'),
    acmeHTTP01Listen: f.acmeHttp01Listen,
    acmeHTTP01SelfCheckPort: f.acmeHttp01SelfCheckPort === undefined ? undefined : parsePortFlag(f.acmeHttp01SelfCheckPort, '--acme-http01-self-check-port'),
    acmeHTTP01SolverNameservers: list(f.acmeHttp01SolverNameservers),
    acmeHTTP01Webroot: f.acmeHttp01Webroot ? resolve(f.acmeHttp01Webroot) : undefined,
    dns01AuthHook: f.dns01AuthHook ? resolve(f.dns01AuthHook) : undefined,
    dns01CleanupHook: f.dns01CleanupHook ? resolve(f.dns01CleanupHook) : undefined,
    dns01Exec: f.dns01Exec ? resolve(f.dns01Exec) : undefined,
    dns01HookTimeoutMs: durationFlag(f.dns01HookTimeout, '--dns01-hook-timeout'),
    dns01RecursiveNameservers: list(f.dns01RecursiveNameservers),
    dns01RecursiveNameserversOnly: f.dns01RecursiveNameserversOnly,
    notifications: notificationFlags(f),
    metricsListen: f.metricsListen,
    healthListen: f.healthListen,
    clusterResourceNamespace: f.clusterResourceNamespace,
    clusterIssuerAmbientCredentials: f.clusterIssuerAmbientCredentials !== false,
    issuerAmbientCredentials: f.issuerAmbientCredentials === true,
    ingressShim: f.ingressShim,
    defaultIssuerName: f.defaultIssuerName,
    defaultIssuerKind: f.defaultIssuerKind,
    defaultIssuerGroup: f.defaultIssuerGroup,
    autoCertificateAnnotations: list(f.autoCertificateAnnotations),
    enableGatewayAPI: f.enableGatewayApi,
    caInjector: f.caInjector,
  };
}

async function encryptionFlag(path: string | undefined): Promise<EncryptionConfiguration | undefined> {
  if (path === undefined) return undefined;
  // loaded with the server, not with every command (it brings the YAML parser)
  const { EncryptionConfigError, readEncryptionConfiguration } = await import('../store/sqlite/encryption.ts');
  try {
    return readEncryptionConfiguration(resolve(path));
  } catch (e) {
    const why = e instanceof EncryptionConfigError ? e.message : (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message;
    throw new CliError(`--encryption-provider-config ${path}: ${why}`);
  }
}

async function ensureDefaultNamespace(store: Store) {
  try {
    if (!(await store.get(NamespaceType, undefined, 'default'))) {
      await store.create(NamespaceType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    }
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
}

/** A flag written as Go's flag package takes a bool: alone (true) or =true/false (also 1/0). */
function booleanFlag(name: string): (value: string) => boolean {
  return (value) => {
    if (/^(true|1|t)$/i.test(value)) return true;
    if (/^(false|0|f)$/i.test(value)) return false;
    throw new CliError(`${name}: "${value}" is not true or false`);
  };
}

/** The flags every process that runs the controllers takes (server and controller). */
export function addControllerFlags(cmd: Command): Command {
  return cmd
    .option('--no-auto-approve', 'leave CertificateRequests for a person or another approver')
    .option('--enable-certificate-owner-ref', "make each Certificate the owner of its Secret, so deleting the Certificate deletes the Secret (cert-manager's flag)")
    .option('--approve-signer-names <list>', 'signers whose requests are approved, comma-separated: <resource>.<group>/* or a signer\'s full name; "" approves every issuer (default: issuers.cert-manager.io/*,clusterissuers.cert-manager.io/*, as cert-manager)')
    .option('--cluster-resource-namespace <ns>', 'where the Secrets that ClusterIssuers refer to live', 'cert-manager')
    .option('--cluster-issuer-ambient-credentials [bool]', "let ClusterIssuers' DNS-01 solvers use this host's (pod's) own cloud credentials when they name none (cert-manager's flag)", booleanFlag('--cluster-issuer-ambient-credentials'), true)
    .option('--issuer-ambient-credentials [bool]', "let namespaced Issuers' DNS-01 solvers do so too (cert-manager's flag)", booleanFlag('--issuer-ambient-credentials'), false)
    .option('--backoff-initial <duration>', 'first retry delay after a failed issuance (default 1h)')
    .option('--backoff-max <duration>', 'longest retry delay (default 32h)')
    .option('--acme-http01-listen <host:port>', 'address of the HTTP-01 challenge responder (default :80; behind a web server that proxies /.well-known/acme-challenge/ to it, a private address)')
    .option('--acme-http01-self-check-port <port>', 'port the HTTP-01 self-check fetches each name\'s token from, as the CA does (default 80; only a test CA such as Pebble validates on another)')
    .option('--acme-http01-solver-nameservers <list>', 'comma-separated host:port resolvers for HTTP-01 self-checks')
    .option('--acme-http01-webroot <dir>', "write HTTP-01 tokens to DIR/.well-known/acme-challenge/ for the host's own web server (nginx, Apache) instead of listening (single host)")
    .option('--dns01-recursive-nameservers <list>', 'comma-separated host:port resolvers for DNS-01 self-checks')
    .option('--dns01-recursive-nameservers-only', 'use only these resolvers for DNS-01 checks')
    .option('--dns01-auth-hook <path>', 'DNS-01 for Issuers whose solver is webhook {groupName: certsmith.io, solverName: exec}: program run with certbot\'s CERTBOT_DOMAIN, CERTBOT_VALIDATION, ... to add the TXT record')
    .option('--dns01-cleanup-hook <path>', 'program run with the same CERTBOT_* variables and CERTBOT_AUTH_OUTPUT to remove it')
    .option('--dns01-exec <path>', 'lego exec convention: run as "PATH present|cleanup FQDN VALUE" for the same solver')
    .option('--dns01-hook-timeout <duration>', 'longest run of one DNS-01 hook before its process group is killed (default 2m)')
    .option('--notify-webhook <url>', 'POST a JSON notification (Slack- and Teams-compatible "text") when a Certificate keeps failing, is overdue for renewal or near expiry, its CA asks for early replacement (ARI) or its deploy hook failed, and when that clears')
    .option('--notify-exec <path>', 'run this program for each such notification, with CERTSMITH_NOTIFICATION, CERTSMITH_NOTIFICATION_STATE, CERTSMITH_NAMESPACE, CERTSMITH_CERTIFICATE, CERTSMITH_MESSAGE in its environment')
    .option('--notify-after-failures <n>', 'failed issuances in a row before a notification (default 3)')
    .option('--notify-renewal-grace <duration>', 'how long past its renewal time a Certificate may stay unrenewed before a notification (default 1h)')
    .option('--notify-expiry-before <duration>', 'notify when less than this is left before expiry (default a tenth of the certificate\'s lifetime)')
    .option('--metrics-listen <host:port>', 'Prometheus metrics address', '127.0.0.1:9402')
    .option('--health-listen <host:port>', 'health probe address', '127.0.0.1:9403')
    .option('--enable-gateway-api', 'create Certificates for Gateways annotated cert-manager.io/issuer or cluster-issuer, and solve HTTP-01 with gatewayHTTPRoute (needs the Gateway API types; off by default on controller, on by default on server)')
    .option('--no-enable-gateway-api', 'turn the Gateway API support off (server)')
    .option('--no-ingress-shim', 'do not create Certificates for Ingresses annotated cert-manager.io/issuer or cluster-issuer')
    .option('--default-issuer-name <name>', 'issuer of the Certificates for Ingresses that carry an auto-certificate annotation')
    .option('--default-issuer-kind <kind>', 'kind of the default issuer', 'Issuer')
    .option('--default-issuer-group <group>', 'API group of the default issuer', 'cert-manager.io')
    .option('--auto-certificate-annotations <list>', 'comma-separated Ingress annotations that, set to "true", ask for Certificates from the default issuer', 'kubernetes.io/tls-acme')
    .option('--no-ca-injector', 'do not fill the caBundle of objects annotated cert-manager.io/inject-ca-from, inject-ca-from-secret or inject-apiserver-ca');
}

export function registerServerCommand(program: Command) {
  addControllerFlags(program
    .command('server')
    .description('run the embedded API server (SQLite) and all controllers on this host')
    .option('--data-dir <dir>', 'state, PKI, token and kubeconfig', './.certsmith')
    .option('--listen <host:port>', 'API server address', '127.0.0.1:6443')
    .option('--apply <path>', 'manifests (file or folder) applied at start; repeatable', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--encryption-provider-config <file>', "kube-apiserver's EncryptionConfiguration: encrypt Secrets at rest in the state database")
    .option('--dashboard-listen <host:port>', 'also serve the read-only web dashboard on this address')
    .option('--no-controllers', 'serve the API only; controllers run elsewhere, e.g. "certsmith controller --kubeconfig DIR/kubeconfig"')
    .option('--no-builtin-admission', 'leave defaulting and validation of cert-manager\'s kinds to admission webhooks (e.g. "certsmith webhook" registered through webhook configurations); structural checks stay on')
    .option('--secrets-dir <dir>', 'mirror issued Secrets to files under this folder')
    .option('--keep-files', 'keep mirrored files when their Secret is deleted')
    .option('--files-owner <user[:group]>', 'account whose group reads the mirrored files (uid:gid or names); the files stay certsmith\'s, e.g. so a web server user can read the key')
    .option('--deploy-hook <cmd>', 'command run after each issuance or renewal')
    .option('--deploy-hook-timeout <duration>', 'longest run of one deploy hook before its process group is killed (default 5m)'))
    .action(async (flags: ServerFlags) => {
      const stop = listenForStop();
      const { host, port } = parseListen(flags.listen);
      // refused now, not once the controllers have issued and the files and hooks have run
      if (flags.dashboardListen) await (await import('./dashboard.ts')).loopbackListen(flags.dashboardListen, '--dashboard-listen');
      // the embedded server always serves the Gateway API types, so its shim is on unless turned off
      const options = { ...controllerOptionsFrom(flags), enableGatewayAPI: flags.enableGatewayApi ?? true };
      const encryption = await encryptionFlag(flags.encryptionProviderConfig);
      const dataDir = resolve(flags.dataDir);
      // before anything is made or read there: the token there makes an API admin
      try {
        checkTrustedPath(dataDir, '--data-dir');
        mkdirSync(dataDir, { recursive: true, mode: 0o700 });
        checkDataDir(dataDir);
        await lockDataDir(dataDir); // held until the process exits: one server per data dir
      } catch (e) {
        if (e instanceof DataDirError) throw new CliError(`--data-dir: ${e.message}`);
        if (e instanceof TrustedPathError) throw new CliError(e.message);
        throw e;
      }
      chmodSync(dataDir, 0o700);
      // a problem in the manifests' content applies none of them (as `certsmith apply`), but does not
      // keep the server down: a typo added while it ran would stop every renewal at the next boot
      let manifests: ReturnType<typeof readManifests> = [];
      let manifestProblems: string[] = [];
      try {
        manifests = readManifests(flags.apply);
      } catch (e) {
        if (!(e instanceof ManifestError)) throw e;
        if (e.missing) throw new CliError(`--apply ${e.file}: ${e.message}`);
        manifestProblems = [`error: ${e.file}: ${e.message}`];
      }
      // loaded here, not at the top: every other command would pay for the controllers' start-up
      const [{ realClock }, { createLogger }, { compose }, { openSqliteStore, DamagedStoreError, StoreFormatError }, { ensureServingCertificate, keepServingCertificateFresh }, { writeKubeconfig }] = await Promise.all([
        import('../runtime/clock.ts'), import('../runtime/logger.ts'), import('../composition/index.ts'), import('../store/sqlite/index.ts'),
        import('../server/tls.ts'), import('../server/kubeconfig.ts'),
      ]);
      const logger = createLogger({ name: 'certsmith' });

      if (encryption) {
        logger.info({ resources: encryption.resources.map((r) => ({ resources: r.resources, providers: r.providers.map((p) => p.type) })) }, 'encryption at rest');
      }
      // admission in front of the store: every writer (API, controllers, --apply) is defaulted and validated
      // a store restored without its token file gets a new token: said below, as kubeconfigs break
      const hadStore = existsSync(join(dataDir, 'state.db'));
      let stateStore;
      try {
        stateStore = openSqliteStore({ path: join(dataDir, 'state.db'), encryption });
      } catch (e) {
        if (e instanceof DamagedStoreError || e instanceof StoreFormatError) throw new CliError(`--data-dir: ${e.message}`);
        throw e;
      }
      const stack = compose({ store: stateStore, clock: realClock, logger, builtinAdmission: flags.builtinAdmission });
      const { store } = stack;
      const stopped: Array<() => Promise<void>> = [() => stack.stop()];
      const shutdown = async () => {
        for (const stop of stopped.reverse()) await stop().catch(() => {});
      };
      try {
        await ensureDefaultNamespace(store);
        if (manifests.length) {
          const report = await applyManifests(store, manifests, { defaultNamespace: 'default' });
          manifestProblems = report.errors;
          for (const line of report.applied) logger.info({ applied: line }, 'manifest applied');
        }
        if (manifestProblems.length) {
          for (const line of manifestProblems) process.stderr.write(line + '\n');
          const summary = `--apply: ${manifestProblems.length} problem(s) in the manifests; nothing from them was applied, and what the server holds is served as it is`;
          process.stderr.write(`${summary}\n`);
          logger.error({ problems: manifestProblems }, summary);
        }

        const tls = await ensureServingCertificate(dataDir, { hosts: [host] });
        const hadToken = existsSync(join(dataDir, 'token'));
        const token = ensureAccessToken(dataDir);
        if (hadStore && !hadToken) {
          logger.warn({ token: join(dataDir, 'token') }, 'made a new API token for a data dir whose store has none (restored without its token file?): kubeconfigs from before get 401 Unauthorized; use the new kubeconfig in the data dir');
        }
        // the CLI on this host talks to the socket (no TLS set-up per command); kubectl and remote clients use HTTPS
        const api = await stack.serveApi({ host, port, tls, token, socketPath: join(dataDir, 'api.sock') })
          .catch((e) => { throw listenFailure(e, [['--listen', flags.listen]]); });
        const clientHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
        const server = `https://${clientHost.includes(':') ? `[${clientHost}]` : clientHost}:${api.port}`;
        const kubeconfig = join(dataDir, 'kubeconfig');
        writeKubeconfig(kubeconfig, { server, caPem: tls.caPem, token, socketPath: api.socketPath });
        let servedCA = tls.caPem;
        const stopServingRenewal = keepServingCertificateFresh({
          dataDir, hosts: [host], clock: realClock, current: tls,
          apply(next) {
            api.setServingCertificate(next);
            if (next.caPem !== servedCA) {
              servedCA = next.caPem;
              writeKubeconfig(kubeconfig, { server, caPem: next.caPem, token, socketPath: api.socketPath });
            }
            logger.info('renewed the API server\'s serving certificate');
          },
          onError: (e) => logger.warn({ err: { message: e.message } }, 'could not renew the API server\'s serving certificate; the current one is served until the next check'),
        });
        stopped.push(async () => stopServingRenewal());

        if (flags.controllers) {
          // as one more replica on cert-manager's Lease, so that a `certsmith controller --leader-elect` beside it waits
          const { runServerControllers } = await import('./controller-lease.ts');
          const controllers = await runServerControllers({
            store, clock: realClock, logger,
            start: () => stack.startControllers({ options: { ...options, apiServerCABundle: tls.caPem } })
              .catch((e) => { throw listenFailure(e, [['--metrics-listen', flags.metricsListen], ['--health-listen', flags.healthListen]]); }),
            say: (line) => process.stderr.write(`${line}\n`),
            onLaterStartFailure: (e) => {
              // a server without its controllers would answer /readyz and renew nothing: exit, and let the supervisor restart it
              process.stderr.write(e instanceof CliError ? `error: ${e.message}\n` : `error: the controllers failed to start: ${e.message}\n`);
              process.exitCode = 1;
              process.kill(process.pid, 'SIGTERM');
            },
          });
          stopped.push(() => controllers.stop());
        }
        if (flags.dashboardListen) {
          const dashboard = await (await import('./dashboard.ts')).startDashboardOn(store, flags.dashboardListen, '--dashboard-listen', logger, { initialMs: options.backoffInitialMs, maxMs: options.backoffMaxMs });
          stopped.push(() => dashboard.close());
          process.stdout.write(`certsmith dashboard on ${dashboard.url}\n`);
        }
        process.stdout.write(`certsmith server listening on ${server} (kubeconfig: ${kubeconfig})\n`);
      } catch (e) {
        await shutdown();
        throw e;
      }

      await stop.until(logger);
      await shutdown();
      // a controller that left a handle open must not keep a stopped server alive
      setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref();
    });
}
