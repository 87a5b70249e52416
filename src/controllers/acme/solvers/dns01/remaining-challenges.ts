// certbot's CERTBOT_REMAINING_CHALLENGES for one challenge of an order (see the test's header).
interface OrderChallenge {
  metadata: { uid?: string };
  spec: { dnsName: string; authorizationURL?: string; type: string; wildcard?: boolean };
}

/**
 * How many of the order's DNS-01 challenges come after `self`: in the order of the Order's
 * authorizations (the CA's order, which certbot follows), then by name, the wildcard after its
 * base name. `all` holds the order's challenges, self among them.
 */
export function remainingChallenges(self: OrderChallenge, all: OrderChallenge[], authorizations: string[]): number {
  const place = (c: OrderChallenge) => {
    const i = authorizations.indexOf(c.spec.authorizationURL ?? '');
    return i < 0 ? authorizations.length : i;
  };
  const before = (x: OrderChallenge, y: OrderChallenge) => place(x) - place(y)
    || (x.spec.dnsName < y.spec.dnsName ? -1 : x.spec.dnsName > y.spec.dnsName ? 1 : 0)
    || Number(!!x.spec.wildcard) - Number(!!y.spec.wildcard)
    || ((x.metadata.uid ?? '') < (y.metadata.uid ?? '') ? -1 : (x.metadata.uid ?? '') > (y.metadata.uid ?? '') ? 1 : 0);
  return all.filter((c) => c.spec.type === 'DNS-01' && c.metadata.uid !== self.metadata.uid && before(c, self) > 0).length;
}
