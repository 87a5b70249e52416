// JSON logs through pino. Objects that controllers log (Secrets, CSRs, keys) can carry
// private key material, so redaction is part of the factory rather than left to callers.
import { pino, type DestinationStream, type Level, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;
export type LogLevel = Level | 'silent';

/**
 * Paths whose values are replaced by "[REDACTED]" wherever a logged object carries them.
 * Secret payloads live under `data`/`stringData`; keys under `privateKey`/`tls.key`. A bare
 * `key` is not redacted: it is how work-queue keys (namespace/name) are logged.
 * fast-redact matches one level per `*`, hence the explicit depths.
 */
export const redactedPaths: string[] = [
  'data', 'stringData', 'privateKey', 'privateKeyPEM', 'keyPEM', '"tls.key"',
  '*.data', '*.stringData', '*.privateKey', '*.privateKeyPEM', '*.keyPEM', '*["tls.key"]',
  '*.*.data', '*.*.stringData', '*.*.privateKey', '*.*["tls.key"]',
  '*.tls.key', 'tls.key',
];

export interface CreateLoggerOptions {
  name?: string;
  /** default: env CERTSMITH_LOG_LEVEL, else 'silent' under `node --test`, else 'info' */
  level?: LogLevel;
  /** where lines go (default stdout); tests pass a stream to read them back */
  destination?: DestinationStream;
}

const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** CERTSMITH_LOG_LEVEL, checked: pino's own refusal ("default level:verbose must be included in custom levels") named neither the variable nor the levels */
export function logLevelFromEnv(): LogLevel | undefined {
  const fromEnv = process.env.CERTSMITH_LOG_LEVEL;
  if (!fromEnv) return undefined;
  if (!(LOG_LEVELS as readonly string[]).includes(fromEnv)) {
    throw new Error(`CERTSMITH_LOG_LEVEL "${fromEnv}" is not a log level: use one of ${LOG_LEVELS.join(', ')}`);
  }
  return fromEnv as LogLevel;
}

function defaultLevel(): LogLevel {
  const fromEnv = logLevelFromEnv();
  if (fromEnv) return fromEnv;
  // node's test runner marks the processes it spawns; test output stays readable that way.
  return process.env.NODE_TEST_CONTEXT ? 'silent' : 'info';
}

export function createLogger(opts: CreateLoggerOptions = {}): Logger {
  const options = {
    name: opts.name ?? 'certsmith',
    level: opts.level ?? defaultLevel(),
    redact: { paths: redactedPaths, censor: '[REDACTED]' },
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/** The logger a controller uses: every line carries the controller's name. */
export function controllerLogger(parent: Logger, controller: string): Logger {
  return parent.child({ controller });
}

/** A logger that drops everything, for components constructed without one. */
export const silentLogger: Logger = pino({ level: 'silent' });
