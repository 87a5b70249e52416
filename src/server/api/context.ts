// What every handler is given: the server's state (ApiContext) and one resource request, with
// the options every verb shares already decoded (ResourceCall).
import type http from 'node:http';
import type { Logger } from 'pino';
import type { UserInfo } from '../../api/meta.ts';
import { NamespaceType, type ResourceType } from '../../api/resources.ts';
import { getForUpdate, type Store } from '../../store/store.ts';
import { namespaceTerminating } from '../../store/sqlite/admission.ts';
import { HttpError } from './responses.ts';
import type { ResourceRoute } from './resource-route.ts';

export interface ApiContext {
  store: Store;
  log?: Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;
  now: () => Date;
  /** how long a watch stays open when the client names no timeoutSeconds */
  defaultWatchTimeoutSeconds?: number;
  /** how often a watch with allowWatchBookmarks gets a BOOKMARK (kube's watch cache: a minute) */
  watchBookmarkIntervalMs?: number;
  /** how to end each open watch, for close() */
  openWatches: Set<() => void>;
  /** host:port the server listens on, for discovery's serverAddressByClientCIDRs (set once listening) */
  serverAddress: string;
  authorized(req: http.IncomingMessage): boolean;
}

export interface ResourceCall {
  route: ResourceRoute;
  q: URLSearchParams;
  req: http.IncomingMessage;
  res: http.ServerResponse;
  dryRun: boolean;
  fieldManager?: string;
  /** who the request authenticated as */
  user: UserInfo;
  /** the client asked for a Table */
  table: boolean;
  /** the client asked for PartialObjectMetadata(List): metadata only (client-go's metadata client) */
  metadataOnly: boolean;
}

/**
 * The manager a create, update or non-apply patch is recorded under: ?fieldManager=, else the
 * User-Agent up to its first '/' (`my-operator` for `my-operator/1.0`), printable characters only
 * and at most 128 bytes, as kube-apiserver's managerOrUserAgent names it, so an applier later
 * conflicts with what such a client set. Undefined when neither names one.
 */
export function managerOrUserAgent(call: ResourceCall): string | undefined {
  if (call.fieldManager) return call.fieldManager;
  let out = '';
  for (const ch of (call.req.headers['user-agent'] ?? '').split('/')[0]) {
    // Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space
    if (ch !== ' ' && !/[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch)) continue;
    if (Buffer.byteLength(out + ch) > 128) break;
    out += ch;
  }
  return out || undefined;
}

/**
 * kube-apiserver's NamespaceLifecycle admission: nothing is created in a namespace that does
 * not exist (the store would otherwise make the namespace up), with kube's 404, or in one that
 * is being deleted (403). The namespace is read as the create will find it
 * (Store.getForUpdate): a get would commit the store's open batch, one commit per created object.
 */
export async function checkNamespaceExists(store: Store, type: ResourceType, namespace: string | undefined, name: string) {
  if (!type.namespaced || !namespace) return;
  const found = await getForUpdate(store, NamespaceType, undefined, namespace);
  // the store refuses the write too; this refuses a dry run, which the store does not write
  if (found?.metadata.deletionTimestamp) throw namespaceTerminating(type, name, namespace);
  if (found) return;
  throw new HttpError(404, 'NotFound', `namespaces "${namespace}" not found`, { name: namespace, kind: 'namespaces' });
}
