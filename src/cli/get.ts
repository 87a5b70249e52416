// certsmith get <kind> [NAME...]: kubectl get for certsmith's kinds, with the same table columns.
import type { Command } from 'commander';
import { printedYaml } from './yaml-output.ts';
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';
import { StoreError } from '../store/store.ts';
import { tableFor } from '../server/table.ts';
import { connect, resourceTypeNamed, qualifiedKind } from './client.ts';
import { CliError } from './cli-error.ts';
import { alignColumns } from './columns.ts';

type OutputFormat = 'table' | 'wide' | 'yaml' | 'json' | 'name';

/** Columns separated by three spaces, as kubectl's tabwriter prints them. */
function formatColumns(rows: string[][]): string {
  return alignColumns(rows, 3).map((l) => l.trimEnd()).join('\n') + '\n';
}

export function renderTable(type: ResourceType, objs: KubeObject[], opts: { wide: boolean; withNamespace: boolean; now?: Date }): string {
  const table = tableFor(type, objs, { now: opts.now, includeObject: 'None' });
  const shown = table.columnDefinitions.map((c, i) => ({ c, i })).filter(({ c }) => opts.wide || c.priority === 0);
  const header = [...(opts.withNamespace ? ['NAMESPACE'] : []), ...shown.map(({ c }) => c.name.toUpperCase())];
  const rows = table.rows.map((r, n) => [
    ...(opts.withNamespace ? [objs[n].metadata.namespace ?? ''] : []),
    ...shown.map(({ i }) => String(r.cells[i] ?? '')),
  ]);
  return formatColumns([header, ...rows]);
}

function withoutManagedFields(meta: KubeObject['metadata']): KubeObject['metadata'] {
  const { managedFields: _, ...rest } = meta;
  return rest;
}

export function registerGetCommand(program: Command) {
  program
    .command('get')
    .description('show resources of a kind, as a table or as YAML/JSON')
    .argument('<kind>', 'resource kind, plural, singular or short name')
    .argument('[names...]', 'objects by name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-A, --all-namespaces', 'every namespace')
    .option('-l, --selector <selector>', 'label selector, e.g. app=web,tier!=db')
    .option('-o, --output <format>', 'yaml | json | wide | name')
    .option('--show-managed-fields', 'keep metadata.managedFields in yaml and json output (hidden by default, as kubectl hides them)')
    .action(async (kind: string, names: string[], opts: { namespace?: string; allNamespaces?: boolean; selector?: string; output?: string; showManagedFields?: boolean }, cmd: Command) => {
      const type = resourceTypeNamed(kind);
      const format = (opts.output ?? 'table') as OutputFormat;
      if (!['table', 'wide', 'yaml', 'json', 'name'].includes(format)) throw new CliError(`unknown output format "${opts.output}": use yaml, json, wide or name`);
      const name = names[0];
      if (name && opts.allNamespaces) throw new CliError('a resource cannot be retrieved by name across all namespaces');
      const conn = await connect(cmd);
      try {
        const ns = !type.namespaced || opts.allNamespaces ? undefined : opts.namespace ?? conn.namespace;
        let objs: KubeObject[];
        const missing: string[] = [];
        if (name) {
          // as kubectl: each name that is missing is an error line after what was found, and the exit is 1
          objs = [];
          for (const n of names) {
            const obj = await conn.store.get(type, ns, n);
            if (obj) objs.push(obj);
            else missing.push(`${type.group ? `${type.plural}.${type.group}` : type.plural} "${n}" not found`);
          }
          if (names.length === 1 && missing.length) throw new StoreError('NotFound', missing[0]);
        } else {
          objs = (await conn.store.list(type, { namespace: ns, labelSelector: opts.selector })).items;
        }
        if (!name && objs.length === 0 && (format === 'table' || format === 'wide')) {
          process.stderr.write(ns ? `No resources found in ${ns} namespace.\n` : 'No resources found\n');
          return;
        }
        // server-side apply's bookkeeping, which kubectl leaves out unless asked
        if (!opts.showManagedFields) objs = objs.map((o) => (o.metadata.managedFields ? { ...o, metadata: withoutManagedFields(o.metadata) } : o));
        const single = names.length === 1 ? objs[0] : undefined;
        const asList = () => ({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objs });
        switch (format) {
          case 'yaml': {
            process.stdout.write(await printedYaml(single ?? asList()));
            break;
          }
          case 'json':
            process.stdout.write(JSON.stringify(single ?? asList(), null, 4) + '\n');
            break;
          case 'name':
            for (const o of objs) process.stdout.write(`${qualifiedKind(type)}/${o.metadata.name}\n`);
            break;
          default:
            if (objs.length) process.stdout.write(renderTable(type, objs, { wide: format === 'wide', withNamespace: !!opts.allNamespaces && type.namespaced }));
        }
        for (const m of missing) process.stderr.write(`error: ${m}\n`);
        if (missing.length) process.exitCode = 1;
      } finally {
        await conn.store.close();
      }
    });
}
