// The certsmith program: its global options and a table of its commands, each registered by
// the module it lives in. Separate from main.ts (the entry, which runs the program) so that a
// test can build it.
import { certsmithVersion } from './version.ts';
import { Command, Help } from 'commander';
import { commandNamed } from '../../bin/held-signals.mjs';

// bin/ decides with it which commands hold a signal while the bundle loads; the program, which module to load
export { commandNamed };

type Register = (program: Command) => void;

/** A command as the program's help lists it: `name [options] <arguments>` and what it does. */
interface CommandSummary {
  term: string;
  description: string;
}

/**
 * Every top-level command: the module that registers it, and its line in the program's help.
 * A command line that names a command loads that module only: `certsmith get` does not load
 * what `server`, `doctor` or `acme` import. `--help`, no command or an unknown one load none:
 * the help is made from the summaries here (program.test.ts checks that they are what the
 * modules register, in the same order).
 */
const commandModules: Array<{ load: () => Promise<Register>; commands: CommandSummary[] }> = [
  {
    load: async () => (await import('./server.ts')).registerServerCommand,
    commands: [{ term: 'server [options]', description: 'run the embedded API server (SQLite) and all controllers on this host' }],
  },
  {
    load: async () => (await import('./controller.ts')).registerControllerCommand,
    commands: [{ term: 'controller [options]', description: 'run the controllers against a Kubernetes API server (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster config, then ./.certsmith/kubeconfig: the order every certsmith command uses)' }],
  },
  {
    load: async () => (await import('./apply.ts')).registerApplyCommand,
    commands: [{ term: 'apply [options]', description: 'create or update resources from manifests (YAML or JSON); nothing is stored if any document is invalid' }],
  },
  {
    load: async () => (await import('./get.ts')).registerGetCommand,
    commands: [{ term: 'get [options] <kind> [names...]', description: 'show resources of a kind, as a table or as YAML/JSON' }],
  },
  {
    load: async () => (await import('./delete.ts')).registerDeleteCommand,
    commands: [{ term: 'delete [options] <kind> <names...>', description: 'delete resources by kind and name' }],
  },
  {
    load: async () => (await import('./renew.ts')).registerRenewCommand,
    commands: [{ term: 'renew [options] [names...]', description: 'mark Certificates for manual renewal (bypasses backoff and renewal windows)' }],
  },
  {
    load: async () => (await import('./approve.ts')).registerApproveCommands,
    commands: [
      { term: 'approve [options] <name>', description: 'approve a CertificateRequest' },
      { term: 'deny [options] <name>', description: 'deny a CertificateRequest' },
    ],
  },
  {
    load: async () => (await import('./status.ts')).registerStatusCommand,
    commands: [{ term: 'status', description: 'show the status of a resource' }],
  },
  {
    load: async () => (await import('./acmesolver.ts')).registerAcmeSolverCommand,
    commands: [{ term: 'acmesolver [options]', description: 'serve one HTTP-01 token (the process of a Kubernetes-mode solver Pod, as cert-manager\'s acmesolver)' }],
  },
  {
    load: async () => (await import('./inspect-command.ts')).registerInspectCommand,
    commands: [{ term: 'inspect', description: 'look inside a resource' }],
  },
  {
    load: async () => (await import('./check-api.ts')).registerCheckCommand,
    commands: [{ term: 'check', description: 'check that something is ready' }],
  },
  {
    load: async () => (await import('./create-certificaterequest.ts')).registerCreateCommand,
    commands: [{ term: 'create', description: 'create a resource' }],
  },
  {
    load: async () => (await import('./dashboard.ts')).registerDashboardCommand,
    commands: [{ term: 'dashboard [options]', description: 'serve the read-only web dashboard (certificates, timeline, request → order → challenge) on a loopback address, reading the API the kubeconfig names' }],
  },
  {
    load: async () => (await import('./acme-account.ts')).registerAcmeAccountCommands,
    commands: [
      { term: 'revoke [options] <name>', description: 'revoke a Certificate\'s current certificate at its ACME CA (RFC 8555 §7.6, with the issuer\'s account key)' },
      { term: 'acme', description: 'ACME account operations' },
    ],
  },
  {
    load: async () => (await import('./doctor.ts')).registerDoctorCommand,
    commands: [{ term: 'doctor [options] [certificate]', description: 'check why Certificates are not issued (DNS, HTTP-01, CAA, DNS-01 TXT, ACME account, problems, rate limits, issuer, backoff, files, deploy hook); exit 1 when something blocks issuance or delivery' }],
  },
  {
    load: async () => (await import('./webhook.ts')).registerWebhookCommand,
    commands: [{ term: 'webhook [options]', description: 'serve cert-manager\'s validating (/validate) and mutating (/mutate) admission webhook over HTTPS for a cluster (AdmissionReview v1), with a serving CA kept in a Secret for the CA injector (deploy/webhook.yaml); reaches the API server as "certsmith controller" does (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster config)' }],
  },
];

const nameOf = (c: CommandSummary) => c.term.split(' ')[0];

/**
 * The program for `args` (argv without node and script): with the module of the command they
 * name, else with every command as a summary only (enough for the help, the unknown-command
 * error and its suggestions).
 */
export async function buildProgram(args: string[] = []): Promise<Command> {
  const program = new Command();
  program
    .name('certsmith')
    .description('certificate lifecycle controller: cert-manager\'s API on one host or on Kubernetes')
    .option('--kubeconfig <path>', 'kubeconfig to use (default: the first file in $KUBECONFIG, then ~/.kube/config, then the in-cluster account, then ./.certsmith/kubeconfig)')
    .option('--request-timeout <duration>', 'how long to wait for the answer to one request before giving up, as kubectl\'s (e.g. 10s; 0 waits forever; default 60s)')
    .showHelpAfterError()
    .exitOverride();
  const named = commandNamed(args);
  const one = commandModules.find((m) => m.commands.some((c) => nameOf(c) === named));
  if (one) {
    (await one.load())(program);
    return program;
  }
  // only here, where no command is named: package.json is read for the help and --version alone
  program.version(certsmithVersion(), '-V, --version', 'print the version of certsmith');
  const terms = new Map<string, string>();
  for (const c of commandModules.flatMap((m) => m.commands)) {
    program.command(nameOf(c)).description(c.description);
    terms.set(nameOf(c), c.term);
  }
  // the summaries' terms; commander's own for its `help` command
  program.configureHelp({
    subcommandTerm(this: Help, cmd: Command) {
      return terms.get(cmd.name()) ?? Help.prototype.subcommandTerm.call(this, cmd);
    },
  });
  return program;
}
