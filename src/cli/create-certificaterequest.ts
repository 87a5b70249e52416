// certsmith create certificaterequest NAME --from-certificate-file F, as cmctl: a one-off request
// built from a Certificate manifest, with the private key kept on this machine (never sent to
// the server), and optionally the issued certificate fetched once the request is Ready.
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CertificateRequest } from '../api/resources.ts';
import type { Condition } from '../api/meta.ts';
import { durationFlag } from './duration-flag.ts';
import type { Store } from '../store/store.ts';
import type { CertificateRequest as CertificateRequestObj } from '../api/types.ts';
import { keySpecOf, requestSpecOf, templateOf } from '../shared/certificate-template.ts';
import { type CertificateSpec } from '../api/types.ts';
import { parseManifests } from './manifests.ts';
import { connect } from './client.ts';
import { CliError } from './cli-error.ts';

const POLL_INTERVAL_MS = 250;

interface CertificateManifest {
  metadata?: { name?: string; namespace?: string };
  spec?: CertificateSpec;
}

export function readCertificateManifest(file: string): CertificateManifest & { spec: CertificateSpec } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  let docs;
  try {
    docs = parseManifests(file, text);
  } catch (e) {
    throw new CliError(`${file}: ${(e as Error).message}`);
  }
  const crts = docs.filter((d) => d.obj.kind === 'Certificate' && (d.obj.apiVersion ?? '').startsWith('cert-manager.io/'));
  if (crts.length !== 1) throw new CliError(`${file} must hold exactly one cert-manager.io Certificate, it holds ${crts.length}`);
  const crt = crts[0].obj as CertificateManifest;
  if (!crt.spec?.issuerRef?.name) throw new CliError(`${file}: the Certificate has no spec.issuerRef.name`);
  return crt as CertificateManifest & { spec: CertificateSpec };
}

/** The request cmctl would make: the spec's issuer, duration, isCA and usages, and our CSR. */
export function certificateRequestFor(name: string, namespace: string, spec: CertificateSpec, csrPem: string): CertificateRequestObj {
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'CertificateRequest',
    metadata: { name, namespace },
    spec: requestSpecOf(spec, csrPem),
  };
}

function conditionTrue(conds: Condition[] | undefined, type: string): Condition | undefined {
  return conds?.find((c) => c.type === type && c.status === 'True');
}

/** Polls until the request is Ready=True (its PEM certificate) or has definitely failed (a CliError naming why). */
export async function waitForCertificate(store: Store, namespace: string, name: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no conditions yet';
  for (;;) {
    const cr = await store.get<CertificateRequestObj>(CertificateRequest, namespace, name);
    if (!cr) throw new CliError(`certificaterequest ${namespace}/${name} disappeared while waiting for it`);
    const conds = cr.status?.conditions;
    const denied = conditionTrue(conds, 'Denied');
    if (denied) throw new CliError(`CertificateRequest ${namespace}/${name} was denied: ${denied.reason ?? ''}: ${denied.message ?? ''}`);
    const invalid = conditionTrue(conds, 'InvalidRequest');
    if (invalid) throw new CliError(`CertificateRequest ${namespace}/${name} is invalid: ${invalid.reason ?? ''}: ${invalid.message ?? ''}`);
    const ready = conds?.find((c) => c.type === 'Ready');
    if (ready?.status === 'True' && cr.status?.certificate) return Buffer.from(cr.status.certificate, 'base64').toString('utf8');
    if (ready?.status === 'False' && ready.reason === 'Failed') throw new CliError(`CertificateRequest ${namespace}/${name} failed: ${ready.reason}: ${ready.message ?? ''}`);
    if (ready) last = `Ready=${ready.status}, Reason: ${ready.reason ?? ''}, Message: ${ready.message ?? ''}`;
    if (Date.now() >= deadline) throw new CliError(`timed out waiting for CertificateRequest ${namespace}/${name} to be Ready (${last})`);
    await new Promise((r) => setTimeout(r, Math.min(POLL_INTERVAL_MS, Math.max(0, deadline - Date.now()))));
  }
}

interface CreateOptions {
  fromCertificateFile: string;
  namespace?: string;
  fetchCertificate?: boolean;
  timeout: string;
  outputKeyFile?: string;
  outputCertificateFile?: string;
}

export function registerCreateCommand(program: Command) {
  const create = program.command('create').description('create a resource');
  create
    .command('certificaterequest')
    .alias('cr')
    .description('create a CertificateRequest from a Certificate manifest, with a locally generated private key')
    .argument('<name>', 'CertificateRequest name')
    .requiredOption('--from-certificate-file <file>', 'Certificate manifest (YAML or JSON) to build the request from')
    .option('-n, --namespace <ns>', 'namespace (default: the manifest\'s, then the kubeconfig\'s)')
    .option('--fetch-certificate', 'wait until the request is Ready and write the certificate')
    .option('--timeout <duration>', 'how long --fetch-certificate waits', '5m')
    .option('--output-key-file <file>', 'where to write the private key (default NAME.key)')
    .option('--output-certificate-file <file>', 'where to write the certificate (default NAME.crt)')
    .action(async (name: string, opts: CreateOptions, cmd: Command) => {
      const timeoutMs = durationFlag(opts.timeout, '--timeout');
      const crt = readCertificateManifest(opts.fromCertificateFile);
      let keyPem: string;
      let csrPem: string;
      try {
        // the key and CSR code is loaded by this command, not by every command the program knows
        const [{ generatePrivateKey }, { createCSR }] = await Promise.all([import('../pki/keys.ts'), import('../pki/csr.ts')]);
        keyPem = await generatePrivateKey(keySpecOf(crt.spec));
        csrPem = await createCSR(templateOf(crt.spec), keyPem);
      } catch (e) {
        throw new CliError(`cannot build the request from ${opts.fromCertificateFile}: ${(e as Error).message}`);
      }
      const keyFile = opts.outputKeyFile ?? `${name}.key`;
      // the key exists nowhere else: write it before the request, and never over another key
      try {
        writeFileSync(keyFile, keyPem, { mode: 0o600, flag: 'wx' });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        throw new CliError(code === 'EEXIST' ? `${keyFile} already exists; refusing to overwrite a private key` : `cannot write ${keyFile}: ${code ?? (e as Error).message}`);
      }
      process.stdout.write(`Private key written to ${keyFile}\n`);

      const conn = await connect(cmd);
      try {
        const ns = opts.namespace ?? crt.metadata?.namespace ?? conn.namespace;
        await conn.store.create(CertificateRequest, certificateRequestFor(name, ns, crt.spec, csrPem));
        process.stdout.write(`CertificateRequest ${ns}/${name} created\n`);
        if (!opts.fetchCertificate) return;
        const certPem = await waitForCertificate(conn.store, ns, name, timeoutMs);
        const certFile = opts.outputCertificateFile ?? `${name}.crt`;
        writeFileSync(certFile, certPem);
        process.stdout.write(`CertificateRequest ${ns}/${name} is Ready; certificate written to ${certFile}\n`);
      } finally {
        await conn.store.close();
      }
    });
}
