// The long-running commands (server, controller, webhook, dashboard, acmesolver) treat SIGTERM and
// SIGINT as a clean stop from the first line of their action (src/cli/signals.ts). Before that,
// the bundle is still loading (a few hundred ms), and Node's default action would end the process
// with 143 mid-start: a supervisor stopping a unit it has just started sees a failure. For those
// commands the signal is held from bin/'s first lines and handed over (releaseHeldSignal). Every
// other command keeps the default: `certsmith get` must still end at a SIGTERM.

const LONG_RUNNING = ['server', 'controller', 'webhook', 'dashboard', 'acmesolver'];
const RELEASE = Symbol.for('certsmith.releaseHeldSignal');

/**
 * The command a command line names: its first operand after the program's own options (`help get`
 * names get). Here, not in src/cli/program.ts, which imports it: bin/ needs it before the bundle loads.
 */
export function commandNamed(args) {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--kubeconfig' || a === '--request-timeout') i++; // the global options that take a value
    else if (a === '--') return args[i + 1];
    else if (a === 'help' && args[i + 1] && !args[i + 1].startsWith('-')) return args[i + 1];
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/** Holds SIGTERM and SIGINT for a long-running command; true when it did. */
export function holdSignals(args, proc = process) {
  if (!LONG_RUNNING.includes(commandNamed(args))) return false;
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
