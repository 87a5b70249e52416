// Key manager: while Issuing=True, keeps exactly one "next private key" Secret for the
// Certificate and names it in status; when issuing ends, deletes it.
import { getCondition } from '../../../api/conditions.ts';
import { keySpecMismatches } from '../../../pki/keys.ts';
import { type Certificate as CertificateObj } from '../../../api/types.ts';
import { type Secret } from '../../../api/meta.ts';
import { isDeleting } from '../../../shared/ownership.ts';
import { decodeBase64, parseKeyMemo } from '../../../shared/parse-memo.ts';
import { keySpecOf } from '../../../shared/certificate-template.ts';
import { rotationPolicyOf } from '../../../api/defaults.ts';
import type { EventSpec } from '../../decision.ts';
import { defaultReplacementBackoff, gateReplacement, type ReplacementBackoff, type ReplacementHistory } from '../replacement-backoff.ts';

export interface KeyManagerInput {
  certificate: CertificateObj;
  /** Secrets labelled as next private keys and controlled by this Certificate */
  nextKeySecrets: Secret[];
  /** spec.secretName, for rotationPolicy Never */
  secret?: Secret;
}

export type KeyAction =
  /** mismatch: the key does not fit the spec and a new one will follow (replacement backoff applies) */
  | { kind: 'delete'; name: string; mismatch?: true }
  | { kind: 'setStatusName'; name: string | undefined }
  /** create a next-key Secret holding a new key, or a copy of the existing one (Never) */
  | { kind: 'create'; reuseKeyFrom?: string };

export interface KeyManagerDecision {
  actions: KeyAction[];
  events: EventSpec[];
}

export function decideKeyManager(input: KeyManagerInput): KeyManagerDecision {
  const crt = input.certificate;
  const statusName = crt.status?.nextPrivateKeySecretName;
  const events: EventSpec[] = [];
  if (isDeleting(crt)) return { actions: [], events };

  if (getCondition(crt.status?.conditions, 'Issuing')?.status !== 'True') {
    const actions: KeyAction[] = input.nextKeySecrets.map((s) => ({ kind: 'delete', name: s.metadata.name! }));
    if (statusName) actions.push({ kind: 'setStatusName', name: undefined });
    return { actions, events };
  }

  const secrets = input.nextKeySecrets;
  if (secrets.length > 1) {
    const extra = statusName ? secrets.filter((s) => s.metadata.name !== statusName) : secrets;
    return { actions: extra.map((s) => ({ kind: 'delete', name: s.metadata.name! })), events };
  }
  if (secrets.length === 1) {
    const s = secrets[0];
    const name = s.metadata.name!;
    if (!statusName) return { actions: [{ kind: 'setStatusName', name }], events };
    if (name !== statusName) return { actions: [{ kind: 'delete', name }], events };
    const key = parseKeyMemo(decodeBase64(s.data?.['tls.key']));
    if (!key.value) return { actions: [{ kind: 'delete', name, mismatch: true }], events };
    const mismatched = keySpecMismatches(key.value, keySpecOf(crt.spec));
    if (mismatched.length) {
      events.push({ type: 'Normal', reason: 'Deleted', message: `Regenerating private key due to change in fields: [${mismatched.join(', ')}]` });
      return { actions: [{ kind: 'delete', name, mismatch: true }], events };
    }
    return { actions: [], events };
  }

  // No next key yet.
  if (rotationPolicyOf(crt.spec) === 'Never') {
    const existing = decodeBase64(input.secret?.data?.['tls.key']);
    if (existing) {
      const key = parseKeyMemo(existing);
      const mismatched = key.value ? keySpecMismatches(key.value, keySpecOf(crt.spec)) : [];
      if (!key.value) {
        events.push({ type: 'Warning', reason: 'DecodeFailed', message: `Failed to decode private key stored in Secret "${crt.spec.secretName}" - generating new key` });
      } else if (mismatched.length) {
        events.push({
          type: 'Warning', reason: 'CannotRegenerateKey',
          message: `User intervention required: existing private key in Secret "${crt.spec.secretName}" does not match requirements on Certificate resource, mismatching fields: [${mismatched.join(', ')}], but cert-manager cannot create new private key as the Certificate's .spec.privateKey.rotationPolicy is unset or set to Never. To allow cert-manager to create a new private key you can set .spec.privateKey.rotationPolicy to 'Always' (this will result in the private key being regenerated every time a cert is renewed) `,
        });
        return { actions: [], events };
      } else {
        return { actions: [{ kind: 'create', reuseKeyFrom: crt.spec.secretName }], events };
      }
    }
  }
  return { actions: [{ kind: 'create' }], events };
}

/**
 * The decision with the replacement backoff applied (../replacement-backoff.ts): a next key
 * that keeps not fitting the spec is replaced at a bounded rate, and its events wait with it.
 */
export function gateKeyReplacements(d: KeyManagerDecision, history: ReplacementHistory | undefined, now: Date, cfg: ReplacementBackoff = defaultReplacementBackoff): KeyManagerDecision & { requeueAfterMs?: number; history?: ReplacementHistory } {
  const g = gateReplacement({ replacing: d.actions.some((a) => a.kind === 'delete' && a.mismatch), idle: d.actions.length === 0 && d.events.length === 0 }, history, now, cfg);
  if (!g.proceed) return { actions: [], events: [], requeueAfterMs: g.requeueAfterMs, history: g.history };
  return { ...d, history: g.history };
}
