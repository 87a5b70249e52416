// `npm run gen:crds`: writes deploy/crds/*.yaml from the schema (src/api/crdgen.ts); without
// --write it prints them. crdgen.test.ts fails when the committed files drift from the schema.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crdDirectory, generateCRDs } from '../src/api/crdgen.ts';

const files = generateCRDs();
if (process.argv.includes('--write')) {
  mkdirSync(crdDirectory, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(crdDirectory, name), text);
  process.stdout.write(`wrote ${Object.keys(files).length} CRDs to ${crdDirectory}\n`);
} else {
  process.stdout.write(Object.values(files).join('---\n'));
}
