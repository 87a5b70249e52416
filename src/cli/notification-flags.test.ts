// The notification flags (issue 16), shared by `certsmith server` and `certsmith controller`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controllerOptionsFrom, type ControllerFlags } from './server.ts';
import { CliError } from './cli-error.ts';

const flags = (over: Partial<ControllerFlags>): ControllerFlags => ({
  autoApprove: true, metricsListen: '127.0.0.1:0', healthListen: '127.0.0.1:0', clusterResourceNamespace: 'cert-manager',
  ingressShim: true, defaultIssuerKind: 'Issuer', defaultIssuerGroup: 'cert-manager.io', autoCertificateAnnotations: 'kubernetes.io/tls-acme',
  caInjector: true, ...over,
});

test('notification flags: none means no notifications; given ones pass through, durations parsed', () => {
  assert.equal(controllerOptionsFrom(flags({})).notifications, undefined);
  assert.deepEqual(controllerOptionsFrom(flags({ notifyWebhook: 'https://hooks.example.test/x', notifyAfterFailures: '5', notifyRenewalGrace: '2h', notifyExpiryBefore: '72h' })).notifications, {
    webhookUrl: 'https://hooks.example.test/x', exec: undefined, failures: 5, renewalGraceMs: 7_200_000, expiryThresholdMs: 259_200_000,
  });
  assert.match(controllerOptionsFrom(flags({ notifyExec: 'notify.sh' })).notifications!.exec!, /^\/.*notify\.sh$/, 'the hook path is made absolute');
});

test('bad notification flags are refused naming the flag and the rule', () => {
  const rows: [Partial<ControllerFlags>, RegExp][] = [
    [{ notifyWebhook: 'ftp://hooks.example.test' }, /--notify-webhook: "ftp:\/\/hooks.example.test" is not an http\(s\) URL/],
    [{ notifyWebhook: 'not a url' }, /--notify-webhook: "not a url" is not an http\(s\) URL/],
    [{ notifyWebhook: 'https://h.example.test', notifyAfterFailures: '0' }, /--notify-after-failures: "0" is not a whole number of 1 or more/],
    [{ notifyWebhook: 'https://h.example.test', notifyAfterFailures: '2.5' }, /--notify-after-failures: "2.5"/],
    [{ notifyWebhook: 'https://h.example.test', notifyRenewalGrace: 'soon' }, /--notify-renewal-grace: /],
    [{ notifyRenewalGrace: '1h' }, /need --notify-webhook or --notify-exec/],
  ];
  for (const [given, message] of rows) {
    assert.throws(() => controllerOptionsFrom(flags(given)), (e: unknown) => e instanceof CliError && message.test((e as Error).message), JSON.stringify(given));
  }
});
