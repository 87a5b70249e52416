// decideReadiness as a table: one row per outcome of Ready and of the renewal conditions and
// fields it writes (cert-manager's readiness controller, reference section 1.7).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideReadiness, type ReadinessDecision } from './readiness.ts';
import type { CertificateInput } from '../policies.ts';
import { CertificateAnnotation } from '../../../api/annotations.ts';
import { NOW, DAY, HOUR, cert, certificate, cond, issuedAnnotations, key, secretFor } from '../../testing/fixtures.ts';

interface Row {
  name: string;
  why: string;
  input: CertificateInput;
  at?: Date;
  check: (d: ReadinessDecision) => void;
}

const ready = (d: ReadinessDecision) => d.fields.conditions?.find((c) => c.type === 'Ready');
const has = (d: ReadinessDecision, type: string) => d.fields.conditions?.find((c) => c.type === type);

test('decideReadiness: one row per outcome', async () => {
  const mainKey = await key('main');
  const ann = issuedAnnotations();
  // valid from NOW-1h for 90 days: cert-manager's default renews at 2/3 of the duration
  const notBefore = new Date(NOW.getTime() - HOUR);
  const good = await cert({ keyPem: mainKey, notBefore, durationMs: 90 * DAY });
  const expired = await cert({ keyPem: mainKey, notBefore: new Date(NOW.getTime() - 2 * DAY), durationMs: DAY });
  const notAfter = new Date(notBefore.getTime() + 90 * DAY);
  const secret = secretFor({ keyPem: mainKey, certPem: good, annotations: ann });
  const crt = certificate({ generation: 3 });

  const rows: Row[] = [
    {
      name: 'no Secret', why: 'Ready=False with the chain\'s reason; no dates without a certificate',
      input: { certificate: crt },
      check: (d) => {
        assert.deepEqual([ready(d)?.status, ready(d)?.reason], ['False', 'DoesNotExist']);
        assert.deepEqual([d.fields.notBefore, d.fields.notAfter, d.fields.renewalTime, d.renewal], [undefined, undefined, undefined, undefined]);
      },
    },
    {
      name: 'Secret from another issuer', why: 'any chain violation makes Ready=False with its reason and message, dates still shown',
      input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: good, annotations: { ...ann, [CertificateAnnotation.issuerName]: 'old' } }) },
      check: (d) => {
        assert.deepEqual([ready(d)?.status, ready(d)?.reason], ['False', 'IncorrectIssuer']);
        assert.match(ready(d)!.message!, /previously issued by/);
        assert.equal(d.fields.notAfter, notAfter.toISOString().replace('.000', ''));
      },
    },
    {
      name: 'up to date', why: 'Ready=True "Ready"; notBefore/notAfter from the certificate, renewalTime at 2/3 of its life',
      input: { certificate: crt, secret },
      check: (d) => {
        assert.deepEqual([ready(d)?.status, ready(d)?.reason, ready(d)?.message], ['True', 'Ready', 'Certificate is up to date and has not expired']);
        assert.equal(ready(d)?.observedGeneration, 3);
        assert.equal(d.fields.notBefore, '2026-05-31T23:00:00Z');
        assert.equal(d.fields.notAfter, '2026-08-29T23:00:00Z');
        assert.equal(d.fields.renewalTime, '2026-07-30T23:00:00Z');
        assert.equal(d.fields.renewal, undefined, 'the default policy without windows writes no status.renewal');
      },
    },
    {
      name: 'exactly at notAfter', why: 'Expired only when now is after notAfter (strict)', at: notAfter,
      input: { certificate: crt, secret },
      check: (d) => assert.equal(ready(d)?.reason, 'Ready'),
    },
    {
      name: 'one second after notAfter', why: 'Expired replaces cert-manager\'s renewal check in readiness', at: new Date(notAfter.getTime() + 1000),
      input: { certificate: crt, secret },
      check: (d) => {
        assert.deepEqual([ready(d)?.status, ready(d)?.reason], ['False', 'Expired']);
        assert.equal(ready(d)?.message, `Certificate expired on ${notAfter.toUTCString()}`);
      },
    },
    {
      name: 'expired and from another Certificate', why: 'the chain comes before Expired',
      input: { certificate: crt, secret: secretFor({ keyPem: mainKey, certPem: expired, annotations: { ...ann, [CertificateAnnotation.certificateName]: 'b' } }) },
      check: (d) => assert.equal(ready(d)?.reason, 'IncorrectCertificate'),
    },
    {
      name: 'renewal disabled', why: 'RenewalDisabled=True says how to renew by hand; no renewalTime; status.renewal.policy shown',
      input: { certificate: certificate({ spec: { renewal: { policy: 'Disabled' } } as never }), secret },
      check: (d) => {
        assert.equal(ready(d)?.reason, 'Ready');
        assert.equal(has(d, 'RenewalDisabled')?.status, 'True');
        assert.match(has(d, 'RenewalDisabled')!.message!, /certsmith renew a -n default/);
        assert.equal(d.fields.renewalTime, undefined);
        assert.deepEqual(d.fields.renewal, { policy: 'Disabled' });
      },
    },
    {
      name: 'invalid renewal window', why: 'RenewalConfigInvalid=True and no renewal scheduled, Ready unaffected',
      input: { certificate: certificate({ spec: { renewal: { windows: [{ cron: 'not a cron', duration: '1h' }] } } as never }), secret },
      check: (d) => {
        assert.equal(ready(d)?.reason, 'Ready');
        assert.equal(has(d, 'RenewalConfigInvalid')?.status, 'True');
        assert.match(has(d, 'RenewalConfigInvalid')!.message!, /no renewal is scheduled until this is fixed/);
        assert.equal(d.fields.renewalTime, undefined);
        assert.equal(d.fields.renewal?.windows?.valid, false);
      },
    },
    {
      name: 'valid renewal window', why: 'RenewalWindow condition and status.renewal.windows.valid=true; renewalTime inside a window',
      input: { certificate: certificate({ spec: { renewal: { windows: [{ cron: '0 2 * * *', duration: '2h' }] } } as never }), secret },
      check: (d) => {
        assert.equal(has(d, 'RenewalWindow')?.status, 'True');
        assert.equal(d.fields.renewal?.windows?.valid, true);
        const hour = new Date(d.fields.renewalTime!).getUTCHours();
        assert.ok(hour >= 2 && hour < 4, `renewalTime ${d.fields.renewalTime} in the 02:00–04:00 window`);
      },
    },
    {
      name: 'renewal conditions from an earlier spec', why: 'RenewalDisabled/RenewalConfigInvalid/RenewalWindow are removed once the spec no longer asks for them',
      input: { certificate: certificate({ status: { conditions: [cond('RenewalDisabled', 'True', 'Disabled'), cond('RenewalConfigInvalid', 'True', 'InvalidWindow'), cond('RenewalWindow', 'True', 'InsideWindow')] } }), secret },
      check: (d) => assert.deepEqual(d.fields.conditions?.map((c) => c.type), ['Ready']),
    },
    {
      name: 'Ready already True', why: 'lastTransitionTime is kept when the status does not change',
      input: { certificate: certificate({ status: { conditions: [cond('Ready', 'True', 'Ready', 'Certificate is up to date and has not expired', { lastTransitionTime: '2026-01-01T00:00:00Z', observedGeneration: 1 })] } }), secret },
      check: (d) => assert.equal(ready(d)?.lastTransitionTime, '2026-01-01T00:00:00Z'),
    },
  ];
  for (const r of rows) {
    const d = decideReadiness(r.input, r.at ?? NOW);
    try {
      r.check(d);
    } catch (e) {
      (e as Error).message = `${r.name} (${r.why}): ${(e as Error).message}`;
      throw e;
    }
  }
});
