export { freePort } from './ports.ts';
export { startPebble, startChallTestSrv, type Pebble, type PebbleOptions, type ChallTestSrv } from './pebble.ts';
export { startNamed, type Named, type NamedOptions } from './named.ts';
