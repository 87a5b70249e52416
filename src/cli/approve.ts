// certsmith approve|deny NAME [-n NS] [--reason R] [--message M], as cmctl: sets the Approved
// or Denied condition of a CertificateRequest, which may be set once and never changed.
import type { Command } from 'commander';
import { CertificateRequest } from '../api/resources.ts';
import { approvalState, approve, deny } from '../shared/approval.ts';
import type { CertificateRequest as CertificateRequestObj } from '../api/types.ts';
import type { Store } from '../store/store.ts';
import { connect } from './client.ts';
import { CliError } from './cli-error.ts';

/** Approves or denies a pending request; a decided one stays as it is. */
export async function setApproval(store: Store, ns: string, name: string, verb: 'approve' | 'deny', reason: string, message: string, now: Date): Promise<void> {
  const cr = await store.get<CertificateRequestObj>(CertificateRequest, ns, name);
  if (!cr) throw new CliError(`certificaterequest ${ns}/${name} not found`);
  const state = approvalState(cr.status?.conditions);
  if (state !== 'pending') throw new CliError(`CertificateRequest ${ns}/${name} is already ${state}`);
  const conditions = verb === 'approve' ? approve(cr.status?.conditions, now, reason, message) : deny(cr.status?.conditions, now, reason, message);
  await store.updateStatus(CertificateRequest, { ...cr, status: { ...(cr.status ?? {}), conditions } }, { fieldManager: 'certsmith' });
}

function register(program: Command, verb: 'approve' | 'deny') {
  const defaults = verb === 'approve'
    ? { reason: 'KubectlCertManager', message: 'manually approved by "certsmith"' }
    : { reason: 'KubectlCertManager', message: 'manually denied by "certsmith"' };
  program
    .command(verb)
    .description(`${verb} a CertificateRequest`)
    .argument('<name>', 'CertificateRequest name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('--reason <reason>', 'reason recorded on the condition', defaults.reason)
    .option('--message <message>', 'message recorded on the condition', defaults.message)
    .action(async (name: string, opts: { namespace?: string; reason: string; message: string }, cmd: Command) => {
      const conn = await connect(cmd);
      try {
        const ns = opts.namespace ?? conn.namespace;
        await setApproval(conn.store, ns, name, verb, opts.reason, opts.message, new Date());
        process.stdout.write(`${verb === 'approve' ? 'Approved' : 'Denied'} CertificateRequest '${ns}/${name}'\n`);
      } finally {
        await conn.store.close();
      }
    });
}

export function registerApproveCommands(program: Command) {
  register(program, 'approve');
  register(program, 'deny');
}
