// certsmith dashboard: the read-only web dashboard against any cluster or certsmith server the
// kubeconfig reaches, on a loopback listener; `certsmith server --dashboard-listen` serves the
// same one from inside the server.
import type { Command } from 'commander';
import type { Store } from '../store/store.ts';
import type { Logger } from '../runtime/logger.ts';
import { durationFlag } from './duration-flag.ts';
import { connect } from './client.ts';
import { CliError } from './cli-error.ts';
import { listenForStop } from './signals.ts';
import { parseListen } from './listen-flag.ts';

interface DashboardFlags {
  listen: string;
  backoffInitial?: string;
  backoffMax?: string;
}


/** HOST:PORT of a loopback address, or a CliError naming the flag (the server checks its --dashboard-listen with it before it starts anything). */
export async function loopbackListen(listen: string, flag: string): Promise<{ host: string; port: number }> {
  const { host, port } = parseListen(listen, flag);
  const { checkLoopback, DashboardAddressError } = await import('../dashboard/index.ts');
  try {
    checkLoopback(host);
  } catch (e) {
    if (e instanceof DashboardAddressError) throw new CliError(`${flag} ${listen}: ${e.message}`);
    throw e;
  }
  return { host, port };
}

/** Starts the dashboard on `listen` over `store`; returns its URL and how to stop it. */
export async function startDashboardOn(store: Store, listen: string, flag: string, logger: Logger, backoff: { initialMs?: number; maxMs?: number } = {}): Promise<{ url: string; close(): Promise<void> }> {
  const { host, port } = await loopbackListen(listen, flag);
  // loaded by the commands that serve it only
  const [{ startDashboard }, { realClock }, { resolveBackoffConfig }] = await Promise.all([
    import('../dashboard/index.ts'), import('../runtime/clock.ts'), import('../shared/backoff.ts'),
  ]);
  let cfg;
  try {
    cfg = resolveBackoffConfig({ ...(backoff.initialMs !== undefined ? { initialMs: backoff.initialMs } : {}), ...(backoff.maxMs !== undefined ? { maxMs: backoff.maxMs } : {}) });
  } catch (e) {
    throw new CliError(`--backoff-initial/--backoff-max: ${(e as Error).message}`);
  }
  try {
    return await startDashboard({ store, host, port, clock: realClock, logger: logger.child({ component: 'dashboard' }), backoff: cfg });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new CliError(`${flag} ${listen}: the address is in use`);
    throw e;
  }
}

export function registerDashboardCommand(program: Command) {
  program
    .command('dashboard')
    .description('serve the read-only web dashboard (certificates, timeline, request → order → challenge) on a loopback address, reading the API the kubeconfig names')
    .option('--listen <host:port>', 'loopback address to serve it on (port 0: any free one)', '127.0.0.1:9404')
    .option('--backoff-initial <duration>', 'the controllers\' --backoff-initial, to show the next attempt', '1h')
    .option('--backoff-max <duration>', 'the controllers\' --backoff-max', '32h')
    .action(async (flags: DashboardFlags, cmd: Command) => {
      const stop = listenForStop();
      const backoff = { initialMs: durationFlag(flags.backoffInitial, '--backoff-initial'), maxMs: durationFlag(flags.backoffMax, '--backoff-max') };
      // before the kubeconfig is read: a wrong address is the first thing to hear about
      await loopbackListen(flags.listen, '--listen');
      const { createLogger } = await import('../runtime/logger.ts');
      const logger = createLogger({ name: 'certsmith' });
      const conn = await connect(cmd);
      let dashboard;
      try {
        dashboard = await startDashboardOn(conn.store, flags.listen, '--listen', logger, backoff);
      } catch (e) {
        await conn.store.close();
        throw e;
      }
      process.stdout.write(`certsmith dashboard on ${dashboard.url} (reading ${conn.config.server})\n`);
      await stop.until(logger);
      await dashboard.close();
      await conn.store.close();
    });
}
