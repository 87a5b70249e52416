// GET ?watch=1: a chunked stream of watch events, with backpressure (the store pauses a
// watcher whose client stopped reading), a bounded backlog for stores that cannot pause, and
// an end after timeoutSeconds.
import type http from 'node:http';
import { WatchTooSlowError, tooLargeResourceVersion, type Watch, type WatchEvent } from '../../../store/store.ts';
import { parseFieldSelectorFor, parseLabelSelector } from '../../../store/selectors.ts';
import { apiVersionOf } from '../../../api/resources.ts';
import { partialObjectMetadata, tableFor } from '../../table.ts';
import type { ApiContext, ResourceCall } from '../context.ts';
import { intParam, requestedRevision, truthy, watchListOptions } from '../query.ts';
import { errorStatus, statusBody } from '../responses.ts';

/**
 * A watch never stays open longer than this, whatever timeoutSeconds asks: kube-apiserver's
 * default is 30-60 minutes, and setTimeout fires at once past 2^31 ms (which made clients
 * reconnect in a tight loop).
 */
const maxWatchTimeoutSeconds = 3600;
/**
 * Serialized events a watch holds for a client that stopped reading, when the store cannot
 * pause (the SQLite store pauses, so this is a backstop): past it the watch is closed.
 */
const maxWatchBufferBytes = 8 * 1024 * 1024;
/** how long a closed watch's client gets to take what was already written before its connection is cut */
const watchLingerMs = 10_000;
/** kube's watch cache bookmarks a watcher about once a minute, and last 2 s before its timeout */
const defaultBookmarkIntervalMs = 60_000;
const bookmarkBeforeTimeoutMs = 2_000;

/** The response side of one watch: writes lines, holds back while the socket is full, ends once. */
class WatchStream {
  done = false;
  /** assigned after store.watch returns; the callbacks may run before that */
  watch?: Watch;
  /** the socket's buffer is full: the store's watcher is paused until 'drain' */
  waiting = false;
  /** events a store that cannot pause delivered meanwhile */
  private readonly overflow: string[] = [];
  private overflowBytes = 0;
  private readonly timer: NodeJS.Timeout;
  private bookmarkTimer?: NodeJS.Timeout;
  private readonly deadline: number;

  constructor(private readonly res: http.ServerResponse, private readonly openWatches: Set<() => void>, timeoutSeconds: number) {
    this.timer = setTimeout(this.finish, timeoutSeconds * 1000);
    this.deadline = Date.now() + timeoutSeconds * 1000;
    openWatches.add(this.finish);
    res.on('close', this.finish);
    res.on('drain', this.drained);
  }

  readonly finish = () => {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    clearTimeout(this.bookmarkTimer);
    this.openWatches.delete(this.finish);
    this.watch?.stop();
    this.overflow.length = 0;
    const res = this.res;
    res.end();
    // a client that never reads would hold what was written (and its socket) forever
    if (!res.writableFinished) {
      const linger = setTimeout(() => res.destroy(), watchLingerMs);
      linger.unref();
      res.once('finish', () => clearTimeout(linger));
      res.once('close', () => clearTimeout(linger));
    }
  };

  private readonly drained = () => {
    if (this.done) return;
    while (this.overflow.length) {
      const text = this.overflow.shift()!;
      this.overflowBytes -= text.length;
      if (!this.res.write(text)) return;
    }
    this.waiting = false;
    this.watch?.resume?.();
  };

  /**
   * Bookmarks every intervalMs and one last shortly before the timeout, as kube's watch cache
   * sends them (nextBookmarkTime), each with the revision the watcher has seen everything up to:
   * a watcher that sees no change can still resume from a revision that is not compacted away.
   * None while events are still on their way (the store cannot vouch for a revision then).
   */
  bookmarkEvery(intervalMs: number, bookmark: () => unknown) {
    const next = () => {
      const untilLast = this.deadline - bookmarkBeforeTimeoutMs - Date.now();
      if (this.done || untilLast <= 0) return;
      this.bookmarkTimer = setTimeout(() => {
        const line = this.waiting ? undefined : bookmark();
        if (line) this.write(line);
        next();
      }, Math.min(intervalMs, untilLast));
    };
    next();
  }

  /** false: stop sending until 'drain' (the store pauses this watcher) */
  write(line: unknown): boolean {
    if (this.done) return false;
    const text = JSON.stringify(line) + '\n';
    if (this.waiting) {
      this.overflow.push(text);
      this.overflowBytes += text.length;
      // kube-apiserver closes a watcher that cannot keep up; the client re-lists
      if (this.overflowBytes > maxWatchBufferBytes) this.finish();
      return false;
    }
    if (this.res.write(text)) return true;
    this.waiting = true;
    return false;
  }
}

export async function watchObjects(ctx: ApiContext, call: ResourceCall) {
  const { route, q, res, table, metadataOnly } = call;
  const { type, namespace } = route;
  const defaultTimeout = ctx.defaultWatchTimeoutSeconds;
  const timeoutSeconds = Math.min(intParam(q, 'timeoutSeconds') || (defaultTimeout ?? 1800), Math.max(maxWatchTimeoutSeconds, defaultTimeout ?? 0));
  const sendInitialEvents = watchListOptions(q, true);
  const wantedRV = requestedRevision(q);
  if (wantedRV !== undefined) {
    // answered before the stream starts, as kube-apiserver does: a client must not wait on a revision that may never come
    const current = (await ctx.store.list(type, { namespace, limit: 1 })).resourceVersion;
    if (wantedRV > Number(current)) throw tooLargeResourceVersion(wantedRV, current);
  }
  // list options are checked before the stream starts, as kube-apiserver checks them: a selector
  // it cannot parse is a plain 400, as for a list, not a 200 whose only event is an ERROR
  parseLabelSelector(q.get('labelSelector') ?? undefined);
  parseFieldSelectorFor(type, q.get('fieldSelector') ?? undefined);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  const stream = new WatchStream(res, ctx.openWatches, timeoutSeconds);
  const rv = q.get('resourceVersion');
  const allowBookmarks = truthy(q.get('allowWatchBookmarks'));
  const watch = ctx.store.watch(type, {
    namespace, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined,
    // kube-apiserver starts a watch without a resourceVersion with the current state; with
    // sendInitialEvents, the current state (it is never older than the resourceVersion asked for)
    // and its end marked, or, when false, only the changes after the resourceVersion (or from now)
    resourceVersion: sendInitialEvents ? '0' : sendInitialEvents === false ? (rv && rv !== '0' ? rv : undefined) : rv ? rv : '0',
    ...(sendInitialEvents ? { initialEventsEnd: true } : {}),
    allowBookmarks,
    backpressure: true,
  }, (e: WatchEvent) => {
    const object = table && e.type !== 'BOOKMARK' ? tableFor(type, [e.object], { now: ctx.now() }) : metadataOnly ? partialObjectMetadata(e.object) : e.object;
    return stream.write({ type: e.type, object });
  }, (err) => {
    // a watcher closed for being too slow just ends, as kube-apiserver ends it: the client re-lists
    if (!(err instanceof WatchTooSlowError)) {
      const status = errorStatus(err, route) ?? statusBody(500, 'InternalError', 'the watch failed');
      stream.waiting = false;
      stream.write({ type: 'ERROR', object: status });
    }
    stream.finish();
  });
  stream.watch = watch;
  if (allowBookmarks && watch.bookmarkRevision) {
    const revision = watch.bookmarkRevision.bind(watch);
    stream.bookmarkEvery(ctx.watchBookmarkIntervalMs ?? defaultBookmarkIntervalMs, () => {
      const rev = revision();
      return rev === undefined ? undefined : { type: 'BOOKMARK', object: { apiVersion: apiVersionOf(type), kind: type.kind, metadata: { resourceVersion: rev } } };
    });
  }
  if (stream.done) watch.stop();
  // the headers go out only once the watch is registered: a client that waits for them
  // knows that every write it makes afterwards will be seen
  else res.flushHeaders();
}
