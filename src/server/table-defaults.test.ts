// Kinds kube-apiserver prints with its default table convertor (CustomResourceDefinitions among
// them): NAME and CREATED AT, an RFC 3339 time, not an age.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CustomResourceDefinitionType } from '../api/resources.ts';
import { tableFor } from './table.ts';

test('a CustomResourceDefinition prints as kube prints it: Name and Created At (RFC 3339)', () => {
  const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'certificates.cert-manager.io', creationTimestamp: '2026-11-27T10:00:00Z' } };
  const t = tableFor(CustomResourceDefinitionType, [crd], { now: new Date('2026-11-27T11:00:00Z') });
  assert.deepEqual(t.columnDefinitions.map((c) => [c.name, c.type, c.format]), [['Name', 'string', 'name'], ['Created At', 'date', '']]);
  assert.deepEqual(t.rows[0].cells, ['certificates.cert-manager.io', '2026-11-27T10:00:00Z']);
});
