// A loopback stand-in for AWS STS AssumeRole and AssumeRoleWithWebIdentity (the Query API,
// 2011-06-15), following the documented requests, responses and errors:
//   https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html
//   https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRoleWithWebIdentity.html
//   https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_providers_oidc.html   (OIDC provider, aud/sub conditions)
//   https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html
//   https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html   (Signature Version 4, service "sts")
// POST / with a form body (Action=AssumeRole, Version, RoleArn, RoleSessionName, ...). The request's
// SigV4 signature is recomputed with route53-api.ts's verifier from the caller's secret key: an
// unknown key is InvalidClientTokenId, a wrong signature SignatureDoesNotMatch (403). A role not in
// `roles` is AccessDenied (403). Each granted AssumeRole mints fresh temporary credentials (ASIA
// key id, secret, session token) and hands them to `onAssumed`, so the test can make another
// loopback API accept exactly those.
// AssumeRoleWithWebIdentity is unsigned (no AWS credentials needed, as documented); what it checks
// is the token: an RS256 JWT signed by the configured OIDC issuer's key (else InvalidIdentityToken,
// 400), not expired (ExpiredTokenException, 400), whose `sub` and `aud` the role's trust policy
// names (else AccessDenied, 403) — an IRSA role trusts one ServiceAccount and audience.
import http from 'node:http';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { verifySigV4 } from './route53-api.ts';

export interface AssumedCredentials {
  roleArn: string;
  sessionName: string;
  /** the access key id that signed the AssumeRole call ('' for AssumeRoleWithWebIdentity) */
  callerKeyId: string;
  /** AssumeRoleWithWebIdentity: the token's subject and audiences */
  subject?: string;
  audiences?: string[];
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
  /** AssumeRoleWithWebIdentity: the OIDC issuer whose RS256 tokens are trusted, and each role's trust condition */
  webIdentity?: { issuer: string; publicKey: crypto.KeyObject; roles: Record<string, { sub: string; aud: string }> };
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

  const mint = (roleArn: string, sessionName: string, callerKeyId: string, extra: Partial<AssumedCredentials> = {}): AssumedCredentials => {
    const c: AssumedCredentials = {
      roleArn, sessionName, callerKeyId, ...extra,
      accessKeyId: `ASIA${crypto.randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: crypto.randomBytes(30).toString('base64'),
      sessionToken: crypto.randomBytes(64).toString('base64'),
    };
    assumed.push(c);
    opts.onAssumed?.(c);
    return c;
  };
  const credentialsXml = (c: AssumedCredentials) => {
    const expiration = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return `<Credentials><AccessKeyId>${c.accessKeyId}</AccessKeyId><SecretAccessKey>${esc(c.secretAccessKey)}</SecretAccessKey><SessionToken>${esc(c.sessionToken)}</SessionToken><Expiration>${expiration}</Expiration></Credentials>`;
  };

  /** the JWT's claims when its RS256 signature is the issuer's and it is unexpired; else the STS error */
  function verifyWebIdentity(token: string): { claims: { iss?: string; sub?: string; aud?: string | string[]; exp?: number } } | { status: number; code: string; message: string } {
    const wi = opts.webIdentity;
    const invalid = { status: 400, code: 'InvalidIdentityToken', message: 'The web identity token that was passed could not be validated by AWS. Get a new identity token from the identity provider and then retry the request.' };
    if (!wi) return invalid;
    const parts = token.split('.');
    if (parts.length !== 3) return invalid;
    try {
      const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as { alg?: string };
      if (header.alg !== 'RS256') return invalid;
      if (!crypto.verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), wi.publicKey, Buffer.from(parts[2], 'base64url'))) return invalid;
      const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as { iss?: string; sub?: string; aud?: string | string[]; exp?: number };
      if (claims.iss !== wi.issuer) return { ...invalid, message: `No OpenIDConnect provider found in your account for ${claims.iss ?? ''}` };
      if (typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now()) return { status: 400, code: 'ExpiredTokenException', message: 'Token expired: current date/time must be before the expiration date/time' };
      return { claims };
    } catch {
      return invalid;
    }
  }

  function assumeRoleWithWebIdentity(res: http.ServerResponse, action: string, form: URLSearchParams) {
    if (form.get('Version') !== '2011-06-15') return error(res, action, 400, 'InvalidParameterValue', 'Version must be 2011-06-15');
    const roleArn = form.get('RoleArn') ?? '';
    const sessionName = form.get('RoleSessionName') ?? '';
    if (!/^[\w+=,.@-]{2,64}$/.test(sessionName)) return error(res, action, 400, 'ValidationError', "1 validation error detected: Value at 'roleSessionName' failed to satisfy constraint");
    const v = verifyWebIdentity(form.get('WebIdentityToken') ?? '');
    if ('code' in v) return error(res, action, v.status, v.code, v.message);
    const audiences = Array.isArray(v.claims.aud) ? v.claims.aud : v.claims.aud ? [v.claims.aud] : [];
    const trust = opts.webIdentity!.roles[roleArn];
    if (!trust || trust.sub !== v.claims.sub || !audiences.includes(trust.aud)) {
      return error(res, action, 403, 'AccessDenied', 'Not authorized to perform sts:AssumeRoleWithWebIdentity');
    }
    const c = mint(roleArn, sessionName, '', { subject: v.claims.sub, audiences });
    const roleName = roleArn.split('/').pop();
    return reply(res, action, 200, `<AssumeRoleWithWebIdentityResponse xmlns="${NS}"><AssumeRoleWithWebIdentityResult><SubjectFromWebIdentityToken>${esc(v.claims.sub ?? '')}</SubjectFromWebIdentityToken><Audience>${esc(trust.aud)}</Audience><AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/${esc(roleName ?? '')}/${esc(sessionName)}</Arn><AssumedRoleId>AROA${crypto.randomBytes(8).toString('hex').toUpperCase()}:${esc(sessionName)}</AssumedRoleId></AssumedRoleUser>${credentialsXml(c)}<Provider>${esc(opts.webIdentity!.issuer)}</Provider></AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>${crypto.randomUUID()}</RequestId></ResponseMetadata></AssumeRoleWithWebIdentityResponse>`);
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) {
    const form = new URLSearchParams(body.toString('utf8'));
    const action = form.get('Action') ?? '';
    if (req.method !== 'POST') return error(res, action, 400, 'InvalidAction', 'STS Query requests are POSTs here');
    // the one unsigned action: the token is the credential
    if (action === 'AssumeRoleWithWebIdentity') return assumeRoleWithWebIdentity(res, action, form);
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
    const c = mint(roleArn, sessionName, callerKeyId);
    const roleName = roleArn.split('/').pop();
    return reply(res, action, 200, `<AssumeRoleResponse xmlns="${NS}"><AssumeRoleResult>${credentialsXml(c)}<AssumedRoleUser><AssumedRoleId>AROA${crypto.randomBytes(8).toString('hex').toUpperCase()}:${esc(sessionName)}</AssumedRoleId><Arn>arn:aws:sts::123456789012:assumed-role/${esc(roleName ?? '')}/${esc(sessionName)}</Arn></AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>${crypto.randomUUID()}</RequestId></ResponseMetadata></AssumeRoleResponse>`);
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
