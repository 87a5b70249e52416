// The runtime's test store is the embedded store plus fault hooks: it must keep every store
// semantic the conformance suite checks, so no runtime test runs against a looser double.
import { runStoreConformance } from '../../store/conformance.ts';
import { openTestStore } from './test-store.ts';

runStoreConformance('runtime test store (sqlite :memory: with fault hooks)', async () => {
  const store = openTestStore();
  return { store, cleanup: () => store.close(), compact: async () => store.compact() };
});
