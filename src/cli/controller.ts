// certsmith controller: the same controllers as `certsmith server`, against a Kubernetes API
// server (a real cluster, or an embedded server started with --no-controllers), optionally
// as one of several replicas that elect a leader on a coordination.k8s.io/v1 Lease.
import type { Command } from 'commander';
import { parseDuration } from '../api/duration.ts';
import { Certificate } from '../api/resources.ts';
import { CliError } from './cli-error.ts';
import { connectToCluster } from './cluster-connection.ts';
import { addControllerFlags, controllerOptionsFrom, type ControllerFlags } from './server.ts';
import { listenForStop } from './signals.ts';
import { currentLeaseHolder, leaderIdentity, leaseName } from './controller-lease.ts';

interface ControllerCommandFlags extends ControllerFlags {
  context?: string;
  namespace?: string;
  leaderElect?: boolean;
  leaderElectionNamespace: string;
  leaderElectionLeaseDuration: string;
  leaderElectionRenewDeadline: string;
  leaderElectionRetryPeriod: string;
  kubeApiQps: string;
  kubeApiBurst: string;
  acmeHttp01SolverImage: string;
}


function durationMs(value: string, flag: string): number {
  try {
    const ms = parseDuration(value);
    if (ms <= 0) throw new Error('must be positive');
    return ms;
  } catch (e) {
    throw new CliError(`${flag} "${value}": ${(e as Error).message}`);
  }
}

function nonNegative(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new CliError(`${flag} "${value}": expected a number ≥ 0 (0 lifts the limit)`);
  return n;
}

/** client-go's identity: the host (the pod's name in a cluster) plus a random part, unique per process. */
export function registerControllerCommand(program: Command) {
  addControllerFlags(program
    .command('controller')
    .description('run the controllers against a Kubernetes API server (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster config, then ./.certsmith/kubeconfig: the order every certsmith command uses)')
    .option('--context <name>', 'kubeconfig context to use instead of the current one')
    .option('--namespace <ns>', 'watch this namespace only (default: all namespaces)')
    .option('--leader-elect', 'elect one active replica on a Lease; the others wait')
    .option('--leader-election-namespace <ns>', 'namespace of the leader election Lease', 'kube-system')
    .option('--leader-election-lease-duration <duration>', 'how long followers wait before taking over a Lease that is not renewed', '60s')
    .option('--leader-election-renew-deadline <duration>', 'how long the leader keeps trying to renew before it gives up', '40s')
    .option('--leader-election-retry-period <duration>', 'how often to try to acquire or renew the Lease', '15s')
    .option('--kube-api-qps <n>', 'client-side limit of API requests per second (0: unlimited)', '20')
    .option('--kube-api-burst <n>', 'requests allowed above the QPS limit in a burst', '50')
    .option('--acme-http01-solver-image <image>', 'image of the HTTP-01 solver Pods (runs `certsmith acmesolver`)', 'certsmith:latest'))
    .action(async (flags: ControllerCommandFlags, cmd: Command) => {
      const stop = listenForStop();
      const { kubeconfig } = cmd.optsWithGlobals() as { kubeconfig?: string };
      // in a cluster, HTTP-01 tokens are served by solver Pods behind an Ingress, as cert-manager does
      const options = {
        ...controllerOptionsFrom(flags),
        http01Mode: 'kubernetes' as const, acmeHTTP01SolverImage: flags.acmeHttp01SolverImage,
      };
      const qps = nonNegative(flags.kubeApiQps, '--kube-api-qps');
      const burst = nonNegative(flags.kubeApiBurst, '--kube-api-burst');
      const election = flags.leaderElect ? {
        leaseDurationMs: durationMs(flags.leaderElectionLeaseDuration, '--leader-election-lease-duration'),
        renewDeadlineMs: durationMs(flags.leaderElectionRenewDeadline, '--leader-election-renew-deadline'),
        retryPeriodMs: durationMs(flags.leaderElectionRetryPeriod, '--leader-election-retry-period'),
      } : undefined;
      if (election && election.leaseDurationMs <= election.renewDeadlineMs) throw new CliError('--leader-election-lease-duration must be longer than --leader-election-renew-deadline');
      if (election && election.renewDeadlineMs <= 1.2 * election.retryPeriodMs) throw new CliError('--leader-election-renew-deadline must be longer than 1.2 × --leader-election-retry-period');

      const [{ realClock }, { createLogger }, { startControllerManager }, { createMetrics }, { startOperationalServers }, { LeaderElector }] = await Promise.all([
        import('../runtime/clock.ts'), import('../runtime/logger.ts'), import('../composition/index.ts'),
        import('../metrics/registry.ts'), import('../metrics/http.ts'), import('../runtime/leaderelection.ts'),
      ]);
      const logger = createLogger({ name: 'certsmith' });
      const conn = await connectToCluster(kubeconfig, { context: flags.context, qps, burst });
      const { store } = conn;
      // Fail now, with the reason, rather than from every informer: unreachable, refused, or no CRDs.
      try {
        await store.list(Certificate, { namespace: flags.namespace, limit: 1 });
      } catch (e) {
        await store.close();
        throw new CliError(`cannot list Certificates on ${conn.server} (from ${conn.source}): ${(e as Error).message}`);
      }

      // Served from the start so that followers answer probes and scrapes too.
      const metrics = createMetrics({ clock: realClock });
      let controllers: Awaited<ReturnType<typeof startControllerManager>> | undefined;
      let starting: Promise<void> | undefined;
      let stopping = false;
      const opsListen = { metrics: options.metricsListen, health: options.healthListen };
      const servers = opsListen.metrics !== '' || opsListen.health !== ''
        ? await startOperationalServers({
          metricsAddress: opsListen.metrics ?? '127.0.0.1:9402', healthAddress: opsListen.health ?? '127.0.0.1:9403',
          registry: metrics.registry,
          // a follower is healthy while it waits; the leader once its caches have synced
          ready: () => (controllers ? controllers.manager.isReady() : !!election && !starting),
        })
        : undefined;
      if (servers) process.stdout.write(`certsmith controller: metrics on http://${servers.metricsAddress}/metrics, health probes on http://${servers.healthAddress}\n`);
      const run = () => {
        starting = (async () => {
          // no admission added: the cluster's API server admits every write
          controllers = await startControllerManager({
            store, clock: realClock, logger, metrics, namespace: flags.namespace,
            options: { ...options, metricsListen: '', healthListen: '', apiServerCABundle: conn.caPem },
          });
        })();
        return starting;
      };

      const shutdownSteps: Array<() => Promise<void>> = [];
      // Stop writing before the Lease goes back, so a successor never overlaps with us.
      const stopControllers = async () => {
        await starting?.catch(() => {});
        await controllers?.stop();
      };
      const fatal = (message: string, err?: Error) => {
        logger.error({ err: err?.message }, message);
        process.stderr.write(`certsmith controller: ${message}${err ? `: ${err.message}` : ''}\n`);
        // as cert-manager: exit and let the Deployment restart us, rather than risk two writers
        process.exit(1);
      };

      const where = `${conn.server}${flags.namespace ? ` (namespace ${flags.namespace})` : ''}`;
      if (election) {
        const identity = leaderIdentity();
        const elector = new LeaderElector({
          store, namespace: flags.leaderElectionNamespace, name: leaseName, identity, clock: realClock, logger,
          ...election,
          onStartedLeading: () => {
            if (stopping) return;
            process.stdout.write(`certsmith controller: became leader (identity ${identity}, lease ${flags.leaderElectionNamespace}/${leaseName}); starting controllers against ${where}\n`);
            run().catch((e: Error) => fatal('the controllers failed to start', e));
          },
          onStoppedLeading: () => {
            if (!stopping) fatal(`lost the leader election lease ${flags.leaderElectionNamespace}/${leaseName}`);
          },
          onNewLeader: (leader) => {
            if (leader !== identity) process.stdout.write(`certsmith controller: the leader is ${leader}\n`);
          },
        });
        shutdownSteps.push(stopControllers, () => elector.stop());
        elector.start();
        process.stdout.write(`certsmith controller: waiting for the lease ${flags.leaderElectionNamespace}/${leaseName} as ${identity} (server ${conn.server})\n`);
      } else {
        // without the election nothing stops two sets of controllers: say so when another holds the Lease
        const holder = await currentLeaseHolder(store, flags.leaderElectionNamespace, new Date()).catch(() => undefined);
        if (holder) {
          process.stderr.write(`certsmith controller: warning: the controllers of ${holder} hold the Lease ${flags.leaderElectionNamespace}/${leaseName}; `
            + 'running without --leader-elect, these controllers work on the same objects beside them: stop one set, or run with --leader-elect\n');
        }
        shutdownSteps.push(stopControllers);
        await run();
        process.stdout.write(`certsmith controller running against ${where}\n`);
      }
      if (servers) shutdownSteps.push(() => servers.close());
      shutdownSteps.push(() => store.close());

      await stop.until(logger);
      stopping = true;
      for (const step of shutdownSteps) await step().catch((e: Error) => logger.warn({ err: e.message }, 'shutdown step failed'));
      // a controller that left a handle open must not keep a stopped process alive
      setTimeout(() => process.exit(process.exitCode ?? 0), 2000).unref();
    });
}
