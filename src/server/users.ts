// Who the embedded server says a write comes from: what kube-apiserver's authenticator would
// put in a request's UserInfo. It has one credential, the token in the kubeconfig it writes; its
// own controllers write in process, as the service account they run as on a cluster
// (deploy/serviceaccount.yaml), so a CertificateRequest's requester and an admission webhook's
// userInfo tell a person's write from a controller's as they would on a cluster.
import type http from 'node:http';
import type { UserInfo } from '../api/meta.ts';
import { HttpError } from './api/responses.ts';

/** Whoever presents the kubeconfig's token: every verb on everything (there is no RBAC). */
export const tokenUser: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

/** certsmith's controllers in the server's own process. */
export const inProcessUser: UserInfo = {
  username: 'system:serviceaccount:certsmith:certsmith',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:certsmith', 'system:authenticated'],
};

/**
 * Who a request runs as. The token's holder is a system:masters admin, whom kube-apiserver lets
 * impersonate anyone: with Impersonate-User (kubectl --as) the request runs as that user, with
 * the Impersonate-Group, -Uid and -Extra-<key> headers, as kube's impersonation filter builds it.
 */
export function requestUser(req: Pick<http.IncomingMessage, 'headersDistinct'>): UserInfo {
  const headers = req.headersDistinct;
  const username = headers['impersonate-user']?.[0];
  const groups = headers['impersonate-group'] ?? [];
  const uid = headers['impersonate-uid']?.[0];
  const extra: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(headers)) {
    // the key is percent-encoded in the header name (RFC 7230 tokens), and lower-cased by HTTP
    if (name.startsWith('impersonate-extra-') && values) extra[decodeURIComponent(name.slice('impersonate-extra-'.length))] = values;
  }
  if (username === undefined) {
    if (groups.length || uid !== undefined || Object.keys(extra).length) throw new HttpError(400, 'BadRequest', 'requested groups, uid or extra without impersonating a user');
    return tokenUser;
  }
  let all = groups;
  // a service account's groups follow from its name when none are given
  const sa = /^system:serviceaccount:([^:]+):[^:]+$/.exec(username);
  if (sa && !groups.length) all = ['system:serviceaccounts', `system:serviceaccounts:${sa[1]}`];
  if (username !== 'system:anonymous' && !all.includes('system:authenticated') && !all.includes('system:unauthenticated')) all = [...all, 'system:authenticated'];
  return { username, ...(uid !== undefined ? { uid } : {}), groups: all, ...(Object.keys(extra).length ? { extra } : {}) };
}
