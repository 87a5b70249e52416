// certsmith status certificate NAME: everything a person debugging a Certificate needs on one
// screen, as cmctl shows it, plus backoff (failed attempts, next attempt) and renewal reasoning.
import type { Command } from 'commander';
import { Certificate, CertificateRequest, Challenge, ClusterIssuer, EventType, Issuer, Order, SecretType } from '../api/resources.ts';
import type { Condition, KubeObject, Secret } from '../api/meta.ts';
import { CertificateAnnotation } from '../api/annotations.ts';
import type { Store } from '../store/store.ts';
import type { Certificate as CertificateObj, CertificateRequest as CertificateRequestObj, Challenge as ChallengeObj, Order as OrderObj } from '../api/types.ts';
import { defaultBackoff } from '../shared/backoff.ts';
import { parseDuration } from '../api/duration.ts';
import { isoTime } from '../api/conditions.ts';
// imported, not import()ed: the command is one file of dist/ (scripts/build.mjs, `standalone`),
// where an import() is inlined all the same and keeps every export of the module it names
import { issuerFieldsOf, parseCertificate } from '../pki/parse.ts';
import { usagesInGoWords } from '../pki/usages.ts';
import { since, type EventFields } from '../server/table.ts';
import { renewalDecisionFor, renewalReasonInWords, renewalWindowInWords, retryScheduleFor, withServerNextAttempt } from '../shared/certificate-schedule.ts';
import { connect } from './client.ts';
import { CliError } from './cli-error.ts';
import { alignColumns } from './columns.ts';
import { byCodeUnits } from '../api/ordering.ts';

function conditionLines(conds: Condition[] | undefined, indent: string): string[] {
  if (!conds?.length) return [`${indent}No Conditions set`];
  return conds.map((c) => `${indent}${c.type}: ${c.status}, Reason: ${c.reason ?? ''}, Message: ${c.message ?? ''}`);
}

/**
 * An object's Events as cmctl prints them (its DescribeEvents, after kubectl describe's): oldest
 * first, Age from the first time with "(xN over ...)" for repeats, From the source component.
 */
function eventLines(events: EventFields[], obj: KubeObject, indent: string, now: Date): string[] {
  const mine = events.filter((e) => e.involvedObject?.uid === obj.metadata.uid);
  if (!mine.length) return [`${indent}Events:  <none>`];
  mine.sort((a, b) => byCodeUnits(a.lastTimestamp ?? '', b.lastTimestamp ?? ''));
  const rows = mine.map((e) => [
    `${indent}  ${e.type ?? ''}`, e.reason ?? '',
    (e.count ?? 1) > 1 ? `${since(e.lastTimestamp, now)} (x${e.count} over ${since(e.firstTimestamp, now)})` : since(e.firstTimestamp, now),
    [e.source?.component ?? '', ...(e.source?.host ? [e.source.host] : [])].join(', '), (e.message ?? '').trim(),
  ]);
  return [`${indent}Events:`, ...alignColumns([[`${indent}  Type`, 'Reason', 'Age', 'From', 'Message'], [`${indent}  ----`, '------', '----', '----', '-------'], ...rows], 2)];
}

/**
 * The events about objects named `name`: a namespace holds a few for every Certificate and
 * request in it, which the server need not send; eventLines still picks by uid. (Field
 * selector values escape `\`, `,` and `=`.)
 */
function eventsNamed(store: Store, namespace: string | undefined, name: string) {
  return store.list<EventFields>(EventType, { namespace, fieldSelector: `involvedObject.name=${name.replace(/[\\,=]/g, '\\$&')}` });
}

function parsedOrError<T>(parse: () => T): { value?: T; error?: string } {
  try {
    return { value: parse() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

export async function certificateStatus(store: Store, namespace: string, name: string, backoff = defaultBackoff, now = new Date()): Promise<string> {
  // Every request is a round trip to the server: what needs only the namespace is asked for
  // with the Certificate, what needs the Certificate right after it, so the whole command
  // waits for two round trips.
  const [crt, certificateEvents, namespaceRequests] = await Promise.all([
    store.get<CertificateObj>(Certificate, namespace, name),
    eventsNamed(store, namespace, name), store.list<CertificateRequestObj>(CertificateRequest, { namespace }),
  ]);
  if (!crt) throw new CliError(`certificate ${namespace}/${name} not found`);
  const s = crt.status ?? {};
  const ref = crt.spec.issuerRef;
  const kind = ref.kind || 'Issuer';
  const rev = (s.revision ?? 0) + 1;
  const owned = namespaceRequests.items.filter((r) => r.metadata.ownerReferences?.some((o) => o.uid === crt.metadata.uid));
  const requests = owned.filter((r) => r.metadata.annotations?.[CertificateAnnotation.revision] === String(rev));
  const none = { items: [] };
  const [issuer, secret, orders, challenges, certificates, requestEvents, issuerEvents, secretEvents] = await Promise.all([
    kind === 'ClusterIssuer' ? store.get(ClusterIssuer, undefined, ref.name) : kind === 'Issuer' ? store.get(Issuer, namespace, ref.name) : undefined,
    store.get<Secret>(SecretType, namespace, crt.spec.secretName),
    // ACME only, but whether the issuer is ACME is known only now: a request's Orders, if it has one
    requests.length ? store.list<OrderObj>(Order, { namespace }) : none,
    requests.length ? store.list<ChallengeObj>(Challenge, { namespace }) : none,
    // every Certificate when this one failed: retries of many failing in the same minute are spread
    s.lastFailureTime ? store.list<CertificateObj>(Certificate) : none,
    Promise.all(requests.map((r) => eventsNamed(store, namespace, r.metadata.name!))),
    // a ClusterIssuer's Events are in the default namespace (any, on a cluster); another group's issuer is not shown
    kind === 'ClusterIssuer' ? eventsNamed(store, undefined, ref.name) : kind === 'Issuer' ? eventsNamed(store, namespace, ref.name) : none,
    eventsNamed(store, namespace, crt.spec.secretName),
  ]);
  const out: string[] = [
    `Name: ${name}`,
    `Namespace: ${namespace}`,
    `Created at: ${crt.metadata.creationTimestamp ?? ''}`,
    'Conditions:',
    ...conditionLines(s.conditions, '  '),
  ];
  out.push('DNS Names:', ...(crt.spec.dnsNames ?? []).map((d) => `- ${d}`));
  out.push(...eventLines(certificateEvents.items, crt, '', now));

  out.push('Issuer:', `  Name: ${ref.name}`, `  Kind: ${kind}`);
  if (issuer) {
    const spec = (issuer as { spec?: Record<string, unknown> }).spec ?? {};
    out.push(`  Type: ${Object.keys(spec).find((k) => ['acme', 'ca', 'selfSigned', 'vault', 'venafi'].includes(k)) ?? 'unknown'}`);
    // the ACME profile its orders ask for (draft-aaron-acme-profiles), e.g. Let's Encrypt's shortlived
    const profile = (spec.acme as { profile?: string } | undefined)?.profile;
    if (profile) out.push(`  Profile: ${profile}`);
    out.push('  Conditions:', ...conditionLines((issuer as { status?: { conditions?: Condition[] } }).status?.conditions, '    '));
    out.push(...eventLines(issuerEvents.items, issuer, '  ', now));
  } else {
    out.push(`  ${kind} ${ref.name} not found`);
  }

  out.push(`Secret:`, `  Name: ${crt.spec.secretName}`);
  // one certificate, parsed once: the controllers' memo (and the CSR parser it brings) is not needed here
  const leaf = secret?.data?.['tls.crt'] ? parsedOrError(() => parseCertificate(Buffer.from(secret.data!['tls.crt'], 'base64').toString())) : undefined;
  if (!secret) out.push('  Secret does not exist');
  else if (leaf?.value) {
    // cmctl's lines, then the subject (certsmith's)
    const l = leaf.value;
    const issuedBy = issuerFieldsOf(l.der);
    const { keyUsages, extKeyUsages } = usagesInGoWords(l.template.usages ?? []);
    out.push(
      `  Issuer Country: ${(issuedBy.subject.countries ?? []).join(', ')}`,
      `  Issuer Organisation: ${(issuedBy.subject.organizations ?? []).join(', ')}`,
      `  Issuer Common Name: ${issuedBy.commonName ?? ''}`,
      `  Key Usage: ${keyUsages.join(', ')}`, `  Extended Key Usages: ${extKeyUsages.join(', ')}`,
      `  Public Key Algorithm: ${'algorithm' in l.keyType ? l.keyType.algorithm : ''}`, `  Signature Algorithm: ${l.signatureAlgorithm}`,
      `  Subject Key ID: ${l.subjectKeyId ?? ''}`, `  Authority Key ID: ${l.authorityKeyId ?? ''}`,
      `  Serial Number: ${l.serialNumber}`, `  Subject: ${l.subject}`,
    );
  } else if (leaf?.error) out.push(`  Certificate does not parse: ${leaf.error}`);
  if (secret) out.push(...eventLines(secretEvents.items, secret, '  ', now));
  out.push(`Not Before: ${s.notBefore ?? '<none>'}`, `Not After: ${s.notAfter ?? '<none>'}`);

  // Renewal: when and why.
  let renewal = `Renewal Time: ${s.renewalTime ?? '<none>'}`;
  if (leaf?.value) {
    const r = renewalDecisionFor(crt, leaf.value, owned);
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
    // a failed fetch keeps the window of the CA's last answer (ari-check.ts): say which rule holds
    if (ari.lastError) out.push(`  Last Error: ${ari.lastError} (${ari.suggestedWindow ? 'the window above, from the CA\'s last answer, still applies' : 'the ordinary renewal time applies without a window'})`);
  }

  if (s.lastFailureTime) {
    const computed = retryScheduleFor(crt, certificates.items as CertificateObj[], backoff, leaf?.value?.notAfter);
    const retry = computed && withServerNextAttempt(computed, crt, certificateEvents.items);
    if (retry) out.push(`Failed Issuance Attempts: ${retry.attempts}`, `Last Failure Time: ${s.lastFailureTime}`, `Next Attempt: ${isoTime(retry.nextAttempt)}`);
  }
  if (s.revision !== undefined) out.push(`Revision: ${s.revision}`);

  if (!requests.length) out.push('No CertificateRequest found for this Certificate');
  for (const [i, cr] of requests.entries()) {
    out.push('CertificateRequest:', `  Name: ${cr.metadata.name}`, `  Namespace: ${namespace}`, '  Conditions:', ...conditionLines(cr.status?.conditions, '    '));
    out.push(...eventLines(requestEvents[i].items, cr, '  ', now));
    for (const o of orders.items.filter((x) => x.metadata.ownerReferences?.some((r) => r.uid === cr.metadata.uid))) {
      const os = o.status ?? {};
      out.push('Order:', `  Name: ${o.metadata.name}`, `  State: ${os.state ?? ''}, Reason: ${os.reason ?? ''}`);
      // as cmctl lists them (a wildcard flag the CA left out is Go's nil pointer)
      const authorizations = (os.authorizations ?? []).map((a) => `    URL: ${a.url}, Identifier: ${a.identifier ?? ''}, Initial State: ${a.initialState ?? ''}, Wildcard: ${a.wildcard ?? 'nil (bool pointer not set)'}`);
      out.push(...(authorizations.length ? ['  Authorizations:', ...authorizations] : ['  No Authorizations for this Order']));
      if (os.failureTime) out.push(`  FailureTime: ${os.failureTime}`);
      // while it is in flight: the profile it asked for, and the certificate an ARI renewal replaces
      if (o.spec?.profile) out.push(`  Profile: ${o.spec.profile}`);
      if (o.spec?.replaces) out.push(`  Replaces: ${o.spec.replaces}`);
      const mine = challenges.items.filter((c) => c.metadata.ownerReferences?.some((r) => r.uid === o.metadata.uid));
      if (mine.length) out.push('Challenges:');
      for (const c of mine) {
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
    .option('--backoff-initial <duration>', 'the server\'s --backoff-initial, to compute the next attempt when the server has recorded none (its Backoff Event)', '1h')
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
