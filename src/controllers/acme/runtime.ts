// What the ACME controllers of one controller set share: the account client registry and the
// embedded HTTP-01 responder (started on first use, so servers without HTTP-01 never bind :80).
import type { ControllerContext } from '../context.ts';
import { startHTTP01Server, type HTTP01Server } from './solvers/http01.ts';
import { startHTTP01Keeper } from './solvers/http01-keeper.ts';
import { AcmeClientRegistry } from './account/registry.ts';
import { BoundedCache } from '../../runtime/bounded-cache.ts';
import type { AcmeClientOptions } from '../../acme/client.ts';

export interface AcmeRuntime {
  registry: AcmeClientRegistry;
  http01(): Promise<HTTP01Server>;
  /**
   * Called each time the HTTP-01 responder serves without what this process should be serving:
   * when it is started or taken over (a fresh one, the in-process fallback, or a keeper left by a
   * process that died), and when a lost keeper connection was replaced. The listener gives back
   * the tokens of the Challenges that need them (issue 20).
   */
  onHTTP01Serving(listener: (server: HTTP01Server) => void | Promise<void>): void;
  /**
   * The last moment this process's HTTP-01 responder connection was lost or replaced, on the
   * controllers' clock (undefined: never; in memory, since a restart already counts as another
   * process having accepted). A Challenge accepted before it may have been validated while its
   * token was not served.
   */
  http01LostAt(): Date | undefined;
  close(): Promise<void>;
}

/** Splits cert-manager's "--acme-http01-listen" value: ":80", "127.0.0.1:8089", "[::1]:80". */
export function parseHTTP01Listen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(listen);
  if (!m) throw new Error(`invalid listen address "${listen}": want HOST:PORT or :PORT`);
  return { host: m[1] ?? m[2] ?? '', port: Number(m[3]) };
}

/**
 * The keeper process (solvers/http01-keeper.ts: the token outlives a certsmith that dies while the
 * CA validates), else the in-process responder. CERTSMITH_HTTP01_KEEPER=0 keeps it in process.
 */
async function startResponder(ctx: ControllerContext, host: string, port: number, events: { onLost(): void; onReplaced(): void }): Promise<HTTP01Server> {
  if (port !== 0 && process.env.CERTSMITH_HTTP01_KEEPER !== '0' && process.platform !== 'win32') {
    try {
      return await startHTTP01Keeper({ host, port, ...events });
    } catch (e) {
      // A port taken by something else fails the same way in process; anything else falls back.
      if (/EADDRINUSE|EACCES/.test((e as Error).message)) throw e;
      ctx.logger.warn?.({ err: (e as Error).message }, 'HTTP-01 keeper unavailable; serving tokens in process (a restart during validation retries the order)');
    }
  }
  return startHTTP01Server({ host, port });
}

export function createAcmeRuntime(ctx: ControllerContext, clientOptions?: Partial<AcmeClientOptions>): AcmeRuntime {
  const registry = new AcmeClientRegistry({ metrics: ctx.metrics, clientOptions });
  let server: Promise<HTTP01Server> | undefined;
  const listeners: ((server: HTTP01Server) => void | Promise<void>)[] = [];
  let lostAt: Date | undefined;
  const serving = (s: HTTP01Server) => {
    for (const l of listeners) {
      Promise.resolve().then(() => l(s)).catch((e: Error) => ctx.logger.warn?.({ err: e.message }, 'giving the HTTP-01 responder its tokens again failed'));
    }
  };
  /**
   * Tokens this process cleaned up: one is never served again. A takeover's "serve every token
   * again" reads the cache, which can still show a Challenge another worker has just cleaned up;
   * its late present would put the token back into the keeper for good.
   */
  const cleaned = new BoundedCache<string, true>(10_000);
  const neverAgain = (s: HTTP01Server): HTTP01Server => ({
    port: s.port,
    present: (token, keyAuth, host) => (cleaned.get(token) ? undefined : s.present(token, keyAuth, host)),
    cleanUp: async (token) => {
      await s.cleanUp(token);
      cleaned.set(token, true);
    },
    close: () => s.close(),
  });
  return {
    registry,
    http01() {
      if (!server) {
        const { host, port } = parseHTTP01Listen(ctx.options.acmeHTTP01Listen ?? ':80');
        const started: Promise<HTTP01Server> = startResponder(ctx, host || '::', port, {
          onLost: () => {
            lostAt = ctx.clock.now();
            ctx.logger.warn?.({}, 'HTTP-01 keeper connection lost; replacing it');
          },
          onReplaced: () => {
            lostAt = ctx.clock.now();
            ctx.logger.info?.({}, 'HTTP-01 keeper connection replaced; serving every token again');
            void guarded.then(serving);
          },
        });
        const guarded = started.then(neverAgain);
        server = guarded;
        // A failed bind is reported to this challenge and tried again by the next one.
        guarded.then(serving, () => {
          if (server === guarded) server = undefined;
        });
      }
      return server;
    },
    onHTTP01Serving(listener) {
      listeners.push(listener);
    },
    http01LostAt: () => lostAt,
    async close() {
      registry.close();
      const s = await server?.catch(() => undefined);
      server = undefined;
      await s?.close();
    },
  };
}
