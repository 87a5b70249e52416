// The Events a deploy hook's run leaves on its Certificate: the files controller writes them, the
// notifications controller reads the latest outcome from them (DeployHookFailed fires and resolves
// on it). One wording for both, so the reader's parse cannot drift from the writer's text.

export const DEPLOY_HOOK_SUCCEEDED = 'DeployHookSucceeded';
export const DEPLOY_HOOK_FAILED = 'DeployHookFailed';
export const DEPLOY_HOOK_REASONS: ReadonlySet<string> = new Set([DEPLOY_HOOK_SUCCEEDED, DEPLOY_HOOK_FAILED]);

const PREFIX = 'Deploy hook for revision ';

/** "Deploy hook for revision N <status>[ (attempt n, retrying in d)][: output]" */
export function deployHookMessage(revision: number | undefined, status: string, rest = ''): string {
  return `${PREFIX}${revision ?? '?'} ${status}${rest}`;
}

/** The revision a deploy-hook Event is about; 0 when it names none. */
export function deployHookRevision(message: string | undefined): number {
  if (!message?.startsWith(PREFIX)) return 0;
  return Number(/^\d+/.exec(message.slice(PREFIX.length))?.[0] ?? 0);
}
