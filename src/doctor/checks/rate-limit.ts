// Rate limits (RFC 8555 §6.6): an Order the CA answered 429 carries the time before which
// certsmith sends nothing for it (acme.certsmith.io/rate-limited-until, from Retry-After).
import { ACMEOrderAnnotation } from '../../api/annotations.ts';
import { relative, type Finding } from '../finding.ts';

export interface RateLimitFacts {
  order: string;
  annotations?: Record<string, string>;
  /** the Order's status.reason: the CA's problem detail (which limit) */
  reason?: string;
}

export function checkRateLimits(orders: RateLimitFacts[], now: Date): Finding[] {
  const out: Finding[] = [];
  for (const o of orders) {
    const until = o.annotations?.[ACMEOrderAnnotation.rateLimitedUntil];
    if (!until) continue;
    const at = new Date(until);
    if (Number.isNaN(at.getTime())) continue;
    const which = o.reason?.replace(/^Rate limited by the ACME server until \S+: /, '');
    if (at.getTime() <= now.getTime()) {
      out.push({ check: 'rate-limit', severity: 'info', sentence: `Order ${o.order} was rate limited by the ACME server until ${until} (${relative(at, now)}); it may send requests again.` });
      continue;
    }
    out.push({
      check: 'rate-limit', severity: 'error',
      sentence: `The ACME server rate-limited Order ${o.order}${which ? ` (${which})` : ''}; its Retry-After says to wait, so certsmith sends nothing for this order before ${until} (${relative(at, now)}).`,
      fix: 'Wait for that time; deleting and recreating the Certificate does not help (every new order counts against the limit). Group names into fewer certificates or use the CA\'s staging server for tests.',
    });
  }
  return out;
}
