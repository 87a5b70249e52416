// Spawned by durability.test.ts: writes as fast as it can and prints each acknowledged write,
// until the parent kills it with SIGKILL.
import type { KubeObject } from '../../api/meta.ts';
import { LeaseType, SecretType } from '../../api/resources.ts';
import { openSqliteStore } from './index.ts';

const [path, round] = process.argv.slice(2);
const store = openSqliteStore({ path, compactKeep: 200 });
const lease: KubeObject = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'counter', namespace: 'default' }, spec: { leaseTransitions: 0 } };
if (!(await store.get(LeaseType, 'default', 'counter'))) await store.create(LeaseType, lease);
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const name = `r${round}-${i}`;
  const s = await store.create<KubeObject>(SecretType, {
    apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: `ns-${i % 3}` },
    stringData: { payload: 'x'.repeat(200 + (i % 500)) },
  });
  process.stdout.write(`C ${s.metadata.resourceVersion} ${name}\n`);
  const cur = (await store.get(LeaseType, 'default', 'counter'))!;
  const n = (cur.spec as { leaseTransitions: number }).leaseTransitions + 1;
  const u = await store.update(LeaseType, { ...cur, spec: { leaseTransitions: n } });
  process.stdout.write(`U ${u.metadata.resourceVersion} ${n}\n`);
}
