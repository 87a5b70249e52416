// certsmith webhook: cert-manager's validating and mutating admission webhook for cluster mode,
// so that a cluster's API server applies the same defaulting and validation (src/api) that the
// embedded server applies in process. Serves HTTPS with a serving certificate signed by a CA it
// keeps in a Secret; the CA injector puts that CA into the webhook configurations (deploy/webhook.yaml).
import type { Command } from 'commander';
import { CliError } from './cli-error.ts';
import { parseListen } from './listen-flag.ts';
import { connectToCluster } from './cluster-connection.ts';
import { listenForStop } from './signals.ts';

interface WebhookFlags {
  listen: string;
  securePort?: string;
  namespace: string;
  caSecretName: string;
  dnsNames?: string;
  context?: string;
}

export const defaultWebhookListen = '127.0.0.1:10250';

/** The Service names a cluster reaches the webhook by (deploy/webhook.yaml's Service `certsmith-webhook`). */
export function defaultDNSNames(namespace: string): string[] {
  return ['certsmith-webhook', `certsmith-webhook.${namespace}`, `certsmith-webhook.${namespace}.svc`];
}

export function webhookListenAddress(flags: Pick<WebhookFlags, 'listen' | 'securePort'>): { host: string; port: number } {
  const listen = parseListen(flags.listen, '--listen');
  if (flags.securePort === undefined) return listen;
  const port = Number(flags.securePort);
  if (!/^\d+$/.test(flags.securePort) || port > 65535) throw new CliError(`--secure-port "${flags.securePort}": expected a port number 0-65535`);
  return { host: listen.host, port };
}

export function parseDNSNames(text: string | undefined, namespace: string): string[] {
  if (text === undefined) return defaultDNSNames(namespace);
  const names = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (names.length === 0) throw new CliError(`--dns-names "${text}": expected a comma-separated list of DNS names or IP addresses`);
  return names;
}

export function registerWebhookCommand(program: Command) {
  program
    .command('webhook')
    .description('serve cert-manager\'s validating (/validate) and mutating (/mutate) admission webhook over HTTPS for a cluster (AdmissionReview v1), with a serving CA kept in a Secret for the CA injector (deploy/webhook.yaml); reaches the API server as "certsmith controller" does (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster config)')
    .option('--listen <host:port>', 'address to serve HTTPS on', defaultWebhookListen)
    .option('--secure-port <port>', 'port to serve HTTPS on (overrides the port of --listen, as cert-manager\'s webhook flag)')
    .option('--namespace <ns>', 'namespace of the CA Secret', 'certsmith')
    .option('--ca-secret-name <name>', 'Secret holding the serving CA (ca.crt, tls.crt, tls.key); created when missing', 'certsmith-webhook-ca')
    .option('--dns-names <names>', 'comma-separated names of the serving certificate; IP addresses become IP SANs (default: certsmith-webhook, certsmith-webhook.<ns>, certsmith-webhook.<ns>.svc)')
    .option('--context <name>', 'kubeconfig context to use instead of the current one')
    .action(async (flags: WebhookFlags, cmd: Command) => {
      const stop = listenForStop();
      const { kubeconfig } = cmd.optsWithGlobals() as { kubeconfig?: string };
      const address = webhookListenAddress(flags);
      const dnsNames = parseDNSNames(flags.dnsNames, flags.namespace);
      const [{ realClock }, { createLogger }, { ServingCertificates }, { startWebhookServer }] = await Promise.all([
        import('../runtime/clock.ts'), import('../runtime/logger.ts'),
        import('../webhook/serving-ca.ts'), import('../webhook/server.ts'),
      ]);
      const logger = createLogger({ name: 'certsmith-webhook' });
      const conn = await connectToCluster(kubeconfig, { context: flags.context, qps: 5, burst: 10, userAgent: 'certsmith-webhook' });
      const { store } = conn;
      let server: Awaited<ReturnType<typeof startWebhookServer>> | undefined;
      const certificates = new ServingCertificates({
        store, namespace: flags.namespace, secretName: flags.caSecretName, clock: realClock, dnsNames,
        onCreated: (reason) => logger.info({ secret: `${flags.namespace}/${flags.caSecretName}`, reason }, 'webhook CA created'),
        onRotated: (cert) => {
          server?.setCertificate(cert.certPem, cert.keyPem);
          logger.info({ notAfter: cert.notAfter.toISOString(), dnsNames }, 'webhook serving certificate issued');
        },
        onError: (err, retryInMs) => logger.error({ err: err.message, retryInMs }, 'webhook serving certificate renewal failed; the current one serves until it expires'),
      });
      let first;
      try {
        first = await certificates.start();
      } catch (e) {
        await store.close();
        throw new CliError(`cannot set up the serving CA in Secret ${flags.namespace}/${flags.caSecretName} on ${conn.server} (from ${conn.source}): ${(e as Error).message}`);
      }
      try {
        server = await startWebhookServer({
          host: address.host, port: address.port, certPem: first.certPem, keyPem: first.keyPem,
          // renewals that keep failing end in an expired certificate no API server accepts
          notReady: () => {
            const cert = certificates.current();
            return cert && cert.notAfter <= realClock.now() ? `the serving certificate expired at ${cert.notAfter.toISOString()} and could not be renewed` : undefined;
          },
          onInternalError: (err) => logger.error({ err: err.message }, 'admission review failed'),
        });
      } catch (e) {
        certificates.stop();
        await store.close();
        throw new CliError(`cannot listen on ${address.host}:${address.port}: ${(e as Error).message}`);
      }
      const url = `https://${server.host.includes(':') ? `[${server.host}]` : server.host}:${server.port}`;
      logger.info({ url, paths: ['/validate', '/mutate', '/healthz', '/readyz'], caSecret: `${flags.namespace}/${flags.caSecretName}`, dnsNames }, 'webhook serving');
      process.stdout.write(`certsmith webhook serving on ${url} (/validate, /mutate); CA in Secret ${flags.namespace}/${flags.caSecretName}\n`);

      await stop.until(logger);
      certificates.stop();
      await server.close().catch(() => {});
      await store.close().catch(() => {});
      setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref();
    });
}
