// The certsmith command line. Each command lives in its own file and registers itself here.
import { Command, CommanderError } from 'commander';
import { StoreError } from '../store/store.ts';
import { CliError } from './cli-error.ts';
import { registerServerCommand } from './server.ts';
import { registerControllerCommand } from './controller.ts';
import { registerApplyCommand } from './apply.ts';
import { registerGetCommand } from './get.ts';
import { registerDeleteCommand } from './delete.ts';
import { registerRenewCommand } from './renew.ts';
import { registerApproveCommands } from './approve.ts';
import { registerStatusCommand } from './status.ts';
import { registerAcmeSolverCommand } from './acmesolver.ts';
import { registerInspectCommand } from './inspect-command.ts';
import { registerCheckCommand } from './check-api.ts';
import { registerCreateCommand } from './create-certificaterequest.ts';
import { registerDashboardCommand } from './dashboard.ts';
import { registerAcmeAccountCommands } from './acme-account.ts';
import { registerDoctorCommand } from './doctor.ts';
import { registerWebhookCommand } from './webhook.ts';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('certsmith')
    .description('certificate lifecycle controller: cert-manager\'s API on one host or on Kubernetes')
    .option('--kubeconfig <path>', 'kubeconfig to use (default: the first file in $KUBECONFIG, then ~/.kube/config, then the in-cluster account, then ./.certsmith/kubeconfig)')
    .showHelpAfterError()
    .exitOverride();
  registerServerCommand(program);
  registerControllerCommand(program);
  registerApplyCommand(program);
  registerGetCommand(program);
  registerDeleteCommand(program);
  registerRenewCommand(program);
  registerApproveCommands(program);
  registerStatusCommand(program);
  registerAcmeSolverCommand(program);
  registerInspectCommand(program);
  registerCheckCommand(program);
  registerCreateCommand(program);
  registerDashboardCommand(program);
  registerAcmeAccountCommands(program);
  registerDoctorCommand(program);
  registerWebhookCommand(program);
  return program;
}

function describe(e: unknown): string {
  if (e instanceof StoreError) {
    if (e.code === 401) return 'the server refused the credentials (401 Unauthorized): check the token in the kubeconfig';
    return e.message;
  }
  return (e as Error)?.message ?? String(e);
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode; // commander printed it already
    if (!(e instanceof CliError) && !(e instanceof StoreError) && process.env.CERTSMITH_DEBUG) console.error(e);
    process.stderr.write(`error: ${describe(e)}\n`);
    return e instanceof CliError ? e.exitCode : 1;
  }
}

const code = await main(process.argv);
process.exitCode = code;
