// ServiceAccount tokens from a Kubernetes API server's TokenRequest API, which cert-manager uses for
// `route53.auth.kubernetes`: POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token with a
// TokenRequest (authentication.k8s.io/v1) naming the audiences and lifetime; the token is in
// status.token. The caller needs `create` on `serviceaccounts/token` for that name.
//   https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/
import type { HttpStore } from '../http/http-store.ts';

/**
 * A token for namespace/name with these audiences, valid for expirationSeconds: what the TokenRequest
 * API gives, typed here (beside the one implementation) so the controllers' options can name it
 * without the store importing the shared layer below it (ControllerOptions.serviceAccountToken).
 */
export type ServiceAccountTokenRequest = (namespace: string, name: string, audiences: string[], expirationSeconds: number) => Promise<string>;

export function serviceAccountTokenRequester(store: Pick<HttpStore, 'request'>): ServiceAccountTokenRequest {
  return async (namespace, name, audiences, expirationSeconds) => {
    const r = await store.request('POST', `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences, expirationSeconds } },
    });
    const token = (r.body as { status?: { token?: unknown } } | undefined)?.status?.token;
    if (typeof token !== 'string' || !token) throw new Error(`TokenRequest for serviceaccount "${namespace}/${name}": the answer holds no status.token`);
    return token;
  };
}
