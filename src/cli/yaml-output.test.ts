import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { printedYaml } from './yaml-output.ts';

test('-o yaml quotes every string a YAML 1.1 reader (kubectl, PyYAML) would take for another type, and reads back as the same strings', async () => {
  const labels = { enabled: 'on', legacy: 'no', approved: 'yes', y: 'y', since: '2026-01-01', window: '12:30', hex: '0x1F', sci: '1e3', tilde: '~', plain: 'web' };
  const obj = { metadata: { name: 'tricky', labels, creationTimestamp: '2026-11-28T01:34:30Z' }, spec: { duration: '2160h', replicas: 3, ok: true } };
  const text = await printedYaml(obj);
  for (const v of ['on', 'no', 'yes', 'y', '2026-01-01', '12:30', '0x1F', '1e3', '~', '2026-11-28T01:34:30Z']) assert.match(text, new RegExp(`: "${v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"$`, 'm'), v);
  assert.match(text, /^ {4}plain: web$/m, 'a plain string stays bare');
  assert.match(text, /^ {2}replicas: 3$/m);
  assert.match(text, /^ {2}ok: true$/m);
  assert.deepEqual(YAML.parse(text, { version: '1.1' }), obj, 'a YAML 1.1 reader gets the strings back');
});
