// decideTrigger as a table: the gates before the policy chain, the chain's reason on Issuing,
// and the renewal check after it (Renewing), one row per outcome. The chain itself, reason by
// reason, is policies.test.ts; backoff arithmetic is trigger.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideTrigger, type TriggerDecision, type TriggerInput } from './trigger.ts';
import { defaultBackoff } from '../../../shared/backoff.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';
import { NOW, DAY, HOUR, cert, certificate, cond, issuedAnnotations, key, secretFor } from '../../testing/fixtures.ts';

interface Row {
  name: string;
  why: string;
  input: TriggerInput;
  at?: Date;
  /** reason on Issuing=True, or undefined for no issuance */
  issuing?: string;
  requeueAfterMs?: number;
  check?: (d: TriggerDecision) => void;
}

test('decideTrigger: one row per outcome', async () => {
  const mainKey = await key('main');
  const notBefore = new Date(NOW.getTime() - HOUR);
  const good = await cert({ keyPem: mainKey, notBefore, durationMs: 90 * DAY });
  const secret = secretFor({ keyPem: mainKey, certPem: good, annotations: issuedAnnotations() });
  // cert-manager's default: renew when 2/3 of the 90 days have passed
  const renewalTime = new Date(notBefore.getTime() + 60 * DAY);
  const input = (o: Partial<TriggerInput> = {}): TriggerInput => ({ certificate: certificate({ generation: 2 }), secret, isSecretOwner: true, failuresInSameMinute: 0, ...o });

  const rows: Row[] = [
    { name: 'being deleted', why: 'no issuance for a Certificate being deleted', input: input({ certificate: certificate({ deletionTimestamp: '2026-06-01T00:00:00Z' }), secret: undefined }) },
    { name: 'Issuing already True', why: 'never acts while issuing (a person may have set it to force issuance)', input: input({ certificate: certificate({ status: { conditions: [cond('Issuing', 'True', 'ManuallyTriggered')] } }), secret: undefined }) },
    { name: 'not the Secret\'s owner', why: 'another Certificate owns the secretName: look again in 3 minutes, nothing else', input: input({ isSecretOwner: false, secret: undefined }), requeueAfterMs: 3 * 60_000 },
    {
      name: 'no Secret', why: 'the chain\'s reason goes on Issuing=True with the generation, and an Issuing event',
      input: input({ secret: undefined }), issuing: 'DoesNotExist',
      check: (d) => {
        const c = d.conditions!.find((x) => x.type === 'Issuing')!;
        assert.deepEqual([c.message, c.observedGeneration, c.lastTransitionTime], ['Issuing certificate as Secret does not exist', 2, '2026-06-01T00:00:00Z']);
        assert.deepEqual(d.events, [{ type: 'Normal', reason: 'Issuing', message: 'Issuing certificate as Secret does not exist' }]);
      },
    },
    { name: 'Secret for another Certificate', why: 'any chain reason starts issuance', input: input({ secret: secretFor({ keyPem: mainKey, certPem: good, annotations: { ...issuedAnnotations(), [CertificateAnnotation.certificateName]: 'b' } }) }), issuing: 'IncorrectCertificate' },
    { name: 'up to date, renewal not due', why: 'no issuance; look again at the renewal time', input: input(), requeueAfterMs: renewalTime.getTime() - NOW.getTime() },
    {
      name: 'renewal due', why: 'Renewing once the renewal time has come, naming it', at: renewalTime, input: input(), issuing: 'Renewing',
      check: (d) => assert.equal(d.violation?.message, 'Renewing certificate as renewal was scheduled at 2026-07-30T23:00:00Z'),
    },
    { name: 'one second before the renewal time', why: 'not a moment early', at: new Date(renewalTime.getTime() - 1000), input: input(), requeueAfterMs: 1000 },
    { name: 'renewal past due and expired', why: 'Renewing, there is no Expired reason in the trigger', at: new Date(NOW.getTime() + 100 * DAY), input: input(), issuing: 'Renewing' },
    { name: 'renewal disabled', why: 'never renewed automatically, nothing scheduled', at: new Date(NOW.getTime() + 100 * DAY), input: input({ certificate: certificate({ spec: { renewal: { policy: 'Disabled' } } as never }) }) },
    { name: 'renewal disabled, Secret gone', why: 'Disabled stops renewal only: a missing Secret is still issued', input: input({ certificate: certificate({ spec: { renewal: { policy: 'Disabled' } } as never }), secret: undefined }), issuing: 'DoesNotExist' },
    {
      name: 'failed an hour ago, Secret gone', why: 'backoff comes before the chain: the first retry 1h after the failure',
      at: new Date(NOW.getTime() + 30 * 60_000),
      input: input({ certificate: certificate({ status: { lastFailureTime: '2026-06-01T00:00:00Z', issuanceAttempts: 1 } }), secret: undefined }), requeueAfterMs: 30 * 60_000,
      check: (d) => assert.equal(d.events[0]?.reason, 'Backoff'),
    },
  ];

  const failures: string[] = [];
  for (const r of rows) {
    const d = decideTrigger(r.input, r.at ?? NOW, defaultBackoff);
    const issuing = d.conditions?.find((c) => c.type === 'Issuing' && c.status === 'True')?.reason;
    try {
      assert.deepEqual({ issuing, requeueAfterMs: d.requeueAfterMs }, { issuing: r.issuing, requeueAfterMs: r.requeueAfterMs });
      r.check?.(d);
    } catch (e) {
      failures.push(`${r.name} (${r.why}): ${(e as Error).message}`);
    }
  }
  assert.deepEqual(failures, []);
});
