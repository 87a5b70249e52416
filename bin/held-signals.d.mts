export function commandNamed(args: readonly string[]): string | undefined;
export function holdSignals(args: readonly string[], proc?: NodeJS.Process): boolean;
export function releaseHeldSignal(proc?: NodeJS.Process): NodeJS.Signals | undefined;
