// The four prom-client classes certsmith uses, each from its own file: prom-client's index also
// loads its push gateway, cluster aggregator and default metrics, and through them
// @opentelemetry/api, about 90 files that every server and controller start paid for (~90 ms of
// CPU) and none uses. They are the same modules the index loads, so a Registry made from
// 'prom-client' still works.
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const requirePromClient = createRequire(import.meta.url);
export const Counter = requirePromClient('prom-client/lib/counter') as typeof PromClient.Counter;
export const Gauge = requirePromClient('prom-client/lib/gauge') as typeof PromClient.Gauge;
export const Summary = requirePromClient('prom-client/lib/summary') as typeof PromClient.Summary;
export const Registry = requirePromClient('prom-client/lib/registry') as typeof PromClient.Registry;
export type Counter<T extends string> = PromClient.Counter<T>;
export type Summary<T extends string> = PromClient.Summary<T>;
export type Registry = PromClient.Registry;
