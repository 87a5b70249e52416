// End to end, as a user runs it: the real server with the examples applied at start, checked
// with openssl; and the backoff flow driven through the CLI with approvals by hand.
import { startServer } from './harness.ts';
import { lifecycleTests } from './lifecycle-checks.ts';

lifecycleTests({ start: ({ serverArgs, controllerArgs }) => startServer({ args: [...serverArgs, ...controllerArgs] }) });
