// certsmith renew NAME... | --all [-n NS | -A] [-l SELECTOR]: cmctl's manual trigger. Sets
// Issuing=True with reason ManuallyTriggered, which bypasses backoff, renewal windows and policy.
import type { Command } from 'commander';
import { setCondition } from '../api/conditions.ts';
import { Certificate } from '../api/resources.ts';
import { isConflict, type Store } from '../store/store.ts';
import type { Certificate as CertificateObj } from '../api/types.ts';
import { connect } from './client.ts';
import { CliError } from './cli-error.ts';

export async function triggerRenewal(store: Store, namespace: string, name: string, now = new Date()): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const crt = await store.get<CertificateObj>(Certificate, namespace, name);
    if (!crt) throw new CliError(`certificate ${namespace}/${name} not found`);
    const conditions = setCondition(crt.status?.conditions, {
      type: 'Issuing', status: 'True', reason: 'ManuallyTriggered', message: 'Certificate re-issuance manually triggered',
      observedGeneration: crt.metadata.generation,
    }, now);
    try {
      await store.updateStatus(Certificate, { ...crt, status: { ...(crt.status ?? {}), conditions } }, { fieldManager: 'certsmith-renew' });
      return;
    } catch (e) {
      // a controller wrote in between: read again, a bounded number of times
      if (!isConflict(e) || attempt >= 4) throw e;
    }
  }
}

/**
 * The named Certificates, each looked up before any is renewed, as cmctl's renew does: one
 * missing name renews none (a script would otherwise not know which were renewed).
 */
export async function namedCertificates(store: Store, namespace: string, names: string[]): Promise<{ namespace: string; name: string }[]> {
  const found = await Promise.all(names.map((name) => store.get<CertificateObj>(Certificate, namespace, name)));
  const missing = names.filter((_, i) => !found[i]);
  if (missing.length) {
    throw new CliError(`${missing.map((n) => `certificate ${namespace}/${n} not found`).join('; ')}; no Certificate was renewed`);
  }
  return names.map((name) => ({ namespace, name }));
}

export function registerRenewCommand(program: Command) {
  program
    .command('renew')
    .description('mark Certificates for manual renewal (bypasses backoff and renewal windows)')
    .argument('[names...]', 'Certificate names')
    .option('-n, --namespace <ns>', 'namespace')
    .option('-A, --all-namespaces', 'across all namespaces (with --all or -l)')
    .option('--all', 'every Certificate in the namespace')
    .option('-l, --selector <selector>', 'label selector')
    .action(async (names: string[], opts: { namespace?: string; allNamespaces?: boolean; all?: boolean; selector?: string }, cmd: Command) => {
      if (names.length && (opts.all || opts.selector || opts.allNamespaces)) throw new CliError('cannot specify Certificate names in conjunction with --all, -l or -A');
      if (opts.all && opts.selector) throw new CliError('cannot specify --all and -l together');
      if (!names.length && !opts.all && !opts.selector) throw new CliError('please supply one or more Certificate names, or use --all or -l');
      const conn = await connect(cmd);
      try {
        const ns = opts.namespace ?? conn.namespace;
        let targets: { namespace: string; name: string }[];
        if (names.length) {
          targets = await namedCertificates(conn.store, ns, names);
        } else {
          const list = await conn.store.list<CertificateObj>(Certificate, { namespace: opts.allNamespaces ? undefined : ns, labelSelector: opts.selector });
          targets = list.items.map((c) => ({ namespace: c.metadata.namespace!, name: c.metadata.name! }));
          // cmctl's words, on stderr: a selector that matched nothing is not silent
          if (!targets.length) process.stderr.write(opts.allNamespaces ? 'No Certificates found\n' : `No Certificates found in ${ns} namespace.\n`);
        }
        for (const t of targets) {
          await triggerRenewal(conn.store, t.namespace, t.name);
          process.stdout.write(`Manually triggered issuance of Certificate ${t.namespace}/${t.name}\n`);
        }
      } finally {
        await conn.store.close();
      }
    });
}
