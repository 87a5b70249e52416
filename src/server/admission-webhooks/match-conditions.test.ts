// matchConditions as kube-apiserver compiles and evaluates them: one row per expression form
// kube's documentation uses, then the matcher's rules (false wins, errors go to the failurePolicy),
// compile errors in kube's wording, and the evaluation budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileCondition, CompileError, evaluateMatchConditions, evaluationBudgetMs, type ConditionVariables } from './match-conditions.ts';

const object = {
  apiVersion: 'v1', kind: 'Secret',
  metadata: { name: 'tls-web', namespace: 'default', labels: { team: 'web' }, annotations: { 'example.com/skip': 'true' } },
  spec: { replicas: 3, ratio: 0.5, hosts: ['a.example.com', 'b.example.com'] },
};
const variables: ConditionVariables = {
  object, oldObject: null,
  request: {
    kind: { group: '', version: 'v1', kind: 'Secret' }, resource: { group: '', version: 'v1', resource: 'secrets' },
    name: 'tls-web', namespace: 'default', operation: 'CREATE', dryRun: false,
    userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
  },
};
const outcome = (...expressions: string[]) => evaluateMatchConditions(expressions.map((expression, i) => ({ name: `c${i}`, expression })), variables);

const rows: Array<[string, boolean]> = [
  ["object.metadata.name == 'tls-web'", true],
  ["object.metadata.name != 'tls-web'", false],
  ["has(object.metadata.labels) && 'team' in object.metadata.labels", true],
  ['has(object.metadata.finalizers)', false],
  ["!('example.com/skip' in object.metadata.annotations)", false],
  ['object.spec.replicas > 2 && object.spec.replicas < 4', true],
  // JSON whole numbers are ints, as kube decodes them: int arithmetic works
  ['object.spec.replicas + 1 == 4', true],
  ['object.spec.ratio < 1.0', true],
  ["size(object.spec.hosts) == 2 && object.spec.hosts.all(h, h.endsWith('.example.com'))", true],
  ["object.spec.hosts.exists(h, h.startsWith('b.'))", true],
  ["object.metadata.name.contains('web') && object.metadata.name.matches('^tls-[a-z]+$')", true],
  ["request.operation in ['CREATE', 'UPDATE']", true],
  ["request.userInfo.username == 'system:kube-scheduler'", false],
  ["'system:masters' in request.userInfo.groups", true],
  ['oldObject == null', true],
  ["request.namespace == 'default' ? object.spec.replicas == 3 : false", true],
  ["request.resource.resource == 'secrets' && request.kind.kind == 'Secret'", true],
];

for (const [expression, expected] of rows) {
  test(`matchConditions: ${expression} is ${expected}`, () => {
    assert.deepEqual(outcome(expression), expected ? { outcome: 'call' } : { outcome: 'skip', condition: 'c0' });
  });
}

test('matchConditions: a false condition skips the webhook whatever the others did; errors alone go to the failurePolicy', () => {
  assert.deepEqual(outcome('true', 'object.metadata.nope == 1', 'false'), { outcome: 'skip', condition: 'c2' });
  const one = outcome('true', 'object.metadata.nope == 1');
  assert.equal(one.outcome, 'error');
  assert.match((one as { message: string }).message, /^expression 'object\.metadata\.nope == 1' resulted in error: .*nope/);
  const two = outcome('object.metadata.nope == 1', "object.metadata.name == 'tls-web' ? object.spec.none : true");
  assert.equal(two.outcome, 'error');
  assert.match((two as { message: string }).message, /^\[expression .*, expression .*\]$/);
});

test('matchConditions: a dynamic result that is not a bool is an evaluation error', () => {
  const r = outcome('object.metadata.name');
  assert.deepEqual(r, { outcome: 'error', message: "expression 'object.metadata.name' resulted in error: must evaluate to bool" });
});

test('matchConditions: compile errors in kube\'s wording, with the position', () => {
  const error = (expression: string) => {
    try {
      compileCondition(expression);
    } catch (e) {
      assert.ok(e instanceof CompileError);
      return e.message;
    }
    assert.fail(`${expression} compiled`);
  };
  assert.equal(error('1 +'), 'compilation failed: ERROR: <input>:1:4: Unexpected token: EOF');
  assert.match(error("object.metadata.name ==\n  'a' + 1"), /^compilation failed: ERROR: <input>:2:\d+: /);
  assert.equal(error("'a' + 'b'"), 'must evaluate to bool');
  assert.match(error('unknownVariable == 1'), /^compilation failed: ERROR: <input>:1:1: Unknown variable: unknownVariable/);
  assert.equal(error("authorizer.group('').resource('secrets').check('get').allowed()"), 'compilation failed: authorizer is not supported by the embedded server (it has no RBAC to ask)');
  // a stored configuration compiled before: its error is an evaluation error, not a crash
  assert.deepEqual(evaluateMatchConditions([{ name: 'x', expression: '1 +' }], variables),
    { outcome: 'error', message: "expression '1 +' resulted in error: compilation failed: ERROR: <input>:1:4: Unexpected token: EOF" });
});

test('matchConditions: an expression too deep or too large is refused on write', () => {
  assert.throws(() => compileCondition(`${'('.repeat(200)}true${')'.repeat(200)}`), CompileError);
  assert.throws(() => compileCondition(Array.from({ length: 6000 }, () => 'true').join(' && ')), CompileError);
});

test('matchConditions: a runaway expression (backtracking regex, nested loops) is stopped at the time budget and is an error', () => {
  const heavy = {
    ...variables,
    object: { ...object, spec: { evil: `${'a'.repeat(40)}!`, list: Array.from({ length: 2000 }, (_, i) => i) } },
  };
  for (const expression of [
    "object.spec.evil.matches('^(a+)+$')",
    'object.spec.list.all(x, object.spec.list.all(y, object.spec.list.all(z, true)))',
  ]) {
    const started = performance.now();
    const r = evaluateMatchConditions([{ name: 'slow', expression }, { name: 'after', expression: 'true' }], heavy);
    const took = performance.now() - started;
    assert.equal(r.outcome, 'error', expression);
    assert.match((r as { message: string }).message, new RegExp(`exceeded the time budget of ${evaluationBudgetMs}ms`));
    // generous: the point is that it stops, not how exactly
    assert.ok(took < evaluationBudgetMs * 20, `${expression} took ${took}ms`);
  }
});

test('matchConditions: conditions that are not objects or strings are errors, not crashes', () => {
  const r = evaluateMatchConditions([null, 'x', { name: 1, expression: 2 }], variables);
  assert.equal(r.outcome, 'error');
});
