// certsmith apply -f PATH: kubectl apply for certsmith's kinds, validating everything first.
import type { Command } from 'commander';
import { connect } from './client.ts';
import { readManifests, ManifestError } from './manifests.ts';
import { applyManifests } from './apply-manifests.ts';
import { CliError } from './cli-error.ts';
import type { FieldValidation } from '../api/unknown-fields.ts';

/** kubectl's --validate values */
const validateModes: Record<string, FieldValidation> = { strict: 'Strict', true: 'Strict', warn: 'Warn', ignore: 'Ignore', false: 'Ignore' };

export function registerApplyCommand(program: Command) {
  program
    .command('apply')
    .description('create or update resources from manifests (YAML or JSON); nothing is stored if any document is invalid')
    .requiredOption('-f, --filename <path>', 'file, folder, or - for stdin (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('-n, --namespace <ns>', 'namespace for documents that name none; a document naming another is refused, as kubectl refuses it')
    .option('--validate <mode>', 'fields the schema does not know: strict (refuse the documents, the default), warn (drop them and say so) or ignore (drop them)', 'strict')
    .action(async (opts: { filename: string[]; namespace?: string; validate: string }, cmd: Command) => {
      const fieldValidation = validateModes[opts.validate.toLowerCase()];
      if (!fieldValidation) throw new CliError(`--validate "${opts.validate}": expected strict, warn or ignore (true and false as kubectl: strict and ignore)`);
      let manifests;
      try {
        manifests = readManifests(opts.filename);
      } catch (e) {
        if (e instanceof ManifestError) throw new CliError(`${e.file}: ${e.message}`);
        throw e;
      }
      if (!manifests.length) throw new CliError('no objects passed to apply');
      const conn = await connect(cmd);
      try {
        const report = await applyManifests(conn.store, manifests, { defaultNamespace: opts.namespace ?? conn.namespace, enforceNamespace: opts.namespace !== undefined, fieldValidation });
        for (const line of report.warnings) process.stderr.write(line + '\n');
        for (const line of report.applied) process.stdout.write(line + '\n');
        for (const line of report.errors) process.stderr.write(line + '\n');
        if (report.errors.length) process.exitCode = 1;
      } finally {
        await conn.store.close();
      }
    });
}
