// Long-running commands (server, controller, webhook, dashboard, acmesolver) run until SIGINT or
// SIGTERM. Each listens from the first line of its action, before it starts anything: a signal
// during start-up (systemd stopping a unit it has just started, a test stopping a server the
// moment it says it listens) is then a clean stop once the start is done, where the signal's
// default action would kill the process half-way (seen: exit by SIGTERM, nothing shut down).
// While the bundle loads, bin/held-signals.mjs holds the signal and hands it over here.
import type { Logger } from '../runtime/logger.ts';

export interface StopRequest {
  /** resolves at the first SIGINT or SIGTERM, saying so in the log; a second one ends the process at once */
  until(logger: Logger): Promise<void>;
}

/** bin/held-signals.mjs's hand-over, under this registry symbol: the signal that came while the bundle loaded */
const RELEASE_HELD_SIGNAL = Symbol.for('certsmith.releaseHeldSignal');

export function listenForStop(): StopRequest {
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // ours installed first, then bin/'s released: at no moment is the default action back
    const held = (process as unknown as Record<symbol, (() => NodeJS.Signals | undefined) | undefined>)[RELEASE_HELD_SIGNAL]?.();
    if (held) onSignal(held);
  });
  return {
    async until(logger) {
      const signal = await signalled;
      logger.info({ signal }, 'shutting down');
    },
  };
}
