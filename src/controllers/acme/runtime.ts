// What the ACME controllers of one controller set share: the account client registry and the
// embedded HTTP-01 responder (started on first use, so servers without HTTP-01 never bind :80).
import type { ControllerContext } from '../context.ts';
import { startHTTP01Server, type HTTP01Server } from './solvers/http01.ts';
import { startHTTP01Keeper } from './solvers/http01-keeper.ts';
import { AcmeClientRegistry } from './account/registry.ts';
import type { AcmeClientOptions } from '../../acme/client.ts';

export interface AcmeRuntime {
  registry: AcmeClientRegistry;
  http01(): Promise<HTTP01Server>;
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
async function startResponder(ctx: ControllerContext, host: string, port: number): Promise<HTTP01Server> {
  if (port !== 0 && process.env.CERTSMITH_HTTP01_KEEPER !== '0' && process.platform !== 'win32') {
    try {
      return await startHTTP01Keeper({ host, port });
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
  return {
    registry,
    http01() {
      if (!server) {
        const { host, port } = parseHTTP01Listen(ctx.options.acmeHTTP01Listen ?? ':80');
        server = startResponder(ctx, host || '::', port);
        // A failed bind is reported to this challenge and tried again by the next one.
        server.catch(() => (server = undefined));
      }
      return server;
    },
    async close() {
      registry.close();
      const s = await server?.catch(() => undefined);
      server = undefined;
      await s?.close();
    },
  };
}
