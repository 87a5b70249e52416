// Debian's nginx as the user's own web server for webroot HTTP-01: its own prefix, config, pid,
// logs and temp paths in a temp dir, on a 127.0.0.1 port the test picks (Pebble validates there).
// As root it drops its workers to nobody, as a packaged nginx drops to www-data, so the webroot's
// modes are tested for real: the folders and files certsmith makes must be readable by another account.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { makeTempDir, removeTempDir, startProcess, waitUntilReady } from './processes.ts';

export interface Nginx {
  port: number;
  /** the document root; hand it to --acme-http01-webroot */
  webroot: string;
  /** access log lines: "HOST STATUS URI" */
  accessLog(): string[];
  stop(): Promise<void>;
}

function nginxBinary(): string {
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (fs.existsSync(p)) return p;
  return 'nginx';
}

export async function startNginx(opts: {
  port: number;
  /** server names answered 404 for everything (validation fails there) */
  refuse?: string[];
  /** the README's other way: challenges proxied to certsmith's listener on this 127.0.0.1 port instead of served from the webroot */
  proxyChallengesTo?: number;
}): Promise<Nginx> {
  const dir = await makeTempDir('nginx');
  // mkdtemp makes 0700: the workers (nobody) must traverse down to the webroot
  await fsp.chmod(dir, 0o755);
  const webroot = path.join(dir, 'www');
  await fsp.mkdir(webroot, { mode: 0o755 });
  await fsp.writeFile(path.join(webroot, 'index.html'), 'site\n', { mode: 0o644 });
  const refused = (opts.refuse ?? []).map((name) => `
    server {
      listen 127.0.0.1:${opts.port};
      server_name ${name};
      location / { return 404; }
    }`).join('\n');
  const conf = `
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
worker_processes 1;
events { worker_connections 64; }
http {
  log_format rig '$host $status $request_uri';
  access_log ${dir}/access.log rig;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${opts.port} default_server;
    root ${webroot};
    # what the README tells users to add
    location ^~ /.well-known/acme-challenge/ {
      ${opts.proxyChallengesTo ? `proxy_pass http://127.0.0.1:${opts.proxyChallengesTo};
      proxy_set_header Host $host;` : `default_type text/plain;
      try_files $uri =404;`}
    }
  }
  ${refused}
}
`;
  const confPath = path.join(dir, 'nginx.conf');
  await fsp.writeFile(confPath, conf);
  const proc = startProcess(nginxBinary(), ['-p', dir, '-e', `${dir}/error.log`, '-c', confPath], { logPath: path.join(dir, 'stdout.log'), cwd: dir });
  await waitUntilReady(proc, 'nginx', () => new Promise<boolean>((resolve) => {
    http.get({ host: '127.0.0.1', port: opts.port, path: '/', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    }).on('error', () => resolve(false));
  }));
  return {
    port: opts.port,
    webroot,
    accessLog: () => (fs.existsSync(`${dir}/access.log`) ? fs.readFileSync(`${dir}/access.log`, 'utf8').split('\n').filter(Boolean) : []),
    async stop() {
      await proc.stop();
      await removeTempDir(dir);
    },
  };
}
