// Who the embedded server says a write comes from: what kube-apiserver's authenticator would
// put in a request's UserInfo. It has one credential, the token in the kubeconfig it writes; its
// own controllers write in process, as the service account they run as on a cluster
// (deploy/serviceaccount.yaml), so a CertificateRequest's requester and an admission webhook's
// userInfo tell a person's write from a controller's as they would on a cluster.
import type { UserInfo } from '../api/meta.ts';

/** Whoever presents the kubeconfig's token: every verb on everything (there is no RBAC). */
export const tokenUser: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

/** certsmith's controllers in the server's own process. */
export const inProcessUser: UserInfo = {
  username: 'system:serviceaccount:certsmith:certsmith',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:certsmith', 'system:authenticated'],
};
