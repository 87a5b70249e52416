// certsmith delete <kind> NAME...
import type { Command } from 'commander';
import { connect, resourceTypeNamed, qualifiedKind } from './client.ts';
import { isNotFound } from '../store/store.ts';

export function registerDeleteCommand(program: Command) {
  program
    .command('delete')
    .description('delete resources by kind and name')
    .argument('<kind>', 'resource kind, plural, singular or short name')
    .argument('<names...>', 'names of the objects')
    .option('-n, --namespace <ns>', 'namespace')
    .action(async (kind: string, names: string[], opts: { namespace?: string }, cmd: Command) => {
      const type = resourceTypeNamed(kind);
      const conn = await connect(cmd);
      try {
        const ns = type.namespaced ? opts.namespace ?? conn.namespace : undefined;
        // as kubectl: a name that is not there is reported and the others are still deleted
        let missing = 0;
        for (const name of names) {
          try {
            await conn.store.delete(type, ns, name);
          } catch (e) {
            if (!isNotFound(e)) throw e;
            process.stderr.write(`error: ${(e as Error).message}\n`);
            missing++;
            continue;
          }
          process.stdout.write(`${qualifiedKind(type)} "${name}" deleted\n`);
        }
        if (missing) process.exitCode = 1;
      } finally {
        await conn.store.close();
      }
    });
}
