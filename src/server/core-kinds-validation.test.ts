// Leases and Events are decoded and validated as kube-apiserver does: a string in an integer
// field or a time that does not parse is a 400 (the object cannot be decoded), and the
// validation rules are 422s naming the field. They were stored as sent, so a Lease with
// leaseDurationSeconds "ten" reached the leader election, and typed clients could not read them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestJSON, startTestApiServer } from './testing/test-api-server.ts';

const { api } = await startTestApiServer('core-kinds');
const leases = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
const events = '/api/v1/namespaces/team-a/events';
const lease = (spec: Record<string, unknown>) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec });

test('a Lease: integer and time fields must decode (400); a duration above 0 and transitions of 0 or more (422)', async () => {
  const rows: [Record<string, unknown>, number, RegExp][] = [
    [{ leaseDurationSeconds: 'ten' }, 400, /^Lease in version "v1" cannot be handled as a Lease: .*spec\.leaseDurationSeconds.* int32/],
    [{ leaseTransitions: 1.5 }, 400, /spec\.leaseTransitions.* int32/],
    [{ renewTime: 'garbage' }, 400, /^Lease in version "v1" cannot be handled as a Lease: parsing time "garbage"/],
    [{ leaseDurationSeconds: -5 }, 422, /^Lease\.coordination\.k8s\.io "l" is invalid: spec\.leaseDurationSeconds: Invalid value: -5: must be greater than 0$/],
    [{ leaseTransitions: -1 }, 422, /spec\.leaseTransitions: Invalid value: -1: must be greater than or equal to 0/],
  ];
  for (const [spec, code, message] of rows) {
    const r = await requestJSON(api, 'POST', leases, lease(spec));
    assert.equal(r.status, code, JSON.stringify(spec));
    assert.match(r.body.message, message, JSON.stringify(spec));
  }
  const ok = await requestJSON(api, 'POST', leases, lease({ holderIdentity: 'me', leaseDurationSeconds: 15, leaseTransitions: 0, renewTime: '2026-11-27T10:00:00.123456Z', acquireTime: '2026-11-27T10:00:00Z' }));
  assert.equal(ok.status, 201, JSON.stringify(ok.body));
});

test("an Event: count and times must decode (400); a namespaced involvedObject in another namespace is refused (422)", async () => {
  assert.equal((await requestJSON(api, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } })).status, 201);
  const event = (o: Record<string, unknown>) => ({
    apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, reason: 'R', message: 'm', type: 'Normal',
    involvedObject: { kind: 'Certificate', name: 'c', namespace: 'team-a' }, ...o,
  });
  const rows: [Record<string, unknown>, number, RegExp][] = [
    [{ count: 'x' }, 400, /^Event in version "v1" cannot be handled as a Event: .*count.* int32/],
    [{ lastTimestamp: 'notatime' }, 400, /parsing time "notatime"/],
    [{ involvedObject: { kind: 'Certificate', name: 'c', namespace: 'default' } }, 422, /^Event "e" is invalid: involvedObject\.namespace: Invalid value: "default": does not match event\.namespace$/],
  ];
  for (const [o, code, message] of rows) {
    const r = await requestJSON(api, 'POST', events, event(o));
    assert.equal(r.status, code, JSON.stringify(o));
    assert.match(r.body.message, message, JSON.stringify(o));
  }
  assert.equal((await requestJSON(api, 'POST', events, event({ count: 2, lastTimestamp: '2026-11-27T10:00:00Z' }))).status, 201);
  // a cluster-scoped object's Event has no namespace of its own
  assert.equal((await requestJSON(api, 'POST', events, event({ metadata: { name: 'e2' }, involvedObject: { kind: 'ClusterIssuer', name: 'le' } }))).status, 201);
});
