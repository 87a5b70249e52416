// cert-manager's controller Lease, which every set of certsmith controllers takes part in: the
// replicas of `certsmith controller --leader-elect`, and `certsmith server`'s own controllers, so
// that a controller pointed at a server that runs its own waits instead of running a second set
// beside it (42 private keys for 30 Certificates and 409s on every kind, seen when it did not).
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { LeaseType } from '../api/resources.ts';
import { LeaderElector, type Lease } from '../runtime/leaderelection.ts';
import type { Clock } from '../runtime/clock.ts';
import type { Logger } from '../runtime/logger.ts';
import type { Store } from '../store/store.ts';
import { CliError } from './cli-error.ts';

/** The Lease cert-manager's controller elects its leader on, so the two never run side by side unnoticed. */
export const leaseName = 'cert-manager-controller';
/** where `certsmith server` keeps it: cert-manager's default --leader-election-namespace */
export const serverLeaseNamespace = 'kube-system';
/** `certsmith server`'s identities start so; one data dir has one server at a time (its lock), so such a holder that is not us is a run that has ended */
export const SERVER_IDENTITY_PREFIX = 'certsmith-server_';

export function leaderIdentity(prefix = ''): string {
  return `${prefix}${hostname()}_${randomBytes(8).toString('hex')}`;
}

/** The holder of the Lease while it is held (renewed within its duration by this host's clock), else undefined. */
export async function currentLeaseHolder(store: Store, namespace: string, now: Date): Promise<string | undefined> {
  const lease = await store.get<Lease>(LeaseType, namespace, leaseName);
  const s = lease?.spec;
  if (!s?.holderIdentity) return undefined;
  const renewed = Date.parse(s.renewTime ?? s.acquireTime ?? '');
  return Number.isFinite(renewed) && renewed + (s.leaseDurationSeconds ?? 0) * 1000 > now.getTime() ? s.holderIdentity : undefined;
}

/** how long `certsmith server` waits for its first campaign before it serves without its controllers running yet */
const FIRST_DECISION_WAIT_MS = 10_000;

export interface ServerControllers {
  /** stops the controllers, then hands the Lease back */
  stop(): Promise<void>;
}

/**
 * Runs `certsmith server`'s controllers while it holds the Lease. Its predecessor's hold (a server
 * killed on this data dir) is taken over at once; a `certsmith controller` holding it keeps it,
 * and the server's controllers start once it is released or expires. Losing it stops them and the
 * server campaigns again, serving the API meanwhile (a full disk must not end the server).
 * Resolves once the first attempt is decided (controllers running, or another holder seen), or
 * after FIRST_DECISION_WAIT_MS while the campaign goes on.
 */
export async function runServerControllers(o: {
  store: Store; clock: Clock; logger: Logger;
  start: () => Promise<{ stop(): Promise<void> }>;
  say: (line: string) => void;
  /** the controllers failed to start after this returned (the Lease taken later): the server must not run on without them */
  onLaterStartFailure: (e: Error) => void;
}): Promise<ServerControllers> {
  let running: { stop(): Promise<void> } | undefined;
  /** a start under way: a stop waits for it, so that controllers finishing their start then are stopped too */
  let starting: Promise<void> | undefined;
  let returned = false;
  let startFailure: Error | undefined;
  let elector: LeaderElector | undefined;
  let stopping = false;
  let decided: () => void = () => {};
  const firstDecision = new Promise<void>((r) => (decided = r));
  const campaign = () => {
    const identity = leaderIdentity(SERVER_IDENTITY_PREFIX);
    elector = new LeaderElector({
      store: o.store, namespace: serverLeaseNamespace, name: leaseName, identity, clock: o.clock, logger: o.logger,
      supersedes: (holder) => holder.startsWith(SERVER_IDENTITY_PREFIX),
      onStartedLeading: () => {
        if (stopping) return;
        starting = o.start().then((r) => {
          running = r;
          decided();
        }, (e: Error) => {
          // the server stopping (its store closing) under a start is not a failure to exit for
          if (stopping) return;
          o.logger.error({ err: e.message }, 'the controllers failed to start');
          if (returned) o.onLaterStartFailure(e);
          else startFailure = e;
          decided();
        }).finally(() => (starting = undefined));
      },
      onStoppedLeading: () => {
        if (stopping) return;
        o.logger.error(`lost the Lease ${serverLeaseNamespace}/${leaseName}: stopping the controllers and campaigning again`);
        const was = running;
        running = undefined;
        void (was?.stop() ?? Promise.resolve()).then(() => { if (!stopping) campaign(); });
      },
      onNewLeader: (leader) => {
        if (leader === identity) return;
        // a server that ran on this data dir before (the data dir's lock says it is gone): taken over at once
        if (leader.startsWith(SERVER_IDENTITY_PREFIX)) {
          o.say(`certsmith server: takes over the Lease ${serverLeaseNamespace}/${leaseName} from ${leader}, a server that ran on this data dir before`);
          return;
        }
        o.say(`certsmith server: the controllers of ${leader} hold the Lease ${serverLeaseNamespace}/${leaseName}; this server's controllers start once it is released or expires`);
        decided();
      },
    });
    elector.start();
  };
  campaign();
  // a store that cannot take the Lease's write yet (a full disk) must not keep the API from serving: the campaign goes on
  await Promise.race([firstDecision, new Promise<void>((r) => setTimeout(r, FIRST_DECISION_WAIT_MS).unref())]);
  returned = true;
  if (startFailure) {
    stopping = true;
    await elector?.stop();
    // a flag's problem (a port in use) already says what to change
    throw startFailure instanceof CliError ? startFailure : new Error(`the controllers failed to start: ${startFailure.message}`);
  }
  return {
    async stop() {
      stopping = true;
      await starting;
      await running?.stop();
      await elector?.stop();
    },
  };
}
