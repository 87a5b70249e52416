#!/usr/bin/env bash
# Installs the real components the tests drive (Debian packages) when they are missing.
set -euo pipefail
need=()
command -v openssl >/dev/null || need+=(openssl)
command -v pebble >/dev/null || need+=(pebble)
command -v named >/dev/null || need+=(bind9)
command -v dig >/dev/null || need+=(bind9-dnsutils)
command -v kubectl >/dev/null || need+=(kubernetes-client)
command -v keytool >/dev/null || need+=(default-jre-headless)
# webroot HTTP-01: the user's web server that serves the challenge files
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx)
# the dashboard's browser tests drive Debian's chromium headless (playwright-core, no downloaded browser)
command -v chromium >/dev/null || need+=(chromium)
# monitoring: promtool checks and unit-tests deploy/monitoring's alerting rules
command -v promtool >/dev/null || need+=(prometheus)
# a host that sleeps: the server under libfaketime sees its wall clock jump (test/e2e/clock-jump.test.ts)
command -v faketime >/dev/null || need+=(faketime)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "provision: installing ${need[*]}" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "provision: missing ${need[*]} and not root; tests needing them will fail" >&2
  fi
fi

# kubectl v1.20 for the kubectl matrix (test/e2e/kubectl-matrix.test.ts): Debian's kubernetes-client,
# unpacked beside the machine's kubectl rather than installed over it
kubectl120=/opt/certsmith-test/kubectl-1.20
if [ ! -x "$kubectl120/kubectl" ] && [ "$(id -u)" = 0 ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -qq kubernetes-client >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get download -qq kubernetes-client >/dev/null; }) \
    && dpkg-deb -x "$tmp"/kubernetes-client_*.deb "$tmp/root" \
    && mkdir -p "$kubectl120" && cp "$tmp/root/usr/bin/kubectl" "$kubectl120/kubectl"
  rm -rf "$tmp"
fi
