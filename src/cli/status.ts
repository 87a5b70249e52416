// certsmith status certificate NAME: everything a person debugging a Certificate needs on one
// screen, as cmctl shows it, plus backoff (failed attempts, next attempt) and renewal reasoning.
import type { Command } from 'commander';
import { Certificate, CertificateRequest, Challenge, ClusterIssuer, EventType, Issuer, Order, SecretType } from '../api/resources.ts';
import type { Condition, KubeObject, Secret } from '../api/meta.ts';
import { CertificateAnnotation } from '../api/annotations.ts';
import type { Store } from '../store/store.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj } from '../api/types.ts';
import { defaultBackoff } from '../shared/backoff.ts';
import { parseDuration } from '../api/duration.ts';
import { isoTime } from '../api/conditions.ts';
import { connect } from './client.ts';
import { CliError } from './cli-error.ts';

function conditionLines(conds: Condition[] | undefined, indent: string): string[] {
  if (!conds?.length) return [`${indent}No Conditions set`];
  return conds.map((c) => `${indent}${c.type}: ${c.status}, Reason: ${c.reason ?? ''}, Message: ${c.message ?? ''}`);
}

async function eventLines(store: Store, obj: KubeObject, indent: string): Promise<string[]> {
  const events = (await store.list(EventType, { namespace: obj.metadata.namespace ?? 'default' })).items as (KubeObject & {
    involvedObject?: { uid?: string; name?: string; kind?: string }; type?: string; reason?: string; message?: string; count?: number; lastTimestamp?: string;
  })[];
  const mine = events.filter((e) => e.involvedObject?.uid === obj.metadata.uid);
  if (!mine.length) return [];
  mine.sort((a, b) => (a.lastTimestamp ?? '').localeCompare(b.lastTimestamp ?? ''));
  return [`${indent}Events:`, ...mine.map((e) => `${indent}  ${e.type}\t${e.reason}\t${e.lastTimestamp ?? ''}${(e.count ?? 1) > 1 ? ` (x${e.count})` : ''}\t${e.message}`)];
}

export async function certificateStatus(store: Store, namespace: string, name: string, backoff = defaultBackoff): Promise<string> {
  // the certificate parser and the renewal logic are loaded by this command only, not by
  // every command the program knows (`certsmith --help` included), while the server answers
  const [{ renewalDecisionFor, renewalReasonInWords, renewalWindowInWords, retryScheduleFor }, { parseCertMemo }, crt] = await Promise.all([
    import('../shared/certificate-schedule.ts'), import('../shared/parse-memo.ts'), store.get<CertificateObj>(Certificate, namespace, name),
  ]);
  if (!crt) throw new CliError(`certificate ${namespace}/${name} not found`);
  const s = crt.status ?? {};
  const ref = crt.spec.issuerRef;
  const kind = ref.kind || 'Issuer';
  // what the rest shows, asked for at once: each is a round trip to the server
  const [events, issuer, secret, ownRequests] = await Promise.all([
    eventLines(store, crt, ''),
    kind === 'ClusterIssuer' ? store.get(ClusterIssuer, undefined, ref.name) : kind === 'Issuer' ? store.get(Issuer, namespace, ref.name) : undefined,
    store.get<Secret>(SecretType, namespace, crt.spec.secretName),
    store.list<CertificateRequestObj>(CertificateRequest, { namespace }),
  ]);
  const out: string[] = [
    `Name: ${name}`,
    `Namespace: ${namespace}`,
    `Created at: ${crt.metadata.creationTimestamp ?? ''}`,
    'Conditions:',
    ...conditionLines(s.conditions, '  '),
  ];
  if (crt.spec.dnsNames?.length) out.push('DNS Names:', ...crt.spec.dnsNames.map((d) => `- ${d}`));
  out.push(...events);

  out.push('Issuer:', `  Name: ${ref.name}`, `  Kind: ${kind}`);
  if (issuer) {
    const spec = (issuer as { spec?: Record<string, unknown> }).spec ?? {};
    out.push(`  Type: ${Object.keys(spec).find((k) => ['acme', 'ca', 'selfSigned', 'vault', 'venafi'].includes(k)) ?? 'unknown'}`);
    out.push('  Conditions:', ...conditionLines((issuer as { status?: { conditions?: Condition[] } }).status?.conditions, '    '));
  } else {
    out.push(`  ${kind} ${ref.name} not found`);
  }

  out.push(`Secret:`, `  Name: ${crt.spec.secretName}`);
  const leaf = secret?.data?.['tls.crt'] ? parseCertMemo(Buffer.from(secret.data['tls.crt'], 'base64').toString()) : undefined;
  if (!secret) out.push('  Secret does not exist');
  else if (leaf?.value) {
    const l = leaf.value;
    out.push(
      `  Issuer: ${l.issuer}`, `  Subject: ${l.subject}`,
      `  Serial Number: ${l.serialNumber}`, `  Signature Algorithm: ${l.signatureAlgorithm}`,
      `  Key Usages: ${(l.template.usages ?? []).join(', ')}`,
    );
  } else if (leaf?.error) out.push(`  Certificate does not parse: ${leaf.error}`);
  out.push(`Not Before: ${s.notBefore ?? '<none>'}`, `Not After: ${s.notAfter ?? '<none>'}`);

  // Renewal: when and why.
  let renewal = `Renewal Time: ${s.renewalTime ?? '<none>'}`;
  if (leaf?.value) {
    const r = renewalDecisionFor(crt, leaf.value);
    renewal += ` (${renewalReasonInWords(r)})`;
    const window = renewalWindowInWords(r);
    if (window) renewal += `\n  Renewal window: ${window}`;
  }
  out.push(renewal);
  // ACME renewal information (RFC 9773): the CA's window, why, and when certsmith asks again.
  const ari = s.acme?.ari;
  if (ari) {
    out.push(`ACME Renewal Info (ARI):`);
    if (ari.suggestedWindow) out.push(`  Suggested Window: ${ari.suggestedWindow.start} – ${ari.suggestedWindow.end}`);
    if (ari.explanationURL) out.push(`  Explanation: ${ari.explanationURL}`);
    if (ari.lastChecked) out.push(`  Last Checked: ${ari.lastChecked}`);
    if (ari.nextCheck) out.push(`  Next Check: ${ari.nextCheck}`);
    if (ari.lastError) out.push(`  Last Error: ${ari.lastError} (the ordinary renewal time applies without a window)`);
  }

  if (s.lastFailureTime) {
    // every Certificate: retries of many failing in the same minute are spread
    const all = (await store.list<CertificateObj>(Certificate)).items;
    const retry = retryScheduleFor(crt, all, backoff, leaf?.value?.notAfter);
    if (retry) out.push(`Failed Issuance Attempts: ${retry.attempts}`, `Last Failure Time: ${s.lastFailureTime}`, `Next Attempt: ${isoTime(retry.nextAttempt)}`);
  }
  if (s.revision !== undefined) out.push(`Revision: ${s.revision}`);

  const rev = (s.revision ?? 0) + 1;
  const requests = ownRequests.items
    .filter((r) => r.metadata.ownerReferences?.some((o) => o.uid === crt.metadata.uid) && r.metadata.annotations?.[CertificateAnnotation.revision] === String(rev));
  if (!requests.length) out.push('No CertificateRequest found for this Certificate');
  for (const cr of requests) {
    out.push('CertificateRequest:', `  Name: ${cr.metadata.name}`, `  Namespace: ${namespace}`, '  Conditions:', ...conditionLines(cr.status?.conditions, '    '));
    out.push(...await eventLines(store, cr, '  '));
    const orders = (await store.list(Order, { namespace })).items.filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === cr.metadata.uid)) as (KubeObject & { status?: Record<string, unknown> })[];
    for (const o of orders) {
      const os = o.status ?? {};
      out.push('Order:', `  Name: ${o.metadata.name}`, `  State: ${os.state ?? ''}, Reason: ${os.reason ?? ''}`, `  Failure Time: ${os.failureTime ?? '<none>'}`);
      const challenges = (await store.list(Challenge, { namespace })).items.filter((c) => c.metadata.ownerReferences?.some((r) => r.uid === o.metadata.uid)) as (KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> })[];
      if (challenges.length) out.push('Challenges:');
      for (const c of challenges) {
        out.push(`- Name: ${c.metadata.name}, Type: ${c.spec?.type ?? ''}, Token: ${c.spec?.token ?? ''}, Key: ${c.spec?.key ?? ''}, State: ${c.status?.state ?? ''}, Reason: ${c.status?.reason ?? ''}, Processing: ${c.status?.processing ?? false}, Presented: ${c.status?.presented ?? false}`);
      }
    }
  }
  return out.join('\n') + '\n';
}

export function registerStatusCommand(program: Command) {
  const status = program.command('status').description('show the status of a resource');
  status
    .command('certificate')
    .alias('cert')
    .description('everything about one Certificate: conditions, Secret, request, backoff, renewal')
    .argument('<name>', 'Certificate name')
    .option('-n, --namespace <ns>', 'namespace')
    .option('--backoff-initial <duration>', 'the server\'s --backoff-initial, to compute the next attempt', '1h')
    .option('--backoff-max <duration>', 'the server\'s --backoff-max', '32h')
    .action(async (name: string, opts: { namespace?: string; backoffInitial: string; backoffMax: string }, cmd: Command) => {
      const conn = await connect(cmd);
      try {
        const text = await certificateStatus(conn.store, opts.namespace ?? conn.namespace, name, {
          initialMs: parseDuration(opts.backoffInitial), maxMs: parseDuration(opts.backoffMax),
        });
        process.stdout.write(text);
      } finally {
        await conn.store.close();
      }
    });
}
