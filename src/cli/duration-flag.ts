// A duration flag as every command reads one: Go's units (parseDuration), and a value that is not
// one refused naming the flag.
import { parseDuration } from '../api/duration.ts';
import { CliError } from './cli-error.ts';

export function durationFlag(value: string, flag: string): number;
export function durationFlag(value: string | undefined, flag: string): number | undefined;
export function durationFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parseDuration(value);
  } catch (e) {
    throw new CliError(`${flag}: ${(e as Error).message}`);
  }
}
