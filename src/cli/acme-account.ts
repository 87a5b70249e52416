// ACME account operations a person runs by hand, through the issuer's own account key:
//   certsmith revoke CERTIFICATE [--reason R]        RFC 8555 §7.6
//   certsmith acme rollover-key ISSUER               RFC 8555 §7.3.5
//   certsmith acme deactivate-account ISSUER         RFC 8555 §7.3.6
// The CLI reads the Issuer and its account key Secret through the API (so it needs read access
// to that Secret, as cmctl does for its own commands) and talks to the ACME server itself.
import type { Command } from 'commander';
import { Certificate, ClusterIssuer, Issuer, SecretType } from '../api/resources.ts';
import type { KubeObject, Secret } from '../api/meta.ts';
import { ACCOUNT_KEY_ROLLED_OVER_ANNOTATION } from '../api/annotations.ts';
import type { Store } from '../store/store.ts';
import type { AcmeClient } from '../acme/client.ts';
import { certificateBlocks } from '../pki/pem.ts';
import { connect } from './client.ts';
import { CliError } from './cli-error.ts';

interface AcmeIssuer extends KubeObject {
  spec?: { acme?: { server: string; caBundle?: string; skipTLSVerify?: boolean; privateKeySecretRef: { name: string; key?: string } } };
  status?: { acme?: { uri?: string } };
}

/** RFC 5280 CRLReason codes by the names certbot accepts (the ones Let's Encrypt allows). */
export const REVOCATION_REASONS: Record<string, number> = {
  unspecified: 0, keycompromise: 1, affiliationchanged: 3, superseded: 4, cessationofoperation: 5,
};

export function revocationReasonCode(name: string): number {
  const code = REVOCATION_REASONS[name.toLowerCase()];
  if (code === undefined) throw new CliError(`--reason: "${name}" is not one of ${Object.keys(REVOCATION_REASONS).join(', ')}`);
  return code;
}

interface IssuerAccount {
  issuer: AcmeIssuer;
  secret: Secret;
  keyField: string;
  keyPem: string;
  client(keyPem?: string): Promise<AcmeClient>;
}

type AcmeSpec = NonNullable<NonNullable<AcmeIssuer['spec']>['acme']>;

async function acmeIssuer(store: Store, ref: { name: string; kind?: string }, namespace: string): Promise<{ issuer: AcmeIssuer; acme: AcmeSpec; label: string; cluster: boolean }> {
  const cluster = ref.kind === 'ClusterIssuer';
  const issuer = await store.get<AcmeIssuer>(cluster ? ClusterIssuer : Issuer, cluster ? undefined : namespace, ref.name);
  const label = cluster ? `ClusterIssuer ${ref.name}` : `Issuer ${namespace}/${ref.name}`;
  if (!issuer) throw new CliError(`${label} not found`);
  const acme = issuer.spec?.acme;
  if (!acme) throw new CliError(`${label} is not an ACME issuer`);
  return { issuer, acme, label, cluster };
}

/** How to reach the issuer's CA: its directory and the trust its spec gives. */
const connectionOf = (acme: AcmeSpec) => ({
  directoryUrl: acme.server,
  caPem: acme.caBundle ? Buffer.from(acme.caBundle, 'base64').toString('utf8') : undefined,
  skipTLSVerify: acme.skipTLSVerify,
});

/** The issuer has no account key (yet, or any more). */
class NoAccountKeyError extends CliError {}

async function issuerAccount(store: Store, ref: { name: string; kind?: string }, namespace: string, clusterResourceNamespace: string): Promise<IssuerAccount> {
  const { issuer, acme, label, cluster } = await acmeIssuer(store, ref, namespace);
  const secretNamespace = cluster ? clusterResourceNamespace : namespace;
  const keyField = acme.privateKeySecretRef.key || 'tls.key';
  const secret = await store.get<Secret>(SecretType, secretNamespace, acme.privateKeySecretRef.name);
  const keyPem = Buffer.from(secret?.data?.[keyField] ?? '', 'base64').toString('utf8');
  if (!secret || !keyPem.includes('PRIVATE KEY')) {
    throw new NoAccountKeyError(`${label}: its account key Secret ${secretNamespace}/${acme.privateKeySecretRef.name} (field ${keyField}) is missing; the issuer has no account yet`);
  }
  const { AcmeClient } = await import('../acme/client.ts');
  return {
    issuer, secret, keyField, keyPem,
    async client(pem = keyPem) {
      const client = new AcmeClient({ ...connectionOf(acme), accountKeyPem: pem, accountUrl: pem === keyPem ? issuer.status?.acme?.uri : undefined });
      if (!client.accountUrl) await client.findAccount();
      return client;
    },
  };
}

/** The leaf (first PEM block) of a Certificate's Secret, and the Secret. */
async function issuedLeaf(store: Store, namespace: string, name: string): Promise<{ crt: KubeObject & { spec: { secretName: string; issuerRef: { name: string; kind?: string } } }; leafDer: Buffer; secret: Secret }> {
  const crt = await store.get<KubeObject & { spec: { secretName: string; issuerRef: { name: string; kind?: string } } }>(Certificate, namespace, name);
  if (!crt) throw new CliError(`certificate ${namespace}/${name} not found`);
  const secret = await store.get<Secret>(SecretType, namespace, crt.spec.secretName);
  const chain = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
  const leafDer = certificateBlocks(chain)[0]?.der;
  if (!leafDer || !secret) throw new CliError(`certificate ${namespace}/${name} has no issued certificate in Secret ${namespace}/${crt.spec.secretName}`);
  return { crt, leafDer, secret };
}

/**
 * A client for the issuer's CA that signs with the certificate's own key, which must be the key
 * of the certificate in the Secret (a Secret whose key was rotated since holds another).
 */
async function certificateKeyClient(store: Store, issuerRef: { name: string; kind?: string }, namespace: string, secret: Secret, leaf: import('node:crypto').X509Certificate): Promise<AcmeClient> {
  const { acme } = await acmeIssuer(store, issuerRef, namespace);
  const keyPem = Buffer.from(secret.data?.['tls.key'] ?? '', 'base64').toString('utf8');
  const secretName = `Secret ${namespace}/${secret.metadata.name}`;
  if (!keyPem.includes('PRIVATE KEY')) throw new CliError(`--with-certificate-key: ${secretName} holds no tls.key to sign with`);
  const { createPrivateKey, createPublicKey } = await import('node:crypto');
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    throw new CliError(`--with-certificate-key: the tls.key of ${secretName} is not a private key Node can read`);
  }
  if (!createPublicKey(key).equals(leaf.publicKey)) throw new CliError(`--with-certificate-key: the tls.key of ${secretName} is not the key of its certificate`);
  if (key.asymmetricKeyType !== 'rsa' && key.asymmetricKeyType !== 'ec') {
    throw new CliError(`--with-certificate-key: the certificate's ${key.asymmetricKeyType} key cannot sign an ACME request here (RSA and ECDSA can); revoke with the issuer's account`);
  }
  const { AcmeClient } = await import('../acme/client.ts');
  return new AcmeClient({ ...connectionOf(acme), accountKeyPem: keyPem });
}

/**
 * No account key to sign with, or the CA refusing the account (not this certificate's account,
 * or gone): the certificate's own key may still revoke it, and the error says how.
 */
function withCertificateKeyHint(e: unknown): never {
  const type = (e as { type?: unknown }).type;
  if (e instanceof NoAccountKeyError || (typeof type === 'string' && /:(unauthorized|accountDoesNotExist)$/.test(type))) {
    throw new CliError(`${(e as Error).message}\n(to revoke with the certificate's own private key instead of the account's, add --with-certificate-key)`);
  }
  throw e;
}

/** Pending key of an interrupted rollover, kept in the account Secret until the CA has it. */
const NEXT_KEY_FIELD = 'certsmith-next-account.key';

/**
 * Rollover, crash-safe: the new key is written to the Secret beside the old one first, then the
 * CA is told, then the Secret swaps to the new key alone. Interrupted after the CA switched,
 * the next run finds the pending key already bound to the account and only finishes the swap.
 * The Issuer is then touched so that the running controllers rebuild their client.
 */
export async function rolloverAccountKey(store: Store, issuerRef: { name: string; kind?: string }, namespace: string, clusterResourceNamespace: string): Promise<{ accountUrl: string }> {
  const acct = await issuerAccount(store, issuerRef, namespace, clusterResourceNamespace);
  const { generateAccountKey } = await import('../acme/jws.ts');
  let secret = acct.secret;
  const pending = Buffer.from(secret.data?.[NEXT_KEY_FIELD] ?? '', 'base64').toString('utf8');
  let newKey = pending;
  let accountUrl: string | undefined;
  if (pending) {
    // an earlier rollover stopped half way: does the CA already know the account by the new key?
    accountUrl = await acct.client(pending).then((c) => c.accountUrl, () => undefined);
  }
  if (!accountUrl) {
    newKey = generateAccountKey();
    secret = await store.update(SecretType, { ...secret, data: { ...secret.data, [NEXT_KEY_FIELD]: Buffer.from(newKey).toString('base64') } }) as Secret;
    const old = await acct.client();
    await old.changeAccountKey(newKey);
    accountUrl = old.accountUrl!;
    old.close();
  }
  const data = { ...secret.data, [acct.keyField]: Buffer.from(newKey).toString('base64') };
  delete data[NEXT_KEY_FIELD];
  await store.update(SecretType, { ...secret, data });
  await touchIssuer(store, acct.issuer);
  return { accountUrl };
}

/** A merge patch of one annotation: the API reapplies it to the current Issuer, so a concurrent status write is no conflict. */
async function touchIssuer(store: Store, issuer: AcmeIssuer): Promise<void> {
  const type = issuer.kind === 'ClusterIssuer' ? ClusterIssuer : Issuer;
  await store.patch(type, issuer.metadata.namespace, issuer.metadata.name!, 'merge',
    { metadata: { annotations: { [ACCOUNT_KEY_ROLLED_OVER_ANNOTATION]: new Date().toISOString() } } });
}

export function registerAcmeAccountCommands(program: Command) {
  program
    .command('revoke')
    .description("revoke a Certificate's current certificate at its ACME CA (RFC 8555 §7.6, with the issuer's account key)")
    .argument('<name>', 'Certificate name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('--reason <reason>', `why: ${Object.keys(REVOCATION_REASONS).join(', ')}`, 'unspecified')
    .option('--cluster-resource-namespace <ns>', "where a ClusterIssuer's account key Secret lives (the server's flag)", 'cert-manager')
    .option('--with-certificate-key', "sign the request with the certificate's own private key (its Secret's tls.key), not the issuer's account key: for a certificate whose account key is lost or is not the issuer's now (RFC 8555 §7.6; certbot revoke --key-path)")
    .action(async (name: string, opts: { namespace?: string; reason: string; clusterResourceNamespace: string; withCertificateKey?: boolean }, cmd: Command) => {
      const reason = revocationReasonCode(opts.reason);
      const conn = await connect(cmd);
      try {
        const ns = opts.namespace ?? conn.namespace;
        const { crt, leafDer, secret } = await issuedLeaf(conn.store, ns, name);
        const crypto = await import('node:crypto');
        const leaf = new crypto.X509Certificate(leafDer);
        const client = opts.withCertificateKey
          ? await certificateKeyClient(conn.store, crt.spec.issuerRef, ns, secret, leaf)
          : await issuerAccount(conn.store, crt.spec.issuerRef, ns, opts.clusterResourceNamespace).then((acct) => acct.client()).catch(withCertificateKeyHint);
        try {
          await client.revokeCertificate(leafDer, reason, opts.withCertificateKey ? 'certificate key' : 'account').catch(opts.withCertificateKey ? undefined : withCertificateKeyHint);
        } finally {
          client.close();
        }
        process.stdout.write(`Revoked certificate ${leaf.serialNumber} of Certificate ${ns}/${name} (reason ${opts.reason.toLowerCase()})${opts.withCertificateKey ? ', signed with its own key' : ''}; run \`certsmith renew -n ${ns} ${name}\` to replace it\n`);
      } finally {
        await conn.store.close();
      }
    });

  const acme = program.command('acme').description('ACME account operations');
  const issuerCommand = (verb: string, description: string, run: (store: Store, ref: { name: string; kind: string }, ns: string, crns: string) => Promise<string>) =>
    acme
      .command(verb)
      .description(description)
      .argument('<issuer>', 'Issuer name (or ClusterIssuer name with --cluster)')
      .option('-n, --namespace <ns>', 'namespace of the Issuer')
      .option('--cluster', 'the name is a ClusterIssuer')
      .option('--cluster-resource-namespace <ns>', "where a ClusterIssuer's account key Secret lives (the server's flag)", 'cert-manager')
      .action(async (name: string, opts: { namespace?: string; cluster?: boolean; clusterResourceNamespace: string }, cmd: Command) => {
        const conn = await connect(cmd);
        try {
          const ref = { name, kind: opts.cluster ? 'ClusterIssuer' : 'Issuer' };
          process.stdout.write(`${await run(conn.store, ref, opts.namespace ?? conn.namespace, opts.clusterResourceNamespace)}\n`);
        } finally {
          await conn.store.close();
        }
      });
  issuerCommand('rollover-key', "replace the issuer's ACME account key with a new one (RFC 8555 §7.3.5); the account stays the same", async (store, ref, ns, crns) => {
    const { accountUrl } = await rolloverAccountKey(store, ref, ns, crns);
    return `Rolled over the account key of ${ref.kind} ${ref.name} (account ${accountUrl})`;
  });
  issuerCommand('deactivate-account', "deactivate the issuer's ACME account (RFC 8555 §7.3.6); the CA refuses it from then on", async (store, ref, ns, crns) => {
    const acct = await issuerAccount(store, ref, ns, crns);
    const client = await acct.client();
    try {
      const account = await client.deactivateAccount();
      return `Deactivated ACME account ${account.url} of ${ref.kind} ${ref.name}; certsmith registers a new account with a new key in Secret ${acct.secret.metadata.namespace}/${acct.secret.metadata.name} when the issuer next uses it (Events AccountDeactivated, AccountKeyReplaced); delete the ${ref.kind} to stop`;
    } finally {
      client.close();
    }
  });
}
