// A loopback stand-in for AWS STS AssumeRole (the Query API, 2011-06-15), following the documented
// request, response and errors:
//   https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html
//   https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html
//   https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html   (Signature Version 4, service "sts")
// POST / with a form body (Action=AssumeRole, Version, RoleArn, RoleSessionName, ...). The request's
// SigV4 signature is recomputed with route53-api.ts's verifier from the caller's secret key: an
// unknown key is InvalidClientTokenId, a wrong signature SignatureDoesNotMatch (403). A role not in
// `roles` is AccessDenied (403). Each granted AssumeRole mints fresh temporary credentials (ASIA
// key id, secret, session token) and hands them to `onAssumed`, so the test can make another
// loopback API accept exactly those.
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { verifySigV4 } from './route53-api.ts';

export interface AssumedCredentials {
  roleArn: string;
  sessionName: string;
  /** the access key id that signed the AssumeRole call */
  callerKeyId: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
}

export interface STSAPI {
  url: string;
  assumed: AssumedCredentials[];
  requests: { action: string; status: number; code?: string }[];
  stop(): Promise<void>;
}

const NS = 'https://sts.amazonaws.com/doc/2011-06-15/';
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function startSTSAPI(opts: {
  /** long-term keys allowed to call: access key id → secret */
  keys: Record<string, string>;
  /** role ARNs that may be assumed */
  roles: string[];
  onAssumed?: (c: AssumedCredentials) => void;
}): Promise<STSAPI> {
  const assumed: AssumedCredentials[] = [];
  const requests: STSAPI['requests'] = [];
  const reply = (res: http.ServerResponse, action: string, status: number, xml: string, code?: string) => {
    requests.push({ action, status, code });
    res.writeHead(status, { 'content-type': 'text/xml', 'x-amzn-requestid': crypto.randomUUID() });
    res.end(xml);
  };
  const error = (res: http.ServerResponse, action: string, status: number, code: string, message: string) =>
    reply(res, action, status, `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${esc(message)}</Message></Error><RequestId>${crypto.randomUUID()}</RequestId></ErrorResponse>`, code);

  function handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) {
    const form = new URLSearchParams(body.toString('utf8'));
    const action = form.get('Action') ?? '';
    if (req.method !== 'POST') return error(res, action, 400, 'InvalidAction', 'STS Query requests are POSTs here');
    const bad = verifySigV4({ method: 'POST', url: req.url ?? '/', headers: req.headers, body }, opts.keys, 'sts');
    if (bad) return error(res, action, 403, bad.code, bad.message);
    if (action !== 'AssumeRole') return error(res, action, 400, 'InvalidAction', `Could not find operation ${action} for version ${form.get('Version') ?? ''}`);
    if (form.get('Version') !== '2011-06-15') return error(res, action, 400, 'InvalidParameterValue', 'Version must be 2011-06-15');
    const roleArn = form.get('RoleArn') ?? '';
    const sessionName = form.get('RoleSessionName') ?? '';
    if (!/^[\w+=,.@-]{2,64}$/.test(sessionName)) return error(res, action, 400, 'ValidationError', "1 validation error detected: Value at 'roleSessionName' failed to satisfy constraint");
    const callerKeyId = /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')![1];
    if (!opts.roles.includes(roleArn)) {
      return error(res, action, 403, 'AccessDenied', `User: arn:aws:iam::123456789012:user/${callerKeyId} is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`);
    }
    const c: AssumedCredentials = {
      roleArn, sessionName, callerKeyId,
      accessKeyId: `ASIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: crypto.randomBytes(30).toString('base64'),
      sessionToken: crypto.randomBytes(64).toString('base64'),
    };
    assumed.push(c);
    opts.onAssumed?.(c);
    const expiration = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const roleName = roleArn.split('/').pop();
    return reply(res, action, 200, `<AssumeRoleResponse xmlns="${NS}"><AssumeRoleResult><Credentials><AccessKeyId>${c.accessKeyId}</AccessKeyId><SecretAccessKey>${esc(c.secretAccessKey)}</SecretAccessKey><SessionToken>${esc(c.sessionToken)}</SessionToken><Expiration>${expiration}</Expiration></Credentials><AssumedRoleUser><AssumedRoleId>AROA${crypto.randomBytes(8).toString('hex').toUpperCase()}:${esc(sessionName)}</AssumedRoleId><Arn>arn:aws:sts::123456789012:assumed-role/${esc(roleName ?? '')}/${esc(sessionName)}</Arn></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>${crypto.randomUUID()}</RequestId></ResponseMetadata></AssumeRoleResponse>`);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    assumed,
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
