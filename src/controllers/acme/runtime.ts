// What the ACME controllers of one controller set share: the account client registry and the
// embedded HTTP-01 responder (started on first use, so servers without HTTP-01 never bind :80).
import type { ControllerContext } from '../context.ts';
import { startHTTP01Server, type HTTP01Server } from './solvers/http01.ts';
import { AcmeClientRegistry } from './account/registry.ts';
import type { AcmeClientOptions } from '../../acme/client.ts';

export interface AcmeRuntime {
  registry: AcmeClientRegistry;
  http01(): Promise<HTTP01Server>;
  close(): Promise<void>;
}

/** Splits cert-manager's "--acme-http01-listen" value: ":80", "127.0.0.1:8089", "[::1]:80". */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(listen);
  if (!m) throw new Error(`invalid listen address "${listen}": want HOST:PORT or :PORT`);
  return { host: m[1] ?? m[2] ?? '', port: Number(m[3]) };
}

export function createAcmeRuntime(ctx: ControllerContext, clientOptions?: Partial<AcmeClientOptions>): AcmeRuntime {
  const registry = new AcmeClientRegistry({ metrics: ctx.metrics, clientOptions });
  let server: Promise<HTTP01Server> | undefined;
  return {
    registry,
    http01() {
      if (!server) {
        const { host, port } = parseListen(ctx.options.acmeHTTP01Listen ?? ':80');
        server = startHTTP01Server({ host: host || '::', port });
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
