// A loopback stand-in for kube-apiserver's TokenRequest API, the one call `route53.auth.kubernetes`
// makes of a cluster, following the documented request, response and errors:
//   https://kubernetes.io/docs/reference/kubernetes-api/authentication-resources/token-request-v1/
//     POST /api/v1/namespaces/{namespace}/serviceaccounts/{name}/token, body TokenRequest
//     (authentication.k8s.io/v1: spec.audiences, spec.expirationSeconds ≥ 600), answer 201 with
//     status.token and status.expirationTimestamp
//   https://kubernetes.io/docs/reference/access-authn-authz/service-accounts-admin/#bound-service-account-tokens
//     the token: an RS256 JWT signed by the API server's service account key, iss the cluster's
//     issuer, sub system:serviceaccount:{ns}:{name}, aud the requested audiences, exp
//   https://kubernetes.io/docs/reference/using-api/api-concepts/#response-status-kind   errors are Status objects
// The caller must present the bearer token it was given (401 otherwise) and may request tokens
// only of the ServiceAccounts `grants` names (403, RBAC's message); an unknown ServiceAccount is 404.
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface KubeTokenAPI {
  url: string;
  /** the OIDC issuer the tokens name, and the key to check their signature with */
  issuer: string;
  publicKey: crypto.KeyObject;
  /** every TokenRequest: which ServiceAccount, which audiences and lifetime, the answer's status */
  requests: { namespace: string; name: string; audiences?: string[]; expirationSeconds?: number; status: number }[];
  stop(): Promise<void>;
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

export async function startKubeTokenAPI(opts: {
  /** the bearer token the controller authenticates with */
  callerToken: string;
  /** ServiceAccounts that exist, "namespace/name" */
  serviceAccounts: string[];
  /** ServiceAccounts whose tokens the caller may request ("namespace/name") */
  grants: string[];
}): Promise<KubeTokenAPI> {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = crypto.randomBytes(8).toString('hex');
  const issuer = 'https://kubernetes.default.svc.cluster.local';
  const requests: KubeTokenAPI['requests'] = [];
  const status = (res: http.ServerResponse, code: number, reason: string, message: string, details?: Record<string, unknown>) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code }));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const m = /^\/api\/v1\/namespaces\/([^/]+)\/serviceaccounts\/([^/]+)\/token$/.exec(new URL(req.url ?? '/', 'http://x').pathname);
      if (!m || req.method !== 'POST') return status(res, 404, 'NotFound', 'the server could not find the requested resource');
      const [namespace, name] = [decodeURIComponent(m[1]), decodeURIComponent(m[2])];
      const entry: KubeTokenAPI['requests'][number] = { namespace, name, status: 0 };
      requests.push(entry);
      const fail = (code: number, reason: string, message: string) => {
        entry.status = code;
        status(res, code, reason, message, { name, kind: 'serviceaccounts' });
      };
      if (req.headers.authorization !== `Bearer ${opts.callerToken}`) return fail(401, 'Unauthorized', 'Unauthorized');
      let body: { apiVersion?: string; kind?: string; spec?: { audiences?: string[]; expirationSeconds?: number } };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return fail(400, 'BadRequest', 'the request body is not a TokenRequest');
      }
      entry.audiences = body.spec?.audiences;
      entry.expirationSeconds = body.spec?.expirationSeconds;
      if (body.kind !== 'TokenRequest' || body.apiVersion !== 'authentication.k8s.io/v1') return fail(400, 'BadRequest', `TokenRequest in version "v1" cannot be handled as a ${body.kind ?? ''}`);
      if (!opts.grants.includes(`${namespace}/${name}`)) {
        return fail(403, 'Forbidden', `serviceaccounts "${name}" is forbidden: User "system:serviceaccount:cert-manager:certsmith" cannot create resource "serviceaccounts/token" in API group "" in the namespace "${namespace}"`);
      }
      if (!opts.serviceAccounts.includes(`${namespace}/${name}`)) return fail(404, 'NotFound', `serviceaccounts "${name}" not found`);
      const seconds = body.spec?.expirationSeconds ?? 3600;
      if (seconds < 600) return fail(422, 'Invalid', `TokenRequest.authentication.k8s.io "${name}" is invalid: spec.expirationSeconds: Invalid value: ${seconds}: may not specify a duration less than 10 minutes`);
      const audiences = body.spec?.audiences?.length ? body.spec.audiences : [issuer];
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        aud: audiences, exp: now + seconds, iat: now, nbf: now, iss: issuer, sub: `system:serviceaccount:${namespace}:${name}`,
        'kubernetes.io': { namespace, serviceaccount: { name, uid: crypto.randomUUID() } },
      };
      const signingInput = `${b64url({ alg: 'RS256', kid })}.${b64url(claims)}`;
      const token = `${signingInput}.${crypto.sign('sha256', Buffer.from(signingInput), privateKey).toString('base64url')}`;
      entry.status = 201;
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        kind: 'TokenRequest', apiVersion: 'authentication.k8s.io/v1', metadata: { name, namespace, creationTimestamp: null },
        spec: { audiences, expirationSeconds: seconds, boundObjectRef: null },
        status: { token, expirationTimestamp: new Date((now + seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') },
      }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    issuer,
    publicKey,
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
