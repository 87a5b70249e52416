// Preloaded into a child process (NODE_OPTIONS=--import, see fetchRedirectEnv) by end-to-end tests
// that run `certsmith controller` as its own process: the fetch calls it aims at a DNS vendor's real
// API (https://api.cloudflare.com/client/v4, Azure's IMDS, ...) go to that vendor's loopback
// stand-in (test/rig/*-api.ts) instead, as if DNS pointed the vendor's name there. In process, the
// tests pass the loopback URLs in ControllerOptions.dns01ProviderAPIs; a separate process takes no
// such option (it is never a flag), so the redirect happens below the product's code, which keeps
// using its built-in endpoints, paths and credentials unchanged.
// Only fetch is redirected: the AWS SDK (node:https) takes AWS_ENDPOINT_URL_ROUTE_53 and
// AWS_ENDPOINT_URL_STS, its own documented settings, in the child's environment.
import { pathToFileURL } from 'node:url';

const VAR = 'CERTSMITH_RIG_FETCH_REDIRECTS';

/** The environment that makes a child node process load this file with these redirects (URL prefix → loopback base). */
export function fetchRedirectEnv(redirects: Record<string, string>): NodeJS.ProcessEnv {
  const preload = `--import tsx --import ${pathToFileURL(import.meta.filename).href}`;
  return {
    NODE_OPTIONS: [process.env.NODE_OPTIONS, preload].filter(Boolean).join(' '),
    [VAR]: JSON.stringify(redirects),
  };
}

/** url with its `from` prefix replaced by `to`, or undefined when it does not start with `from` at a boundary. */
function redirected(url: string, from: string, to: string): string | undefined {
  if (!url.startsWith(from)) return undefined;
  const rest = url.slice(from.length);
  return rest === '' || /^[/?#]/.test(rest) ? `${to.replace(/\/$/, '')}${rest}` : undefined;
}

const configured = process.env[VAR];
if (configured) {
  const redirects = Object.entries(JSON.parse(configured) as Record<string, string>);
  const realFetch = globalThis.fetch;
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    for (const [from, to] of redirects) {
      const target = redirected(url, from, to);
      if (target) return realFetch(input instanceof Request ? new Request(target, input) : target, init);
    }
    return realFetch(input, init);
  };
}
