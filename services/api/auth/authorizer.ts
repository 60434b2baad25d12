// Authorization of API requests and events: Buildbot's endpoint matchers over our registry,
// fed to the rule walk of core/auth/authz.ts. A REST read is action `get`; a JSON-RPC call
// is its method (stop, rebuild, cancel, force, pause, ...); an event is a read of the path
// its routing key names.

import type { UiAction, UiPermissions } from '../../core/api-shapes.js';
import {
  type AllowRule,
  type AuthzPolicy,
  type Decision,
  decide,
  decideSync,
  mayEver,
  type RuleMatch,
  rolesOf,
  type SessionUser,
} from '../../core/auth/authz.js';
import { fnmatch } from '../../core/auth/fnmatch.js';
import { forcedBuilders } from '../../core/force/builder-names.js';
import type { ForceScheduler } from '../../core/force/parameters.js';
import type { Match } from '../registry/paths.js';
import { builderScope, type Targets } from './targets.js';

export interface AuthzRequest {
  /** The path below /api/v2, decoded (or an event's path); null when it cannot be one. */
  segments: readonly string[] | null;
  /** `get` for reads (GET, HEAD, events), else the JSON-RPC method. */
  action: string;
  params: Readonly<Record<string, unknown>>;
  /** The endpoint the path names, when it names one. */
  match: Match | null;
}

const NO_OWNER: RuleMatch = { owner: async () => null };

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | null = null;
  return () => {
    p ??= fn();
    return p;
  };
}

const matchesAny = (name: string, patterns: readonly string[]) => patterns.some((p) => fnmatch(name, p));

/** Which rule matchers can apply to each action the web UI has a button for (see matchRule). */
const UI_ACTION_MATCHERS: Record<UiAction, readonly AllowRule['match'][]> = {
  force: ['force'],
  stop: ['stop'],
  rebuild: ['rebuild'],
  // Buildbot's stop matcher also guards a request's cancel (matchRule).
  cancel: ['stop'],
  'worker-control': [],
  'enable-scheduler': ['enable-scheduler'],
};

export class Authorizer {
  /** Resolves once the caches events need are filled (never rejects). */
  readonly primed: Promise<void>;

  constructor(
    readonly policy: AuthzPolicy,
    private readonly targets: Targets,
    private readonly forceSchedulers: ReadonlyMap<string, ForceScheduler>,
  ) {
    const needsNames = policy.rules.some((r) => r.match.startsWith('view-') && r.builders);
    this.primed = needsNames ? targets.primeBuilders().catch(() => {}) : Promise.resolve();
  }

  /** No rules: everything is allowed, nothing is looked up (Buildbot's default authz). */
  get open(): boolean {
    return this.policy.rules.length === 0;
  }

  check(user: SessionUser | undefined, req: AuthzRequest): Promise<Decision> {
    if (this.open) return Promise.resolve({ allowed: true });
    const lookups = this.lookups(req);
    return decide(this.policy, user, (rule) => this.matchRule(rule, req, lookups));
  }

  /**
   * For events (the events plugin's `authorize` option): may this user receive the event with
   * this routing key? It is a read of what the key names (`builds/12/finished` reads
   * builds/12). Decided at once, from caches: when a view-builders rule limited to some
   * builders needs the builder of a build, step or log this pod has not looked up yet, the
   * rule is taken to match (so only its roles receive the event) while the lookup runs.
   */
  authorize = (userInfo: SessionUser | undefined, routingKey: readonly string[]): boolean => {
    if (this.open) return true;
    const segments = routingKey.slice(0, -1);
    return decideSync(this.policy, userInfo, (rule) => {
      switch (rule.match) {
        case 'any':
          return true;
        case 'view-builders':
        case 'view-builds': {
          const scope = builderScope(segments);
          if (scope === 'none') return false;
          if (scope === 'mixed' || !rule.builders) return true;
          const name = this.targets.cachedBuilderNameOf(scope.ref);
          if (name === undefined) return true;
          return name !== null && matchesAny(name, rule.builders);
        }
        default:
          return false;
      }
    }).allowed;
  };

  /** What the web UI may offer this user (core/auth/authz.ts's mayEver, per action). */
  permissions(user: SessionUser | undefined): UiPermissions {
    const out = {} as UiPermissions;
    for (const [action, matchers] of Object.entries(UI_ACTION_MATCHERS) as [
      UiAction,
      AllowRule['match'][],
    ][]) {
      out[action] = mayEver(this.policy, user, (rule) => {
        if (rule.match === 'any' || rule.match === 'any-control') return 'certain';
        if (!matchers.includes(rule.match)) return null;
        return rule.builders ? 'some' : 'certain';
      });
    }
    return out;
  }

  /** The roles a user has from who they are (for the web UI to show). */
  roles(user: SessionUser | undefined): string[] {
    return [...rolesOf(user, this.policy.roleMatchers)];
  }

  private lookups(req: AuthzRequest) {
    const m = req.match;
    return {
      build: once(async () => (m && m.endpoint.resource.name === 'build' ? this.targets.build(m) : null)),
      buildRequest: once(async () =>
        m && m.endpoint.resource.name === 'buildrequest' ? this.targets.buildRequest(m) : null,
      ),
      scopeBuilder: once(async () => {
        const scope = req.segments ? builderScope(req.segments) : 'none';
        if (scope === 'none' || scope === 'mixed') return scope;
        return { name: await this.targets.builderNameOf(scope.ref) };
      }),
    };
  }

  private async matchRule(
    rule: AllowRule,
    req: AuthzRequest,
    look: ReturnType<Authorizer['lookups']>,
  ): Promise<RuleMatch | null> {
    const one = req.match && !req.match.endpoint.collection ? req.match : null;
    const resource = one?.endpoint.resource.name;
    const builders = rule.builders;
    switch (rule.match) {
      case 'any':
        return NO_OWNER;
      case 'any-control':
        return req.action !== 'get' ? NO_OWNER : null;
      case 'force': {
        if (req.action !== 'force' || resource !== 'forcescheduler') return null;
        if (!builders) return NO_OWNER;
        const sched = this.forceSchedulers.get(String(one!.args.schedulername));
        if (!sched) return null;
        // Every builder the call would start must be one the rule names (Buildbot 3.7 lets
        // the call through when any one is, and then starts them all).
        const asked = await forcedBuilders(sched, req.params, (id) => this.targets.builderName(id));
        return asked.ok && asked.names.every((n) => matchesAny(n, builders)) ? NO_OWNER : null;
      }
      case 'stop':
      case 'rebuild': {
        const onBuild = resource === 'build' && req.action === rule.match;
        // Buildbot 3.7's stop matcher looks for a `stop` of a build request, which has only
        // `cancel`: we match the cancel, so a stop rule also guards cancelling.
        const onRequest =
          rule.match === 'stop' &&
          resource === 'buildrequest' &&
          (req.action === 'cancel' || req.action === 'stop');
        if (onBuild) {
          const build = await look.build();
          if (builders && !(build && matchesAny(build.builder, builders))) return null;
          return {
            owner: async () => (build ? this.targets.ownerOfBuildRequest(build.buildrequestid) : null),
          };
        }
        if (onRequest) {
          const br = await look.buildRequest();
          if (builders && !(br && matchesAny(br.builder, builders))) return null;
          return { owner: async () => (br ? this.targets.ownerOfBuildRequest(br.id) : null) };
        }
        return null;
      }
      case 'enable-scheduler':
        return req.action === 'enable' && resource === 'scheduler' ? NO_OWNER : null;
      case 'view-builders':
      case 'view-builds': {
        if (req.action !== 'get') return null;
        const scope = await look.scopeBuilder();
        if (scope === 'none') return null;
        if (scope === 'mixed' || !builders) return NO_OWNER;
        return scope.name !== null && matchesAny(scope.name, builders) ? NO_OWNER : null;
      }
    }
  }
}
