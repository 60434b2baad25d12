// What `buildbot try --connect=pb --wait` follows (buildbot/clients/tryclient.py, getStatus):
// the object a try answers (Buildbot's RemoteBuildSetStatus in schedulers/trysched.py) and
// the ones it leads to. `getBuildRequests` gives [(builder, request)]; a request's
// `subscribe(client)` calls the client's `newbuild(build, builder)` for each build of the
// request, those there already and those to come, until `unsubscribe` or the connection
// ends; a build's `waitUntilFinished` answers the build once it has finished, `getResults`
// its results, `getText` [its state string]. A build's `subscribe(client, interval)` is
// accepted and sends nothing: Buildbot's sends each step's start, which the client shows in
// its status lines every 3 s; Flotilla's client shows "building" instead (documented).
import type { BuildOutcome } from '../../../core/data/index.js';
import type { TryBuildset, TryRequests } from '../connection.js';
import type { PbSession } from './accounts.js';
import { LocalObject, RemoteReference } from './broker.js';
import { Tuple } from './jelly.js';

/**
 * How often a try client's builds are read while it waits: the database, not the cluster's
 * events, so that any master's builds are seen (the client may have logged in on another
 * master than the one that runs them). One small indexed read per waiting request a second;
 * a build's end shows within a second, where the client prints its status every 3 s.
 */
export const TRY_STATUS_POLL_MS = 1000;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

/** Read until `done` holds or the client is gone (undefined then). */
async function readUntil<T>(
  session: PbSession,
  read: () => Promise<T>,
  done: (v: T) => boolean,
  stopped: () => boolean = () => false,
): Promise<T | undefined> {
  for (;;) {
    if (!session.broker.connected || stopped()) return undefined;
    const v = await read();
    if (done(v)) return v;
    await pause(TRY_STATUS_POLL_MS);
  }
}

function remoteBuild(b: BuildOutcome, tries: TryRequests, session: PbSession): LocalObject {
  const outcome = async () => (await tries.build(b.buildid)) ?? b;
  const self: LocalObject = new LocalObject('RemoteBuild', {
    subscribe: () => null,
    unsubscribe: () => null,
    waitUntilFinished: async () => {
      await readUntil(session, outcome, (o) => o.results !== null);
      return self;
    },
    getResults: async () => (await outcome()).results,
    getText: async () => [(await outcome()).state_string],
  });
  return self;
}

function remoteBuildRequest(
  r: TryBuildset['requests'][number],
  tries: TryRequests,
  session: PbSession,
): LocalObject {
  let following: RemoteReference | null = null;
  return new LocalObject('RemoteBuildRequest', {
    subscribe: async ([client]) => {
      if (!(client instanceof RemoteReference) || following) return null;
      following = client;
      const told = new Set<number>();
      const tell = async () => {
        for (const b of await tries.builds(r.brid)) {
          if (told.has(b.buildid)) continue;
          told.add(b.buildid);
          await client.callRemote('newbuild', remoteBuild(b, tries, session), r.builder);
        }
        return false;
      };
      // The builds there already before subscribe answers, as Buildbot's; then those to come.
      await tell();
      void readUntil(
        session,
        tell,
        (v) => v,
        () => following !== client,
      )
        .catch(() => undefined)
        .finally(() => client.release());
      return null;
    },
    unsubscribe: () => {
      following = null;
      return null;
    },
  });
}

/** The object a try answers: the build set's requests, each followed as above. */
export function buildsetStatus(set: TryBuildset, tries: TryRequests, session: PbSession): LocalObject {
  return new LocalObject('RemoteBuildSetStatus', {
    getBuildRequests: () =>
      set.requests.map((r) => new Tuple(r.builder, remoteBuildRequest(r, tries, session))),
  });
}
