// The long-running commands (server, controller, webhook, dashboard, acmesolver) treat SIGTERM and
// SIGINT as a clean stop from the first line of their action (src/cli/signals.ts). Before that,
// the bundle is still loading (a few hundred ms), and Node's default action would end the process
// with 143 mid-start: a supervisor stopping a unit it has just started sees a failure. For those
// commands the signal is held from bin/'s first lines and handed over (releaseHeldSignal). Every
// other command keeps the default: `certsmith get` must still end at a SIGTERM.

const LONG_RUNNING = ['server', 'controller', 'webhook', 'dashboard', 'acmesolver'];
const RELEASE = Symbol.for('certsmith.releaseHeldSignal');

/** The command named on the command line: the first argument that is neither an option nor --kubeconfig's value. */
export function commandOf(args) {
  return args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '--kubeconfig');
}

/** Holds SIGTERM and SIGINT for a long-running command; true when it did. */
export function holdSignals(args, proc = process) {
  if (!LONG_RUNNING.includes(commandOf(args))) return false;
  let held;
  const hold = (signal) => { held ??= signal; };
  proc.on('SIGTERM', hold);
  proc.on('SIGINT', hold);
  proc[RELEASE] = () => {
    proc.off('SIGTERM', hold);
    proc.off('SIGINT', hold);
    delete proc[RELEASE];
    return held;
  };
  return true;
}

/** Stops holding; the signal that arrived meanwhile, if any. Undefined when nothing was held (tests, tsx). */
export function releaseHeldSignal(proc = process) {
  return proc[RELEASE]?.();
}
