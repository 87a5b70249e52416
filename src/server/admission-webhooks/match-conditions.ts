// An admission webhook's matchConditions: CEL expressions kube-apiserver compiles when a
// configuration is written and evaluates before each call
// (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions). The variables are `object`,
// `oldObject` (null on CREATE, `object` null on DELETE) and `request` (the AdmissionRequest
// without its uid, objects and options, as kube's CreateAdmissionRequest builds it).
//
// Differences from kube-apiserver: `authorizer` is refused on write (the embedded server has no
// RBAC to ask); kube's CEL cost budget is a time budget here (evaluationBudgetMs for all of one
// webhook's conditions, enforced by V8 on any runaway expression, a backtracking regex included);
// a result that is not a bool is an evaluation error (kube would call the webhook).
import { createRequire } from 'node:module';
import vm from 'node:vm';
import type * as Cel from '@marcbachmann/cel-js';

/** kube's limit on matchConditions per webhook */
export const maxMatchConditions = 64;
/** how long all of one webhook's conditions may take to evaluate */
export const evaluationBudgetMs = 100;
/** compiled expressions kept; the set is bounded by what configurations hold, this bounds churn */
const maxCachedPrograms = 1024;

/** Why an expression does not compile, in kube's wording ("compilation failed: ...", "must evaluate to bool"). */
export class CompileError extends Error {}

let environment: Cel.Environment | undefined;

/**
 * The CEL environment, built on first use: the library (as heavy to load as yaml) stays out of
 * what `certsmith server` loads before it serves (issue 17). Loaded synchronously, since
 * configurations are validated synchronously; require() of an ES module needs Node.js 20.19.
 */
function celEnvironment(): Cel.Environment {
  if (environment) return environment;
  let cel: typeof Cel;
  try {
    cel = createRequire(import.meta.url)('@marcbachmann/cel-js') as typeof Cel;
  } catch (e) {
    throw new CompileError(`matchConditions cannot be compiled: the CEL library did not load (it needs Node.js 20.19 or newer): ${(e as Error).message}`);
  }
  environment = new cel.Environment({
    // cel-go (and so kube) accepts mixed list and map literals
    homogeneousAggregateLiterals: false,
    limits: { maxAstNodes: 10_000, maxDepth: 100 },
  })
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', 'dyn')
    // declared so that naming it gets its own refusal rather than "unknown variable"
    .registerVariable('authorizer', 'dyn');
  return environment;
}

interface CelErrorShape { summary?: string; range?: { start: number } }

/** cel-go's `ERROR: <input>:line:column: message` for an error at `offset` of `expression` */
function located(expression: string, e: unknown): string {
  const err = e as CelErrorShape & Error;
  const summary = typeof err.summary === 'string' ? err.summary : String(err.message).split('\n')[0];
  const offset = err.range?.start;
  if (typeof offset !== 'number') return `ERROR: <input>: ${summary}`;
  const before = expression.slice(0, offset).split('\n');
  return `ERROR: <input>:${before.length}:${before[before.length - 1].length + 1}: ${summary}`;
}

function namesAuthorizer(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(namesAuthorizer);
  if (!node || typeof node !== 'object') return false;
  const n = node as Cel.ASTNode;
  if (n.op === 'id') return n.args === 'authorizer';
  return namesAuthorizer(n.args);
}

function compile(expression: string): Cel.ParseResult {
  const env = celEnvironment();
  let program: Cel.ParseResult;
  try {
    program = env.parse(expression);
  } catch (e) {
    throw new CompileError(`compilation failed: ${located(expression, e)}`);
  }
  if (namesAuthorizer(program.ast)) {
    throw new CompileError('compilation failed: authorizer is not supported by the embedded server (it has no RBAC to ask)');
  }
  const checked = program.check();
  if (!checked.valid) throw new CompileError(`compilation failed: ${located(expression, checked.error)}`);
  if (checked.type !== 'bool' && checked.type !== 'dyn') throw new CompileError('must evaluate to bool');
  return program;
}

const programs = new Map<string, Cel.ParseResult | CompileError>();

/** The compiled expression (cached), or throws its CompileError. */
export function compileCondition(expression: string): Cel.ParseResult {
  let entry = programs.get(expression);
  if (!entry) {
    try {
      entry = compile(expression);
    } catch (e) {
      if (!(e instanceof CompileError)) throw e;
      entry = e;
    }
    if (programs.size >= maxCachedPrograms) programs.clear();
    programs.set(expression, entry);
  }
  if (entry instanceof CompileError) throw entry;
  return entry;
}

/** JSON as CEL sees it: whole numbers are ints (kube decodes them as int64), other values as they are. */
function celValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(celValue);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = celValue(x);
    return out;
  }
  return v;
}

// V8 stops a script that runs past its timeout wherever it is; the expression runs inside one
const sandbox = vm.createContext({ evaluateCondition: undefined as undefined | (() => unknown) });
const runner = new vm.Script('evaluateCondition()');

function withinBudget(fn: () => unknown, timeoutMs: number): unknown {
  sandbox.evaluateCondition = fn;
  try {
    return runner.runInContext(sandbox, { timeout: timeoutMs });
  } finally {
    sandbox.evaluateCondition = undefined;
  }
}

export interface ConditionVariables {
  object: unknown;
  oldObject: unknown;
  request: Record<string, unknown>;
}

/** call the webhook; skip it (a condition was false); or let the failurePolicy decide (an error, none false) */
export type MatchResult = { outcome: 'call' } | { outcome: 'skip'; condition: string } | { outcome: 'error'; message: string };

/** an error's first line (the library adds a caret excerpt below it) */
const firstLine = (e: unknown) => String((e as Error)?.message ?? e).split('\n')[0];

/**
 * kube's matcher: any condition false → the webhook is skipped (whatever the others did); else
 * any error → an error; else the webhook is called. Never throws for what a configuration holds.
 */
export function evaluateMatchConditions(conditions: unknown[], variables: ConditionVariables): MatchResult {
  const context = { object: celValue(variables.object ?? null), oldObject: celValue(variables.oldObject ?? null), request: celValue(variables.request) };
  // compiled outside the time budget: compiling is bounded by the parser's limits, and the first
  // one loads the library, which must never be cut off halfway
  const compiled = conditions.map((raw) => {
    const condition = raw && typeof raw === 'object' ? raw as { name?: unknown; expression?: unknown } : {};
    const expression = typeof condition.expression === 'string' ? condition.expression.trim() : '';
    let program: Cel.ParseResult | undefined;
    let compileError: string | undefined;
    try {
      program = compileCondition(expression);
    } catch (e) {
      if (!(e instanceof CompileError)) throw e;
      compileError = e.message;
    }
    return { name: typeof condition.name === 'string' ? condition.name : '', expression, program, compileError };
  });
  // filled as the conditions are evaluated, so what was decided before a timeout is kept
  const results: Array<{ value: unknown } | { error: string }> = [];
  let timedOut = false;
  try {
    // one run for all of them: the timeout's watchdog costs more than a typical evaluation
    withinBudget(() => {
      for (const { program, compileError } of compiled) {
        if (!program) {
          results.push({ error: compileError ?? '' });
          continue;
        }
        try {
          results.push({ value: program(context) });
        } catch (e) {
          results.push({ error: firstLine(e) });
        }
      }
    }, evaluationBudgetMs);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw e;
    timedOut = true;
    // a program stopped halfway may have left its own lazily built state half made: compile anew
    for (const { expression } of compiled) programs.delete(expression);
  }
  const errors: string[] = [];
  const failed = (expression: string, why: string) => errors.push(`expression '${expression}' resulted in error: ${why}`);
  for (const [i, { name, expression }] of compiled.entries()) {
    const r = results[i];
    if (!r) {
      if (timedOut) failed(expression, `evaluation exceeded the time budget of ${evaluationBudgetMs}ms`);
      break;
    }
    if ('error' in r) failed(expression, r.error);
    else if (r.value === false) return { outcome: 'skip', condition: name };
    else if (r.value !== true) failed(expression, 'must evaluate to bool');
  }
  // utilerrors.NewAggregate's text
  if (errors.length) return { outcome: 'error', message: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
  return { outcome: 'call' };
}
