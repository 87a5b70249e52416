import assert from 'node:assert/strict';
import test from 'node:test';
import { isWatchRequest, truthy } from './query.ts';

test("a boolean query parameter reads as kube-apiserver reads it: absent, '0' or 'false' in any case is false, anything else true", () => {
  const rows: [string | null, boolean][] = [
    [null, false], ['0', false], ['false', false], ['False', false], ['FALSE', false],
    ['1', true], ['true', true], ['True', true], ['TRUE', true], ['t', true], ['yes', true], ['', true],
  ];
  for (const [value, expected] of rows) assert.equal(truthy(value), expected, `watch=${value}`);
});

test('a request is a watch by its query, read the way the router reads it; a path segment named watch is no watch', () => {
  const rows: [string, boolean][] = [
    ['/api/v1/namespaces/default/secrets?watch=1', true],
    ['/api/v1/namespaces/default/secrets?watch=TRUE&timeoutSeconds=5', true],
    ['/api/v1/namespaces/default/secrets?watch', true],
    ['/api/v1/namespaces/default/secrets?%77atch=1', true],
    ['/api/v1/namespaces/default/secrets?watch=0', false],
    ['/api/v1/namespaces/default/secrets?watch=false', false],
    ['/api/v1/namespaces/default/secrets', false],
    ['/api/v1/namespaces/watch/secrets', false],
    ['/apis/cert-manager.io/v1/namespaces/default/certificates/watch', false],
    ['/api/v1/namespaces/default/secrets?labelSelector=watch%3D1', false],
  ];
  for (const [url, expected] of rows) assert.equal(isWatchRequest(url), expected, url);
});
