// meta.k8s.io/v1 Table rendering: what `kubectl get` prints. The columns follow
// cert-manager's CRD printer columns so that output reads the same as on a cluster.
import type { KubeObject, Condition } from '../api/meta.ts';
import type { ResourceType } from '../api/resources.ts';
import { byCodeUnits } from '../api/ordering.ts';

/** An object as PartialObjectMetadata: what a metadata client, or a Table row's object, holds of it. */
export function partialObjectMetadata(o: { metadata: unknown }) {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
}

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string; continue?: string };
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

interface Column {
  name: string;
  priority?: number;
  description?: string;
  format?: string;
  /** after Age, as kube prints a Service's SELECTOR */
  afterAge?: boolean;
  /** the column's type in the Table (string unless said) */
  type?: string;
  value: (o: KubeObject, now: Date) => unknown;
}

/** kube-apiserver's default table convertor (rest.NewDefaultTableConvertor), which CRDs are printed with. */
const defaultColumns: Column[] = [
  { name: 'Name', format: 'name', description: 'Name must be unique within a namespace.', value: (o) => o.metadata.name ?? '' },
  { name: 'Created At', type: 'date', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', value: (o) => o.metadata.creationTimestamp ?? '' },
];
const DEFAULT_CONVERTOR_KINDS = new Set(['CustomResourceDefinition']);

function condition(o: KubeObject, type: string): Condition | undefined {
  const conds = (o.status as { conditions?: Condition[] } | undefined)?.conditions;
  return Array.isArray(conds) ? conds.find((c) => c.type === type) : undefined;
}

const get = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), o);

const nameColumn: Column = { name: 'Name', format: 'name', description: 'Name must be unique within a namespace.', value: (o) => o.metadata.name ?? '' };
const ageColumn: Column = { name: 'Age', description: 'CreationTimestamp of the object.', value: (o, now) => since(o.metadata.creationTimestamp, now) };
const webhooksColumn: Column = { name: 'Webhooks', value: (o) => ((o as { webhooks?: unknown[] }).webhooks ?? []).length };

const columnsByKind: Record<string, Column[]> = {
  Certificate: [
    { name: 'Ready', value: (o) => condition(o, 'Ready')?.status ?? '' },
    { name: 'Secret', value: (o) => get(o, 'spec.secretName') ?? '' },
    { name: 'Issuer', priority: 1, value: (o) => get(o, 'spec.issuerRef.name') ?? '' },
    { name: 'Status', priority: 1, value: (o) => condition(o, 'Ready')?.message ?? '' },
  ],
  CertificateRequest: [
    { name: 'Approved', value: (o) => condition(o, 'Approved')?.status ?? '' },
    { name: 'Denied', value: (o) => condition(o, 'Denied')?.status ?? '' },
    { name: 'Ready', value: (o) => condition(o, 'Ready')?.status ?? '' },
    { name: 'Issuer', value: (o) => get(o, 'spec.issuerRef.name') ?? '' },
    { name: 'Requester', value: (o) => get(o, 'spec.username') ?? '' },
    { name: 'Status', priority: 1, value: (o) => condition(o, 'Ready')?.message ?? '' },
  ],
  Issuer: [
    { name: 'Ready', value: (o) => condition(o, 'Ready')?.status ?? '' },
    { name: 'Status', priority: 1, value: (o) => condition(o, 'Ready')?.message ?? '' },
  ],
  ClusterIssuer: [
    { name: 'Ready', value: (o) => condition(o, 'Ready')?.status ?? '' },
    { name: 'Status', priority: 1, value: (o) => condition(o, 'Ready')?.message ?? '' },
  ],
  Order: [
    { name: 'State', value: (o) => get(o, 'status.state') ?? '' },
    { name: 'Issuer', priority: 1, value: (o) => get(o, 'spec.issuerRef.name') ?? '' },
    { name: 'Reason', priority: 1, value: (o) => get(o, 'status.reason') ?? '' },
  ],
  Challenge: [
    { name: 'State', value: (o) => get(o, 'status.state') ?? '' },
    { name: 'Domain', value: (o) => get(o, 'spec.dnsName') ?? '' },
    { name: 'Reason', priority: 1, value: (o) => get(o, 'status.reason') ?? '' },
  ],
  Secret: [
    { name: 'Type', value: (o) => (o as { type?: string }).type ?? 'Opaque' },
    { name: 'Data', value: (o) => Object.keys((o as { data?: object }).data ?? {}).length },
  ],
  Namespace: [
    { name: 'Status', value: (o) => get(o, 'status.phase') ?? 'Active' },
  ],
  Lease: [
    { name: 'Holder', value: (o) => get(o, 'spec.holderIdentity') ?? '' },
  ],
  // kube-apiserver's printers for the built-in kinds the embedded server keeps (printService, printIngress)
  Service: [
    { name: 'Type', value: (o) => serviceType(o) },
    { name: 'Cluster-IP', value: (o) => (get(o, 'spec.clusterIPs') as string[] | undefined)?.[0] ?? get(o, 'spec.clusterIP') ?? '<none>' },
    { name: 'External-IP', value: (o) => serviceExternalIP(o) },
    {
      name: 'Port(s)', value: (o) => ((get(o, 'spec.ports') as { port?: number; nodePort?: number; protocol?: string }[] | undefined) ?? [])
        .map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',') || '<none>',
    },
    {
      name: 'Selector', priority: 1, afterAge: true, value: (o) => Object.entries((get(o, 'spec.selector') as Record<string, string> | undefined) ?? {})
        .sort(([a], [b]) => byCodeUnits(a, b)).map(([k, v]) => `${k}=${v}`).join(',') || '<none>',
    },
  ],
  Ingress: [
    { name: 'Class', value: (o) => get(o, 'spec.ingressClassName') ?? '<none>' },
    {
      name: 'Hosts', value: (o) => {
        const rules = (get(o, 'spec.rules') as { host?: string }[] | undefined) ?? [];
        const hosts = rules.slice(0, 3).map((r) => r.host).filter((h): h is string => !!h);
        if (!hosts.length) return '*';
        return rules.length > 3 ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',');
      },
    },
    { name: 'Address', value: (o) => loadBalancerAddresses(get(o, 'status.loadBalancer.ingress')).join(',') },
    { name: 'Ports', value: (o) => ((get(o, 'spec.tls') as unknown[] | undefined)?.length ? '80, 443' : '80') },
  ],
  ValidatingWebhookConfiguration: [webhooksColumn],
  MutatingWebhookConfiguration: [webhooksColumn],
};

function serviceType(o: KubeObject): string {
  return (get(o, 'spec.type') as string | undefined) ?? 'ClusterIP';
}

/** a load balancer's IPs, else its host names, each once, in order (kube's sets.String) */
function loadBalancerAddresses(ingress: unknown): string[] {
  const all = ((ingress as { ip?: string; hostname?: string }[] | undefined) ?? []).map((i) => i.ip || i.hostname || '').filter(Boolean);
  return [...new Set(all)].sort();
}

/** kube's getServiceExternalIP */
function serviceExternalIP(o: KubeObject): string {
  const external = (get(o, 'spec.externalIPs') as string[] | undefined) ?? [];
  switch (serviceType(o)) {
    case 'ClusterIP':
    case 'NodePort':
      return external.join(',') || '<none>';
    case 'LoadBalancer': {
      const all = [...loadBalancerAddresses(get(o, 'status.loadBalancer.ingress')), ...external];
      return all.join(',') || '<pending>';
    }
    case 'ExternalName':
      return (get(o, 'spec.externalName') as string | undefined) ?? '';
    default:
      return '<unknown>';
  }
}

/** kubectl's HumanDuration: two significant units, coarser as time grows. */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  if (d < 365 * 2) return `${d}d`;
  const y = Math.floor(d / 365);
  if (y < 8) return d % 365 ? `${y}y${d % 365}d` : `${y}y`;
  return `${y}y`;
}

/** kubectl's translateTimestampSince: how long ago, or <unknown> for no time */
export function since(time: string | undefined, now: Date): string {
  const t = time ? Date.parse(time) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now.getTime() - t);
}

/** a core/v1 Event as read from a server: any field may be missing */
export type EventFields = KubeObject & {
  involvedObject?: { kind?: string; name?: string; uid?: string; fieldPath?: string }; type?: string; reason?: string; message?: string;
  source?: { component?: string; host?: string }; reportingComponent?: string; reportingInstance?: string;
  firstTimestamp?: string; lastTimestamp?: string; eventTime?: string; count?: number; series?: { count?: number; lastObservedTime?: string };
};

const eventFirstSeen = (e: EventFields, now: Date) => since(e.firstTimestamp || e.eventTime, now);

/**
 * kube-apiserver's own layout for Events (its printers' eventColumnDefinitions and printEvent):
 * no Age, and the name last, shown by -o wide only, where a Certificate's columns start with it.
 */
const eventColumns: Column[] = [
  { name: 'Last Seen', value: (o, now) => { const e = o as EventFields; return e.series ? since(e.series.lastObservedTime, now) : e.lastTimestamp ? since(e.lastTimestamp, now) : eventFirstSeen(e, now); } },
  { name: 'Type', value: (o) => (o as EventFields).type ?? '' },
  { name: 'Reason', value: (o) => (o as EventFields).reason ?? '' },
  { name: 'Object', value: (o) => { const r = (o as EventFields).involvedObject ?? {}; const kind = (r.kind ?? '').toLowerCase(); return r.name ? `${kind}/${r.name}` : kind; } },
  { name: 'Subobject', priority: 1, value: (o) => (o as EventFields).involvedObject?.fieldPath ?? '' },
  {
    name: 'Source', priority: 1, value: (o) => {
      const e = o as EventFields;
      const instance = e.source?.host || e.reportingInstance;
      return [e.source?.component || e.reportingComponent || '', ...(instance ? [instance] : [])].join(', ');
    },
  },
  { name: 'Message', value: (o) => ((o as EventFields).message ?? '').trim() },
  { name: 'First Seen', priority: 1, value: (o, now) => eventFirstSeen(o as EventFields, now) },
  { name: 'Count', priority: 1, value: (o) => { const e = o as EventFields; return e.series?.count ?? (e.count || 1); } },
  { ...nameColumn, priority: 1 },
];

export function tableFor(type: ResourceType, objects: KubeObject[], opts: { now?: Date; includeObject?: 'None' | 'Metadata' | 'Object'; resourceVersion?: string; continue?: string } = {}): Table {
  const now = opts.now ?? new Date();
  const extra = columnsByKind[type.kind] ?? [];
  const columns: Column[] = type.kind === 'Event' ? eventColumns
    : DEFAULT_CONVERTOR_KINDS.has(type.kind) ? defaultColumns
    : [nameColumn, ...extra.filter((c) => !c.afterAge), ageColumn, ...extra.filter((c) => c.afterAge)];
  const columnDefinitions: TableColumnDefinition[] = columns.map((c) => ({ name: c.name, type: c.type ?? 'string', format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 }));
  const include = opts.includeObject ?? 'Metadata';
  const rows = objects.map((o) => ({
    cells: columns.map((c) => c.value(o, now)),
    ...(include === 'None' ? {} : {
      object: include === 'Object' ? o : partialObjectMetadata(o),
    }),
  }));
  return {
    kind: 'Table', apiVersion: 'meta.k8s.io/v1',
    metadata: { ...(opts.resourceVersion ? { resourceVersion: opts.resourceVersion } : {}), ...(opts.continue ? { continue: opts.continue } : {}) },
    columnDefinitions, rows,
  };
}
