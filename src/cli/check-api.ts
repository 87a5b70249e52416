// certsmith check api [--wait D], as cmctl: the API is ready when both cert-manager groups answer
// discovery and the server accepts (and admits) a dry-run Certificate, which is what an install
// script needs to know before it applies manifests.
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { Certificate } from '../api/resources.ts';
import { durationFlag } from './duration-flag.ts';
import type { HttpStore } from '../store/http/http-store.ts';
import { StoreError } from '../store/store.ts';
import { connect } from './client.ts';
import { CliError } from './cli-error.ts';

const REQUIRED_GROUPS: { groupVersion: string; resource: string }[] = [
  { groupVersion: 'cert-manager.io/v1', resource: 'certificates' },
  { groupVersion: 'acme.cert-manager.io/v1', resource: 'orders' },
];

const RETRY_INTERVAL_MS = 2_000;

function reasonOf(e: unknown): string {
  if (e instanceof StoreError && e.code === 401) return 'the server refused the credentials (401 Unauthorized)';
  return (e as Error)?.message ?? String(e);
}

/** undefined when ready, otherwise why not. */
export async function apiNotReadyReason(store: HttpStore, namespace: string): Promise<string | undefined> {
  for (const g of REQUIRED_GROUPS) {
    let body: { resources?: { name?: string }[] };
    try {
      body = (await store.request('GET', `/apis/${g.groupVersion}`)).body as typeof body;
    } catch (e) {
      return `discovery of ${g.groupVersion} failed: ${reasonOf(e)}`;
    }
    if (!body?.resources?.some((r) => r.name === g.resource)) return `the server does not serve ${g.resource}.${g.groupVersion.split('/')[0]} (discovery of ${g.groupVersion})`;
  }
  // a random name, so that a real object of the same name can never make the check fail
  const name = `certsmith-check-api-${randomBytes(4).toString('hex')}`;
  try {
    await store.create(Certificate, {
      apiVersion: 'cert-manager.io/v1', kind: 'Certificate',
      metadata: { name, namespace },
      spec: { secretName: name, dnsNames: ['check-api.certsmith.invalid'], issuerRef: { name: 'check-api' } },
    }, { dryRun: true });
  } catch (e) {
    return `a dry-run create of a Certificate was refused: ${reasonOf(e)}`;
  }
  return undefined;
}

export function registerCheckCommand(program: Command) {
  const check = program.command('check').description('check that something is ready');
  check
    .command('api')
    .description('whether the cert-manager API is ready: discovery of both groups and a dry-run Certificate create')
    .option('--wait <duration>', 'keep retrying until this much time has passed (e.g. 2m)', '0s')
    .option('-n, --namespace <ns>', 'namespace for the dry-run Certificate')
    .action(async (opts: { wait: string; namespace?: string }, cmd: Command) => {
      const waitMs = durationFlag(opts.wait, '--wait');
      const conn = await connect(cmd);
      const deadline = Date.now() + waitMs;
      try {
        for (;;) {
          const reason = await apiNotReadyReason(conn.store, opts.namespace ?? conn.namespace);
          if (!reason) {
            process.stdout.write('The cert-manager API is ready\n');
            return;
          }
          const left = deadline - Date.now();
          // cmctl's exit code for a --wait that ran out is timeout(1)'s 124; one look is 1
          if (left <= 0) throw new CliError(`Not ready: ${reason}`, waitMs > 0 ? 124 : 1);
          process.stderr.write(`Not ready: ${reason}\n`);
          await new Promise((r) => setTimeout(r, Math.min(RETRY_INTERVAL_MS, left)));
        }
      } finally {
        await conn.store.close();
      }
    });
}
