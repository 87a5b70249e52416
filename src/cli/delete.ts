// certsmith delete <kind> NAME...
import type { Command } from 'commander';
import { connect, resourceTypeNamed, qualifiedKind } from './client.ts';

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
        for (const name of names) {
          await conn.store.delete(type, ns, name);
          process.stdout.write(`${qualifiedKind(type)} "${name}" deleted\n`);
        }
      } finally {
        await conn.store.close();
      }
    });
}
