// The certsmith command line: runs the program (program.ts), whose commands each live in a file
// of their own, and turns what fails into a message and an exit code.
import { CommanderError } from 'commander';
import { StoreError } from '../store/store.ts';
import { CliError, describeOpenFilesError } from './cli-error.ts';
import { buildProgram } from './program.ts';

function describe(e: unknown): string {
  if (e instanceof StoreError) {
    if (e.code === 401) return 'the server refused the credentials (401 Unauthorized): check the token in the kubeconfig';
    return e.message;
  }
  return describeOpenFilesError(e) ?? (e as Error)?.message ?? String(e);
}

export async function main(argv: string[]): Promise<number> {
  try {
    const program = await buildProgram(argv.slice(2));
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode; // commander printed it already
    if (!(e instanceof CliError) && !(e instanceof StoreError) && process.env.CERTSMITH_DEBUG) console.error(e);
    process.stderr.write(`error: ${describe(e)}\n`);
    return e instanceof CliError ? e.exitCode : 1;
  }
}

// Output that cannot be written (a full disk) is one error line, not Node's trace of an
// unhandled 'error' event; a reader that went away (`| head`) ends the command quietly, as kubectl.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') process.stderr.write(`error: cannot write the output: ${e.message}\n`);
  process.exit(e.code === 'EPIPE' ? 0 : 1);
});

const code = await main(process.argv);
process.exitCode = code;
