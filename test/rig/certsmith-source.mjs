#!/usr/bin/env node
// certsmith from the TypeScript sources, through tsx: what the tests spawn, so that a test run
// exercises the tree as it is, with no build step between an edit and the run.
// bin/certsmith.mjs (the command users run) runs the compiled build instead;
// test/e2e/compiled.test.ts covers that one.
import { register } from 'tsx/esm/api';
register();
await import('../../src/cli/main.ts');
