// Whether the Certificate's current CertificateRequest may be signed: a denied request is never
// issued, and one neither approved nor denied waits for a person or an approver (an issuer
// outside --approve-signer-names, or a server run with --no-auto-approve).
import type { Finding } from '../finding.ts';

export interface RequestFacts {
  name: string;
  conditions: { type: string; status: string; reason?: string; message?: string }[];
}

export function checkApproval(certificate: string, request: RequestFacts | undefined): Finding[] {
  if (!request) return [];
  const [namespace, name] = certificate.split('/');
  const denied = request.conditions.find((c) => c.type === 'Denied' && c.status === 'True');
  if (denied) {
    return [{
      check: 'approval', severity: 'error',
      sentence: `CertificateRequest ${request.name} was denied (${denied.reason ?? ''}: ${denied.message ?? ''}), so it is never issued.`,
      fix: `If the denial was a mistake, run "certsmith renew -n ${namespace} ${name}" for a new request, and check what denied it (the approver's policy, or the person who ran certsmith deny).`,
    }];
  }
  if (request.conditions.some((c) => c.type === 'Approved' && c.status === 'True')) return [];
  return [{
    check: 'approval', severity: 'warning',
    sentence: `CertificateRequest ${request.name} is neither approved nor denied: no issuer signs it until it is approved.`,
    fix: `Approve it with "certsmith approve -n ${namespace} ${request.name}" (or cmctl approve), or let the server approve its issuer (--approve-signer-names).`,
  }];
}
