export function privateCompileCacheDir(o?: { env?: NodeJS.ProcessEnv; uid?: number; home?: string }): string | undefined;
