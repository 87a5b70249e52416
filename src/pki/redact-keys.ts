// No private key, whole or in part, in what certsmith passes on from a program it ran: a deploy
// hook's output goes into its Event (and from there into a DeployHookFailed notification), and that
// output is the tail of what the hook printed, so a key block can arrive with its BEGIN line cut
// off (a 2048-bit RSA key is longer than the tail kept) or, cut at the other end, with no END line.
const WHOLE_OR_HEAD = /-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----[\s\S]*?(-----END \1-----|$)/g;
/** the base64 lines (the first one possibly cut) that end in an END line whose BEGIN is gone */
const TAIL = /[A-Za-z0-9+/=]*(?:\r?\n[A-Za-z0-9+/=]+)*\r?\n?-----END [A-Z0-9 ]*PRIVATE KEY-----/g;

export const REDACTED_KEY = '[private key redacted]';

export function redactKeyMaterial(text: string): string {
  return text.replace(WHOLE_OR_HEAD, REDACTED_KEY).replace(TAIL, REDACTED_KEY);
}
