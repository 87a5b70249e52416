#!/usr/bin/env node
// certsmith from the tree as it is: what the tests spawn, so that a test run exercises the
// sources with no build step of the user's between an edit and the run.
// - Under the test command (scripts/test.mjs), which built the tree into .test-dist/ as its
//   first step and names it in CERTSMITH_TEST_BUILD: that build, which starts as the product
//   does. Through tsx, every `certsmith get` and server start compiled the sources again, the
//   largest use of CPU in the end-to-end tests.
// - Otherwise (a test file run on its own with `node --import tsx --test`): the sources through tsx.
// bin/certsmith.mjs (the command users run) runs dist/; test/e2e/compiled.test.ts covers that one.
import module from 'node:module';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const built = process.env.CERTSMITH_TEST_BUILD;
if (built) {
  module.enableCompileCache?.();
  await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../../src/cli/main.ts');
}
