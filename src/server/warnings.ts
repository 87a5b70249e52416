// Warnings for the client of one API request, as kube-apiserver sends them: `Warning: 299 - "text"`
// headers (kubectl prints each as `Warning: text`), deduplicated, and cut short when they grow
// past 4 KiB of text, as k8s.io/apiserver's warning recorder does. A request's recorder is found
// through the async context, so whatever runs on its behalf (field validation, admission
// webhooks) can warn without the response being threaded through the store.
import { AsyncLocalStorage } from 'node:async_hooks';
import type http from 'node:http';

/** kube's limits: past this much text in all, each warning is cut to `truncateItemChars` */
const truncateAtTotalChars = 4 * 1024;
const truncateItemChars = 256;

/** A quoted string as Go's %q writes it for a header: only printable ASCII goes out as is (a field name can be any Unicode). */
export function headerQuoted(text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const codePoints = (text: string) => Array.from(text);

class WarningRecorder {
  private readonly recorded = new Set<string>();
  private readonly ordered: string[] = [];
  private written = 0;
  private truncating = false;

  constructor(private readonly res: http.ServerResponse) {}

  private write(text: string): boolean {
    if (this.res.headersSent) return false;
    this.res.appendHeader('Warning', `299 - ${headerQuoted(text)}`);
    return true;
  }

  /** false when the response has gone out already: the warning is the caller's to log */
  add(text: string): boolean {
    if (this.res.headersSent) return false;
    if (!text || (this.truncating && this.written >= truncateAtTotalChars)) return true;
    if (this.recorded.has(text)) return true;
    this.recorded.add(text);
    this.ordered.push(text);
    let chars = codePoints(text);
    if (this.truncating && chars.length > truncateItemChars) chars = chars.slice(0, truncateItemChars);
    if (this.written + chars.length <= truncateAtTotalChars || this.truncating) {
      if (this.write(chars.join(''))) this.written += chars.length;
      return true;
    }
    // over the limit: from now on every warning, those sent already included, is cut short
    this.truncating = true;
    this.written = 0;
    this.res.removeHeader('Warning');
    for (const w of this.ordered) {
      const cut = codePoints(w).slice(0, truncateItemChars);
      if (this.write(cut.join(''))) this.written += cut.length;
    }
    return true;
  }
}

const current = new AsyncLocalStorage<WarningRecorder>();

/** Runs one request's handling with a recorder that adds its warnings to `res` as Warning headers. */
export function withWarningRecorder<T>(res: http.ServerResponse, handle: () => T): T {
  return current.run(new WarningRecorder(res), handle);
}

/**
 * Warns the client of the request being handled; false when there is none (an in-process write,
 * or work that merely started inside a request whose response has gone).
 */
export function addWarning(text: string): boolean {
  return current.getStore()?.add(text) ?? false;
}
