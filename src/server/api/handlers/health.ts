// /healthz, /livez and /readyz as kube-apiserver answers them (k8s.io/apiserver/pkg/server/healthz):
// "ok", or with ?verbose one line per check; ?exclude=NAME skips a check; /readyz/NAME asks one.
// Unlike kube, a failing check shows its reason: the only one that fails here is the storage
// (a full disk), which the operator has to see. Only readiness has it: a full disk is not a
// reason for a supervisor to restart the process, which would not free any space.
import type http from 'node:http';
import type { Store } from '../../../store/store.ts';

interface HealthCheck {
  name: string;
  /** the problem, or undefined when healthy */
  problem(store: Store): string | undefined;
}

const ping: HealthCheck = { name: 'ping', problem: () => undefined };
// kube's checks that logging is not blocked; certsmith's logger writes synchronously, so it always answers
const log: HealthCheck = { name: 'log', problem: () => undefined };
const storage: HealthCheck = { name: 'storage', problem: (store) => store.storageProblem?.() };

const CHECKS: Record<string, HealthCheck[]> = {
  healthz: [ping, log],
  livez: [ping, log],
  readyz: [ping, log, storage],
};

/** Answers a health path; false when `path` is not one (left to the router, e.g. an unknown check). */
export function serveHealth(store: Store, path: string, query: URLSearchParams, res: http.ServerResponse): boolean {
  const m = /^\/(healthz|livez|readyz)(?:\/([^/]+))?$/.exec(path);
  const checks = m ? CHECKS[m[1]] : undefined;
  if (!m || !checks) return false;
  const [, endpoint, only] = m;
  if (only !== undefined) {
    const check = checks.find((c) => c.name === only);
    if (!check) return false;
    const problem = check.problem(store);
    text(res, problem ? 503 : 200, problem ? `internal server error: ${problem}\n` : 'ok');
    return true;
  }
  const excluded = new Set(query.getAll('exclude'));
  const lines: string[] = [];
  let failed = false;
  for (const check of checks) {
    if (excluded.delete(check.name)) {
      lines.push(`[+]${check.name} excluded: ok`);
      continue;
    }
    const problem = check.problem(store);
    if (problem) failed = true;
    lines.push(problem ? `[-]${check.name} failed: ${problem}` : `[+]${check.name} ok`);
  }
  if (excluded.size) lines.push(`warn: some health checks cannot be excluded: no matches for ${[...excluded].map((n) => JSON.stringify(n)).join(',')}`);
  if (failed) text(res, 503, `${lines.join('\n')}\n${endpoint} check failed\n`);
  else text(res, 200, query.has('verbose') ? `${lines.join('\n')}\n${endpoint} check passed\n` : 'ok');
  return true;
}

function text(res: http.ServerResponse, status: number, body: string) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
  res.end(body);
}
