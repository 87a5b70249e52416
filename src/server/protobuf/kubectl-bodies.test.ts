// Bodies the machine's kubectl really sends (issue 19), captured on their way to the embedded
// API server by a recording proxy in front of it: the codec must decode each to the object the
// command describes, and the server must store that object. kubectl's own generators make the
// bytes, so a layout that differs from upstream's shows up here, not only in round trips.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { Secret } from '../../api/meta.ts';
import { SecretType } from '../../api/resources.ts';
import { startTestApiServer } from '../testing/test-api-server.ts';
import { decodeObject, isProtobufMediaType } from './codec.ts';

const kubectlBin = process.env.KUBECTL ?? 'kubectl';
const { api, raw } = await startTestApiServer('kubectl-bodies');

interface Recorded { method: string; path: string; contentType: string; body: Buffer }
const recorded: Recorded[] = [];

/** forwards every request to the API server unchanged, keeping a copy of what kubectl sent */
const proxy = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    recorded.push({ method: req.method ?? '', path: req.url ?? '', contentType: String(req.headers['content-type'] ?? ''), body });
    const upstream = http.request(new URL(req.url ?? '/', api.url), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (e) => res.destroy(e));
    upstream.end(body);
  });
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const proxyURL = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
after(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

function kubectl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(kubectlBin, ['--kubeconfig=/dev/null', '--server', proxyURL, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

/** the protobuf body of the one POST kubectl sent to a path starting so */
function sentBody(pathPrefix: string): Record<string, unknown> {
  const posts = recorded.filter((r) => r.method === 'POST' && r.path.startsWith(pathPrefix));
  assert.equal(posts.length, 1, `one POST to ${pathPrefix}: ${recorded.map((r) => `${r.method} ${r.path}`).join(', ')}`);
  assert.ok(isProtobufMediaType(posts[0].contentType), `kubectl sent protobuf, not ${posts[0].contentType}`);
  return decodeObject(posts[0].body);
}

test('kubectl create secret generic: its protobuf body decodes to the Secret, which the server stores', async () => {
  await kubectl(['create', 'secret', 'generic', 'dns-credentials', '--from-literal=api-token=t0k3n', '--from-literal=zone=example.test']);
  assert.deepEqual(sentBody('/api/v1/namespaces/default/secrets'), {
    apiVersion: 'v1', kind: 'Secret', metadata: { name: 'dns-credentials' },
    data: { 'api-token': Buffer.from('t0k3n').toString('base64'), zone: Buffer.from('example.test').toString('base64') },
  });
  const stored = await raw.get<Secret>(SecretType, 'default', 'dns-credentials');
  assert.equal(stored?.type, 'Opaque');
  assert.equal(Buffer.from(stored?.data?.['api-token'] ?? '', 'base64').toString(), 't0k3n');
});

test('kubectl create service: the port\'s targetPort arrives as an int-or-string', async () => {
  await kubectl(['create', 'service', 'clusterip', 'solver', '--tcp=80:8089']);
  const service = sentBody('/api/v1/namespaces/default/services');
  assert.equal(service.kind, 'Service');
  assert.deepEqual((service.spec as { ports: unknown[] }).ports, [{ name: '80-8089', protocol: 'TCP', port: 80, targetPort: 8089 }]);
});

test('kubectl create ingress: the rule\'s inline http value and the backend port decode', async () => {
  await kubectl(['create', 'ingress', 'solver', '--rule=a.example.test/.well-known/*=solver:http']);
  const ingress = sentBody('/apis/networking.k8s.io/v1/namespaces/default/ingresses');
  assert.deepEqual((ingress.spec as { rules: unknown[] }).rules, [{
    host: 'a.example.test',
    http: { paths: [{ path: '/.well-known/', pathType: 'Prefix', backend: { service: { name: 'solver', port: { name: 'http' } } } }] },
  }]);
});
