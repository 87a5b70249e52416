// Long-running commands (server, controller, acmesolver) run until SIGINT or SIGTERM.
import type { Logger } from '../runtime/logger.ts';

export function untilSignal(logger: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
