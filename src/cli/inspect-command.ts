// certsmith inspect secret NAME: the command's flags here, its work in inspect-secret.ts, which
// loads the certificate parser: only this command pays for it, not every command at start.
import type { Command } from 'commander';
import { connect } from './client.ts';

export function registerInspectCommand(program: Command) {
  const inspect = program.command('inspect').description('look inside a resource');
  inspect
    .command('secret')
    .description('the certificate, chain, key match and CA of a kubernetes.io/tls Secret (never the private key)')
    .argument('<name>', 'Secret name')
    .option('-n, --namespace <ns>', 'namespace')
    .action(async (name: string, opts: { namespace?: string }, cmd: Command) => {
      const { inspectSecretNamed } = await import('./inspect-secret.ts');
      const conn = await connect(cmd);
      try {
        process.stdout.write(await inspectSecretNamed(conn.store, opts.namespace ?? conn.namespace, name, new Date()));
      } finally {
        await conn.store.close();
      }
    });
}
