// The version `certsmith --version` prints: package.json's, found above this module wherever it
// runs from (dist/ when installed, src/cli/ in development), read only when asked for.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function certsmithVersion(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from, up = 0; up < 4; dir = dirname(dir), up++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'certsmith' && pkg.version) return pkg.version;
    } catch { /* not here: one folder up */ }
  }
  return 'unknown';
}
