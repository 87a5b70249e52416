// certsmith doctor [CERTIFICATE]: why a Certificate is not Ready, in sentences with the fix.
// Exit status 1 when something blocks issuance.
import net from 'node:net';
import type { Command } from 'commander';
import { connect } from './client.ts';
import { CliError } from './cli-error.ts';
import { parsePortFlag } from './listen-flag.ts';
import { parseDuration } from '../api/duration.ts';

interface DoctorFlags {
  namespace?: string;
  acmeHttp01SolverNameservers?: string;
  dns01RecursiveNameservers?: string;
  dns01RecursiveNameserversOnly?: boolean;
  dns01AuthoritativePort: string;
  http01Port: string;
  caaIdentity: string[];
  backoffInitial: string;
  backoffMax: string;
}

const list = (v: string | undefined) => v?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];

/** Resolvers as node:dns takes them: an IP address with an optional port ("10.0.0.2:53", "[::1]:53"). */
function nameservers(v: string | undefined, flag: string): string[] {
  const servers = list(v);
  for (const s of servers) {
    const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(s) ?? /^([0-9a-fA-F:]+)$/.exec(s);
    const host = m?.[1] ?? m?.[2];
    if (!host || !net.isIP(host) || (m?.[3] !== undefined && !(Number(m[3]) >= 1 && Number(m[3]) <= 65535))) {
      throw new CliError(`${flag}: "${s}" is not an IP address with an optional port (HOST:PORT, [IPv6]:PORT)`);
    }
  }
  return servers;
}

export function registerDoctorCommand(program: Command) {
  program
    .command('doctor')
    .description('check why Certificates are not issued (DNS, HTTP-01, CAA, DNS-01 TXT, ACME account, problems, rate limits, issuer, backoff, files, deploy hook); exit 1 when something blocks issuance or delivery')
    .argument('[certificate]', 'Certificate name (default: every Certificate)')
    .option('-n, --namespace <ns>', 'namespace (default: all namespaces, or the kubeconfig\'s when a name is given)')
    .option('--acme-http01-solver-nameservers <list>', 'the server\'s resolvers for names (host:port, comma-separated; default the system\'s)')
    .option('--dns01-recursive-nameservers <list>', 'the server\'s resolvers for DNS-01 checks')
    .option('--dns01-recursive-nameservers-only', 'as the server: check TXT records at these resolvers only, not at the zone\'s nameservers')
    .option('--dns01-authoritative-port <port>', 'port the zones\' nameservers answer on', '53')
    .option('--http01-port <port>', 'port the CA connects to for HTTP-01', '80')
    .option('--caa-identity <domain>', 'the CA\'s CAA identifier, when its ACME directory has no meta.caaIdentities; repeatable', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--backoff-initial <duration>', 'the server\'s --backoff-initial', '1h')
    .option('--backoff-max <duration>', 'the server\'s --backoff-max', '32h')
    .action(async (name: string | undefined, flags: DoctorFlags, cmd: Command) => {
      const opts = {
        nameservers: nameservers(flags.acmeHttp01SolverNameservers, '--acme-http01-solver-nameservers'),
        dns01Nameservers: nameservers(flags.dns01RecursiveNameservers, '--dns01-recursive-nameservers'),
        dns01NameserversOnly: !!flags.dns01RecursiveNameserversOnly,
        authoritativePort: parsePortFlag(flags.dns01AuthoritativePort, '--dns01-authoritative-port'),
        http01Port: parsePortFlag(flags.http01Port, '--http01-port'),
        caaIdentities: flags.caaIdentity,
        backoff: { initialMs: parseDuration(flags.backoffInitial), maxMs: parseDuration(flags.backoffMax) },
        now: () => new Date(),
      };
      const conn = await connect(cmd);
      // the checks, DNS and HTTP code load with this command only
      const { diagnoseAll, certificatesFor, formatDiagnosis } = await import('../doctor/diagnose.ts');
      try {
        const namespace = flags.namespace ?? (name ? conn.namespace : undefined);
        const certs = await certificatesFor(conn.store, namespace, name);
        if (name && !certs.length) throw new CliError(`certificate ${namespace}/${name} not found`);
        if (!certs.length) {
          process.stdout.write(`No Certificates${namespace ? ` in namespace ${namespace}` : ''}.\n`);
          return;
        }
        const found = await diagnoseAll(conn.store, certs, opts, (d) => process.stdout.write(formatDiagnosis(d)));
        if (found.some((d) => d.findings.some((f) => f.severity === 'error'))) process.exitCode = 1;
      } finally {
        await conn.store.close();
      }
    });
}
