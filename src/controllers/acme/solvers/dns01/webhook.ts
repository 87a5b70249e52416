// cert-manager's webhook DNS-01 solver contract (`dns01.webhook: {groupName, solverName, config}`):
// a ChallengePayload POSTed to /apis/<groupName>/v1alpha1/<solverName> through the Kubernetes
// API, which hands it to the solver's own server through API aggregation (an APIService). The
// solver answers with the same object and its `response` set. Upstream's client:
// pkg/issuer/acme/dns/webhook/webhook.go; the types: pkg/acme/webhook/apis/acme/v1alpha1.
import crypto from 'node:crypto';
import type { AggregatedAPICall } from '../../../../shared/controller-options.ts';

/** The group/version cert-manager's scheme registers ChallengePayload under, as it serialises it. */
export const CHALLENGE_PAYLOAD_API_VERSION = 'webhook.acme.cert-manager.io/v1alpha1';
/** The version path segment upstream posts to, whatever the solver's group. */
export const WEBHOOK_SOLVER_VERSION = 'v1alpha1';

export interface ChallengeRequest {
  uid: string;
  action: 'Present' | 'CleanUp';
  type: 'dns-01';
  dnsName: string;
  key: string;
  resourceNamespace: string;
  /** `_acme-challenge.<name>.`, with the trailing dot */
  resolvedFQDN: string;
  /** the zone holding resolvedFQDN, with the trailing dot */
  resolvedZone: string;
  allowAmbientCredentials: boolean;
  config?: unknown;
}

interface ChallengePayload {
  apiVersion?: string;
  kind?: string;
  request?: ChallengeRequest;
  response?: { uid?: string; success?: boolean; status?: { message?: string; reason?: string } };
  message?: string;
}


export class WebhookSolverError extends Error {}

export function challengeRequest(o: Omit<ChallengeRequest, 'uid'>): ChallengeRequest {
  return { uid: crypto.randomUUID(), ...o };
}

export function webhookSolverPath(groupName: string, solverName: string): string {
  return `/apis/${encodeURIComponent(groupName)}/${WEBHOOK_SOLVER_VERSION}/${encodeURIComponent(solverName)}`;
}

/**
 * Calls the solver; resolves when it reports success. Like upstream, the solver's own message
 * is the error when it has one, else the API's answer.
 */
export async function callWebhookSolver(call: AggregatedAPICall, groupName: string, solverName: string, request: ChallengeRequest): Promise<void> {
  const path = webhookSolverPath(groupName, solverName);
  const payload = { apiVersion: CHALLENGE_PAYLOAD_API_VERSION, kind: 'ChallengePayload', request };
  let answer: { status: number; body: unknown };
  try {
    answer = await call('POST', path, payload);
  } catch (e) {
    throw new WebhookSolverError(`webhook solver ${solverName}.${groupName}: ${request.action} failed: ${(e as Error).message}`);
  }
  const body = (answer.body && typeof answer.body === 'object' ? answer.body : {}) as ChallengePayload;
  if (answer.status < 300 && body.response?.success) return;
  const message = body.response?.status?.message || body.message
    || (answer.status >= 300 ? `POST ${path}: HTTP ${answer.status}` : 'invalid payload response, did not succeed but no result provided');
  throw new WebhookSolverError(`webhook solver ${solverName}.${groupName}: ${request.action} failed: ${message}`);
}
