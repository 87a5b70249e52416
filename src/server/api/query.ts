// Query parameters decoded and refused as kube-apiserver decodes them.
import { StoreError } from '../../store/store.ts';
import { HttpError } from './responses.ts';

/**
 * A boolean query parameter as apimachinery's Convert_Slice_string_To_bool reads it: absent, "0"
 * or "false" in any case is false; anything else, an empty value too, is true.
 */
export const truthy = (v: string | null) => v !== null && v !== '0' && v.toLowerCase() !== 'false';

/**
 * Whether a request's URL asks for a watch, read as the router reads it (the stall bound exempts
 * watches, so a list must not pass for one).
 */
export function isWatchRequest(url: string | undefined): boolean {
  const query = url?.indexOf('?') ?? -1;
  return query >= 0 && truthy(new URLSearchParams(url!.slice(query + 1)).get('watch'));
}

/** A query parameter that kube decodes as an integer: absent, or digits (with a sign when allowed). */
export function intParam(q: URLSearchParams, name: string, opts: { signed?: boolean } = {}): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!(opts.signed ? /^-?[0-9]{1,18}$/ : /^[0-9]{1,18}$/).test(v)) {
    throw new HttpError(400, 'BadRequest', `invalid value for query parameter ${name}: ${JSON.stringify(v)} is not ${opts.signed ? 'an integer' : 'a non-negative integer'}`);
  }
  return Number(v);
}

/** dryRun as kube validates it: every value must be "All". */
export function dryRunOf(values: unknown[], kind: string): boolean {
  for (const v of values) {
    if (v !== 'All') {
      throw new StoreError('Invalid', `${kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`,
        [{ field: 'dryRun', message: `Unsupported value: ${JSON.stringify(v)}: supported values: "All"`, reason: 'FieldValueNotSupported' }]);
    }
  }
  return values.length > 0;
}

/** A list's or watch's resourceVersion, when it names one ("" and "0" mean "any"). */
export function requestedRevision(q: URLSearchParams): number | undefined {
  const rv = q.get('resourceVersion');
  if (rv === null || rv === '' || rv === '0') return undefined;
  if (!/^[0-9]{1,18}$/.test(rv)) throw new HttpError(400, 'BadRequest', `invalid resourceVersion ${JSON.stringify(rv)}: a resource version is an integer`);
  return Number(rv);
}

/**
 * sendInitialEvents and resourceVersionMatch as kube-apiserver's ValidateListOptions checks them
 * (WatchList on): a streaming list is a watch with sendInitialEvents, NotOlderThan and bookmarks.
 * Returns the watch's sendInitialEvents (undefined: not given).
 */
export function watchListOptions(q: URLSearchParams, watch: boolean): boolean | undefined {
  const send = q.get('sendInitialEvents');
  const sendInitialEvents = send === null ? undefined : truthy(send);
  const match = q.get('resourceVersionMatch') ?? '';
  const problems: { field: string; message: string; reason: string }[] = [];
  const forbid = (field: string, message: string) => problems.push({ field, message: `Forbidden: ${message}`, reason: 'FieldValueForbidden' });
  if (!watch) {
    if (match) {
      if (!q.get('resourceVersion')) forbid('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided');
      if (q.get('continue')) forbid('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided');
      if (match === 'Exact' && q.get('resourceVersion') === '0') forbid('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
      if (match !== 'Exact' && match !== 'NotOlderThan') problems.push({ field: 'resourceVersionMatch', message: `Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""`, reason: 'FieldValueNotSupported' });
    }
    if (sendInitialEvents !== undefined) forbid('sendInitialEvents', 'sendInitialEvents is only supported on watch requests');
  } else {
    if (sendInitialEvents !== undefined && match !== 'NotOlderThan') forbid('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    if (match) {
      if (sendInitialEvents === undefined) forbid('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
      if (match !== 'NotOlderThan') problems.push({ field: 'resourceVersionMatch', message: `Unsupported value: ${JSON.stringify(match)}: supported values: "NotOlderThan"`, reason: 'FieldValueNotSupported' });
    }
    if (sendInitialEvents && !truthy(q.get('allowWatchBookmarks'))) forbid('allowWatchBookmarks', 'allowWatchBookmarks must be set to true when sendInitialEvents is set to true');
  }
  if (problems.length) {
    const text = problems.map((p) => `${p.field}: ${p.message}`);
    throw new StoreError('Invalid', `ListOptions.meta.k8s.io "" is invalid: ${text.length > 1 ? `[${text.join(', ')}]` : text[0]}`, problems);
  }
  return sendInitialEvents;
}
