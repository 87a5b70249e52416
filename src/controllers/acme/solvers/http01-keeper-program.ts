// The HTTP-01 keeper's program: a small process that serves /.well-known/acme-challenge/<token>
// for `certsmith server` and outlives it (issue 20; see http01-keeper.ts for the decision). It is
// plain JavaScript importing nothing of ours, run with `node --input-type=module -e`, so that it
// starts in milliseconds and works the same from the sources (tsx) and from the compiled dist/,
// which carries no non-TypeScript files.
//
// argv: host port controlSocketPath graceMs
// Control protocol, one JSON object per line, acknowledged with {"id"} when it carries an id:
// {"op":"present","token","keyAuth","host"?} | {"op":"cleanup","token"} | {"op":"release"} (exit now if no
// token is served) | {"op":"exit"}. The keeper exits graceMs after its last controller
// disconnected (nobody adopted it), at once on "exit", and never serves without a certsmith for
// longer than that. What the web listener answers is http01-listener.ts's challengeServer, run
// from its source text.
import { challengeServer, LISTENER_GUARD } from './http01-listener.ts';

export const KEEPER_SOURCE = `import http from 'node:http';
import net from 'node:net';
import fs from 'node:fs';
import process from 'node:process';
import { Buffer } from 'node:buffer';
import { setTimeout, clearTimeout } from 'node:timers';

const [host, portArg, socketPath, graceArg] = process.argv.slice(1);
const grace = Number(graceArg) || 60_000;
const tokens = new Map();
const web = (${challengeServer.toString()})(http, tokens, ${JSON.stringify(LISTENER_GUARD)});

let controllers = 0;
let timer;
function armGrace() {
  clearTimeout(timer);
  if (controllers === 0) timer = setTimeout(shutdown, grace);
}
function shutdown() {
  web.close();
  web.closeAllConnections();
  control.close();
  try {
    fs.unlinkSync(socketPath);
  } catch {}
  process.exit(0);
}

const control = net.createServer((sock) => {
  controllers++;
  clearTimeout(timer);
  let buf = '';
  sock.setEncoding('utf8');
  sock.on('data', (d) => {
    buf += d;
    for (let i = buf.indexOf('\\n'); i >= 0; i = buf.indexOf('\\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      if (msg.op === 'present' && typeof msg.token === 'string' && typeof msg.keyAuth === 'string') {
        tokens.set(msg.token, typeof msg.host === 'string' ? { keyAuth: msg.keyAuth, host: msg.host } : { keyAuth: msg.keyAuth });
      }
      else if (msg.op === 'cleanup' && typeof msg.token === 'string') tokens.delete(msg.token);
      else if (msg.op === 'exit') shutdown();
      else if (msg.op === 'release' && tokens.size === 0) {
        if (msg.id !== undefined) sock.write(\`\${JSON.stringify({ id: msg.id })}\\n\`);
        shutdown();
      }
      if (msg.id !== undefined) sock.write(\`\${JSON.stringify({ id: msg.id })}\\n\`);
    }
  });
  const gone = () => {
    controllers--;
    armGrace();
  };
  sock.once('close', gone);
  sock.on('error', () => {});
});

web.once('error', (e) => {
  process.stdout.write(\`\${JSON.stringify({ error: e.message })}\\n\`);
  process.exit(1);
});
web.listen(Number(portArg), host || undefined, () => {
  try {
    fs.unlinkSync(socketPath);
  } catch {}
  // only this user may tell the keeper what to serve: the socket is made 0600, not chmod-ed after
  process.umask(0o077);
  control.listen(socketPath, () => {
    fs.chmodSync(socketPath, 0o600);
    process.stdout.write(\`\${JSON.stringify({ port: web.address().port })}\\n\`);
    armGrace();
  });
});
`;
