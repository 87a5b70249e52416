// Generates deploy/crds/*.yaml (apiextensions.k8s.io/v1) from the schema in schema.ts.
// `npm run gen:crds` (scripts/gen-crds.ts) rewrites the files; crdgen.test.ts fails
// when the committed files drift from what the schema produces.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type * as YAMLModule from 'yaml';
import type { TSchema } from '@sinclair/typebox';
import * as R from './resources.ts';
import { schemasByKind } from './schema.ts';

export type JSONSchemaObject = Record<string, unknown>;

/**
 * Converts a TypeBox schema into a Kubernetes structural schema: TypeBox's Record becomes
 * `additionalProperties`, and the symbol-keyed TypeBox metadata and boolean additionalProperties
 * (not allowed in structural schemas) are dropped.
 */
export function toStructural(schema: TSchema | JSONSchemaObject): JSONSchemaObject {
  const src = JSON.parse(JSON.stringify(schema)) as JSONSchemaObject;
  return convert(src);
}

function convert(s: JSONSchemaObject): JSONSchemaObject {
  const out: JSONSchemaObject = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'patternProperties') {
      out.additionalProperties = convert(Object.values(v as Record<string, JSONSchemaObject>)[0]);
    } else if (k === 'properties') {
      const props = v as Record<string, JSONSchemaObject>;
      if (Object.keys(props).length > 0) out.properties = Object.fromEntries(Object.entries(props).map(([pk, pv]) => [pk, convert(pv)]));
    } else if (k === 'items') {
      out.items = convert(v as JSONSchemaObject);
    } else if (k === 'additionalProperties') {
      if (typeof v === 'object' && v !== null) out.additionalProperties = convert(v as JSONSchemaObject);
    } else if (k !== '$id' && k !== '$schema') {
      out[k] = v;
    }
  }
  return out;
}

const metaFields = {
  apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' },
  kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
};

/** The openAPIV3Schema of one cert-manager kind, as the CRD carries it. */
export function crdSchema(kind: string): JSONSchemaObject {
  const converted = toStructural(schemasByKind[kind]);
  const props = converted.properties as Record<string, JSONSchemaObject>;
  return {
    type: 'object',
    description: converted.description,
    required: kind === 'Order' || kind === 'Challenge' ? ['metadata', 'spec'] : ['spec'],
    properties: { ...metaFields, metadata: { type: 'object' }, spec: props.spec, status: props.status },
  };
}

interface PrinterColumn { name: string; type: string; jsonPath: string; priority?: number; description?: string }

const ready = (t = 'Ready'): PrinterColumn => ({ name: t, type: 'string', jsonPath: `.status.conditions[?(@.type=="${t}")].status` });
const readyMessage: PrinterColumn = { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message', priority: 1 };
const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.' };

// Columns as cert-manager's CRDs define them, so `kubectl get` output matches.
const printerColumns: Record<string, PrinterColumn[]> = {
  Certificate: [ready(), { name: 'Secret', type: 'string', jsonPath: '.spec.secretName' }, { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name', priority: 1 }, readyMessage, age],
  CertificateRequest: [ready('Approved'), ready('Denied'), ready(), { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name' }, { name: 'Requester', type: 'string', jsonPath: '.spec.username' }, readyMessage, age],
  Issuer: [ready(), readyMessage, age],
  ClusterIssuer: [ready(), readyMessage, age],
  Order: [{ name: 'State', type: 'string', jsonPath: '.status.state' }, { name: 'Issuer', type: 'string', jsonPath: '.spec.issuerRef.name', priority: 1 }, { name: 'Reason', type: 'string', jsonPath: '.status.reason', priority: 1, description: '' }, age],
  Challenge: [{ name: 'State', type: 'string', jsonPath: '.status.state' }, { name: 'Domain', type: 'string', jsonPath: '.spec.dnsName' }, { name: 'Reason', type: 'string', jsonPath: '.status.reason', priority: 1, description: '' }, age],
};

export const crdTypes: R.ResourceType[] = [R.Certificate, R.CertificateRequest, R.Issuer, R.ClusterIssuer, R.Order, R.Challenge];

export function crdObject(t: R.ResourceType): JSONSchemaObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${t.plural}.${t.group}`,
      labels: { 'app.kubernetes.io/name': 'certsmith', 'app.kubernetes.io/component': 'crds' },
    },
    spec: {
      group: t.group,
      names: {
        kind: t.kind,
        listKind: t.listKind,
        plural: t.plural,
        singular: t.singular,
        ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
        ...(t.categories?.length ? { categories: t.categories } : {}),
      },
      scope: t.namespaced ? 'Namespaced' : 'Cluster',
      versions: [{
        name: t.version,
        served: true,
        storage: true,
        additionalPrinterColumns: printerColumns[t.kind],
        subresources: t.statusSubresource ? { status: {} } : undefined,
        schema: { openAPIV3Schema: crdSchema(t.kind) },
      }],
    },
  };
}

const header = '# Generated by src/api/crdgen.ts from src/api/schema.ts. Do not edit; run `npm run gen:crds`.\n';

/** CRD YAML documents keyed by file name (`<plural>.<group>.yaml`). */
export function generateCRDs(): Record<string, string> {
  // the YAML printer loads only to write CRD files, not with the server's OpenAPI documents (issue 17)
  const { stringify } = createRequire(import.meta.url)('yaml') as typeof YAMLModule;
  const out: Record<string, string> = {};
  for (const t of crdTypes) {
    out[`${t.plural}.${t.group}.yaml`] = header + stringify(crdObject(t), { lineWidth: 0 });
  }
  return out;
}

/** deploy/crds, from this file in src/: `npm run gen:crds` and crdgen.test.ts run the sources, never the bundle in dist/ */
export const crdDirectory = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy', 'crds');
