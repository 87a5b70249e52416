import fsp from 'node:fs/promises';
import path from 'node:path';
import dns from 'node:dns';
import { freePort } from './ports.ts';
import { makeTempDir, removeTempDir, runCommand, startProcess, waitUntilReady } from './processes.ts';

export interface NamedOptions {
  zone: string;
  tsig: { name: string; algorithm: NamedTsigAlgorithm };
  /** more keys the zone accepts updates from (their secrets in Named.tsigSecrets) */
  extraTsig?: { name: string; algorithm: NamedTsigAlgorithm }[];
}

export type NamedTsigAlgorithm = 'hmac-md5' | 'hmac-sha1' | 'hmac-sha256' | 'hmac-sha512';

export interface Named {
  port: number;
  /** HOST:PORT */
  server: string;
  tsigSecret: string;
  /** key name → secret (base64), the main key and every extra one */
  tsigSecrets: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * bind9 as an unprivileged primary for one zone on 127.0.0.1, accepting RFC 2136 updates of TXT records
 * below the apex when signed with the TSIG key. Every name in the zone resolves to 127.0.0.1 (wildcard A),
 * so HTTP-01 validation through this server also lands on loopback.
 */
export async function startNamed(opts: NamedOptions): Promise<Named> {
  const dir = await makeTempDir('named');
  const port = await freePort({ udp: true });
  const keys = [opts.tsig, ...(opts.extraTsig ?? [])];
  const tsigSecrets: Record<string, string> = {};
  let keyConf = '';
  for (const k of keys) {
    const conf = await runCommand('tsig-keygen', ['-a', k.algorithm, k.name]);
    const s = /secret "([^"]+)"/.exec(conf)?.[1];
    if (!s) throw new Error('tsig-keygen printed no secret');
    tsigSecrets[k.name] = s;
    keyConf += conf;
  }
  const secret = tsigSecrets[opts.tsig.name];
  const zone = opts.zone.replace(/\.$/, '');
  const p = (f: string) => path.join(dir, f);
  await fsp.writeFile(p('tsig.key'), keyConf, { mode: 0o600 });
  await fsp.writeFile(
    p('named.conf'),
    `include "${p('tsig.key')}";
options {
  directory "${dir}";
  pid-file "${p('named.pid')}";
  session-keyfile "${p('session.key')}";
  managed-keys-directory "${dir}";
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
  allow-query { 127.0.0.1; };
};
controls { };
zone "${zone}" {
  type primary;
  file "${p('zone.db')}";
  update-policy { ${keys.map((k) => `grant ${k.name} zonesub TXT;`).join(' ')} };
};
`,
  );
  await fsp.writeFile(
    p('zone.db'),
    `$TTL 5
@       IN SOA  ns.${zone}. hostmaster.${zone}. ( 1 3600 600 86400 5 )
@       IN NS   ns.${zone}.
ns      IN A    127.0.0.1
@       IN A    127.0.0.1
*       IN A    127.0.0.1
`,
  );
  const asRoot = process.getuid?.() === 0;
  // As root, named runs as nobody, and it writes its journal next to the zone file.
  if (asRoot) await runCommand('chown', ['-R', 'nobody:nogroup', dir]);
  await fsp.chmod(dir, 0o700);
  const proc = startProcess('named', ['-4', '-g', '-c', p('named.conf')], {
    logPath: p('named.log'),
    cwd: dir,
    setprivArgs: asRoot ? ['--reuid=nobody', '--regid=nogroup', '--clear-groups'] : [],
  });
  const resolver = new dns.promises.Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  await waitUntilReady(proc, 'named', async () => (await resolver.resolveSoa(zone)).serial >= 1);
  return {
    port,
    server: `127.0.0.1:${port}`,
    tsigSecret: secret,
    tsigSecrets,
    async stop() {
      await proc.stop();
      await removeTempDir(dir);
    },
  };
}
