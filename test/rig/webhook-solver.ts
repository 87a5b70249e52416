// A DNS-01 webhook solver following cert-manager's contract (the ChallengePayload API,
// cert-manager's pkg/acme/webhook: an aggregated API server answering
// POST /apis/<group>/v1alpha1/<solverName> with the payload and its `response` set), that
// publishes the TXT record into a real DNS server so that Pebble validates for real. It serves
// the discovery document an aggregated API server serves, over HTTPS with a certificate for its
// Service name, and records every call so tests can check what cert-manager's client would send.
// Where the record goes is the test's choice (`dns`): bind9 through nsupdate, for instance.
import https from 'node:https';
import fs from 'node:fs';
import { makeTempDir, removeTempDir } from './processes.ts';
import { makeListenerCert } from './tls.ts';
import { freePort } from './ports.ts';

/** Where the solver writes the challenge record. */
export interface TXTPublisher {
  setTXT(fqdn: string, value: string): Promise<void>;
  clearTXT(fqdn: string, value: string): Promise<void>;
}

export interface SolverCall {
  action: string;
  request: Record<string, unknown>;
  remoteUser?: string;
  /** every X-Remote-Group header, in order */
  remoteGroups: string[];
}

export interface WebhookSolver {
  port: number;
  caPem: string;
  calls: SolverCall[];
  /** the next Present fails with this message (once) */
  failNextPresent(message: string): void;
  stop(): Promise<void>;
}

export async function startWebhookSolver(o: { dns: TXTPublisher; group: string; solverName: string; serviceName: string; namespace: string }): Promise<WebhookSolver> {
  const dir = await makeTempDir('webhook-solver');
  const cert = await makeListenerCert(dir, { dnsNames: [`${o.serviceName}.${o.namespace}.svc`] });
  const port = await freePort();
  const calls: SolverCall[] = [];
  let failure: string | undefined;
  const base = `/apis/${o.group}/v1alpha1`;
  const server = https.createServer({ cert: fs.readFileSync(cert.certPath), key: fs.readFileSync(cert.keyPath) }, async (req, res) => {
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    // the query (kubectl's ?timeout=32s) is no part of the route, as for any Kubernetes API server
    const path = new URL(req.url ?? '/', 'https://solver').pathname;
    if (req.method === 'GET' && path === base) {
      return send(200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${o.group}/v1alpha1`, resources: [{ name: o.solverName, singularName: o.solverName, namespaced: false, kind: 'ChallengePayload', verbs: ['create'] }] });
    }
    if (req.method !== 'POST' || path !== `${base}/${o.solverName}`) return send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', message: `${req.method} ${req.url} not found` });
    let text = '';
    for await (const chunk of req) text += chunk;
    let payload: { apiVersion?: string; kind?: string; request?: Record<string, unknown> };
    try {
      payload = JSON.parse(text);
    } catch {
      return send(400, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 400, reason: 'BadRequest', message: 'body is not JSON' });
    }
    const r = payload.request;
    if (payload.kind !== 'ChallengePayload' || !r) return send(400, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 400, reason: 'BadRequest', message: 'payload request field cannot be empty' });
    calls.push({ action: String(r.action), request: r, remoteUser: req.headers['x-remote-user'] as string | undefined, remoteGroups: remoteGroups(req.rawHeaders) });
    const answer = (success: boolean, message?: string) => send(201, { ...payload, response: { uid: r.uid, success, ...(message ? { status: { status: 'Failed', message } } : {}) } });
    try {
      if (r.action === 'Present') {
        if (failure) {
          const m = failure;
          failure = undefined;
          return answer(false, m);
        }
        await o.dns.setTXT(String(r.resolvedFQDN), String(r.key));
      } else if (r.action === 'CleanUp') {
        await o.dns.clearTXT(String(r.resolvedFQDN), String(r.key));
      } else {
        return send(500, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: `unknown action type "${String(r.action)}"` });
      }
      return answer(true);
    } catch (e) {
      return answer(false, (e as Error).message);
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port, caPem: cert.caPem, calls,
    failNextPresent(message) {
      failure = message;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await removeTempDir(dir);
    },
  };
}

/** The X-Remote-Group headers as sent (node joins repeated ones into one string in req.headers). */
function remoteGroups(raw: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'x-remote-group') out.push(raw[i + 1]);
  return out;
}
