// An error the CLI reports as one line and a non-zero exit, never as a stack trace.
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}
