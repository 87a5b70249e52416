// The certsmith program: its global options and a table of its commands, each registered by
// the module it lives in. Separate from main.ts (the entry, which runs the program) so that a
// test can build it.
import { Command } from 'commander';

type Register = (program: Command) => void;

/**
 * Every top-level command and the module that registers it. A command line that names one
 * loads that module only: `certsmith get` does not load what `server`, `doctor` or `acme` import.
 * `--help`, `help`, no command or an unknown one load them all (the help lists every command).
 */
const commandModules: Array<{ names: string[]; load: () => Promise<Register> }> = [
  { names: ['server'], load: async () => (await import('./server.ts')).registerServerCommand },
  { names: ['controller'], load: async () => (await import('./controller.ts')).registerControllerCommand },
  { names: ['apply'], load: async () => (await import('./apply.ts')).registerApplyCommand },
  { names: ['get'], load: async () => (await import('./get.ts')).registerGetCommand },
  { names: ['delete'], load: async () => (await import('./delete.ts')).registerDeleteCommand },
  { names: ['renew'], load: async () => (await import('./renew.ts')).registerRenewCommand },
  { names: ['approve', 'deny'], load: async () => (await import('./approve.ts')).registerApproveCommands },
  { names: ['status'], load: async () => (await import('./status.ts')).registerStatusCommand },
  { names: ['acmesolver'], load: async () => (await import('./acmesolver.ts')).registerAcmeSolverCommand },
  { names: ['inspect'], load: async () => (await import('./inspect-command.ts')).registerInspectCommand },
  { names: ['check'], load: async () => (await import('./check-api.ts')).registerCheckCommand },
  { names: ['create'], load: async () => (await import('./create-certificaterequest.ts')).registerCreateCommand },
  { names: ['dashboard'], load: async () => (await import('./dashboard.ts')).registerDashboardCommand },
  { names: ['acme', 'revoke'], load: async () => (await import('./acme-account.ts')).registerAcmeAccountCommands },
  { names: ['doctor'], load: async () => (await import('./doctor.ts')).registerDoctorCommand },
  { names: ['webhook'], load: async () => (await import('./webhook.ts')).registerWebhookCommand },
];

/** The command a command line names: its first operand after the program's own options. */
export function commandNamed(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--kubeconfig') i++; // the one global option that takes a value
    else if (a === '--') return args[i + 1];
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/** The program with the commands `args` (argv without node and script) can reach: the one it names, else all. */
export async function buildProgram(args: string[] = []): Promise<Command> {
  const program = new Command();
  program
    .name('certsmith')
    .description('certificate lifecycle controller: cert-manager\'s API on one host or on Kubernetes')
    .option('--kubeconfig <path>', 'kubeconfig to use (default: the first file in $KUBECONFIG, then ~/.kube/config, then the in-cluster account, then ./.certsmith/kubeconfig)')
    .showHelpAfterError()
    .exitOverride();
  const named = commandNamed(args);
  const one = commandModules.find((c) => named !== undefined && c.names.includes(named));
  // the modules load in parallel; they register in the table's order, which the help follows
  const registers = await Promise.all((one ? [one] : commandModules).map((c) => c.load()));
  for (const register of registers) register(program);
  return program;
}
