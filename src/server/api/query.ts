// Query parameters decoded and refused as kube-apiserver decodes them.
import { StoreError } from '../../store/store.ts';
import { HttpError } from './responses.ts';

export const truthy = (v: string | null) => v === '1' || v === 'true';

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
