// kube-apiserver's health endpoints as kubectl users read them (`kubectl get --raw '/readyz?verbose'`,
// `/readyz/<check>`, `?exclude=`): k8s.io/apiserver/pkg/server/healthz's output, with the storage
// check's reason shown (certsmith's one failing check is a full disk, which the operator must see).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import type { Store } from '../../../store/store.ts';
import { serveHealth } from './health.ts';

function ask(target: string, problem?: string): { status: number; body: string } {
  const store = { storageProblem: () => problem } as unknown as Store;
  const got = { status: 0, body: '' };
  const res = {
    writeHead(status: number) { got.status = status; return this; },
    end(body?: string) { got.body = body ?? ''; },
  } as unknown as http.ServerResponse;
  const url = new URL(target, 'http://localhost');
  assert.equal(serveHealth(store, url.pathname, url.searchParams, res), true, target);
  return got;
}

test('health endpoints: ok, ?verbose, a failing check with its reason, ?exclude, one check by name (table)', () => {
  const full = 'the disk is full (SQLITE_FULL)';
  const rows: { target: string; problem?: string; status: number; body: string }[] = [
    { target: '/readyz', status: 200, body: 'ok' },
    { target: '/livez', status: 200, body: 'ok' },
    { target: '/readyz?verbose', status: 200, body: '[+]ping ok\n[+]log ok\n[+]storage ok\nreadyz check passed\n' },
    { target: '/livez?verbose', status: 200, body: '[+]ping ok\n[+]log ok\nlivez check passed\n' },
    { target: '/healthz?verbose', status: 200, body: '[+]ping ok\n[+]log ok\nhealthz check passed\n' },
    { target: '/readyz', problem: full, status: 503, body: `[+]ping ok\n[+]log ok\n[-]storage failed: ${full}\nreadyz check failed\n` },
    // a full disk is not a reason to restart the process: liveness stays ok
    { target: '/livez', problem: full, status: 200, body: 'ok' },
    { target: '/readyz?exclude=storage', problem: full, status: 200, body: 'ok' },
    { target: '/readyz?exclude=storage&verbose', problem: full, status: 200, body: '[+]ping ok\n[+]log ok\n[+]storage excluded: ok\nreadyz check passed\n' },
    { target: '/readyz?exclude=etcd&verbose', status: 200, body: '[+]ping ok\n[+]log ok\n[+]storage ok\nwarn: some health checks cannot be excluded: no matches for "etcd"\nreadyz check passed\n' },
    { target: '/readyz/ping', problem: full, status: 200, body: 'ok' },
    { target: '/readyz/storage', status: 200, body: 'ok' },
    { target: '/readyz/storage', problem: full, status: 503, body: `internal server error: ${full}\n` },
  ];
  for (const r of rows) assert.deepEqual(ask(r.target, r.problem), { status: r.status, body: r.body }, `${r.target}${r.problem ? ' (disk full)' : ''}`);
});

test('paths that are not health checks are left to the router: /readyz/nope, /livez/storage, /metrics', () => {
  const store = {} as Store;
  for (const p of ['/readyz/nope', '/livez/storage', '/readyz/ping/x', '/metrics', '/readyzx']) {
    assert.equal(serveHealth(store, p, new URLSearchParams(), {} as http.ServerResponse), false, p);
  }
});
