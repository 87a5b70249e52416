// The checked-in descriptor is exactly what scripts/gen-protobuf.ts makes of the vendored
// upstream .proto files, so the message layouts cannot drift from (or be edited away from) them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generateMessagesModule, generatedModulePath } from '../../../scripts/gen-protobuf.ts';
import { inlineFields, messageNames } from './kinds.ts';
import { kubernetesMessagesJSON } from './kubernetes-messages.ts';

const descriptor = JSON.parse(kubernetesMessagesJSON) as { nested?: Record<string, any> };
/** the descriptor entry of a message or field by its dotted full name */
const lookup = (fullName: string): any => fullName.split('.').reduce<any>((node, part) => node?.nested?.[part] ?? node?.fields?.[part], descriptor);

test('kubernetes-messages.ts is what scripts/gen-protobuf.ts generates from third_party/kubernetes-proto', () => {
  assert.equal(readFileSync(generatedModulePath, 'utf8'), generateMessagesModule(), 'regenerate with `npx tsx scripts/gen-protobuf.ts`');
});

test('every served kind and every inline field is in the descriptor, with the upstream field numbers', () => {
  for (const name of Object.values(messageNames)) assert.ok(lookup(name)?.fields, name);
  for (const name of inlineFields) assert.ok(lookup(name)?.type, name);
  // spot checks against the upstream files' numbers (the wire contract)
  assert.deepEqual(lookup('k8s.io.api.core.v1.Secret').fields.data, { keyType: 'string', type: 'bytes', id: 2 });
  assert.equal(lookup('k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta.managedFields').id, 17);
  assert.equal(lookup('k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration.Webhooks').id, 2);
});
