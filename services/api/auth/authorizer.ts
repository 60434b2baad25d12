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
  decideAdmin,
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
import { AUDIT_ROOT } from '../registry/resources/audit.js';
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

/**
 * What a read is about, for the view rules: no builder's data, or one builder's (by name;
 * null when none exists). A read spanning builders is decided for each of them.
 */
type ReadScope = 'none' | { name: string | null };

const isViewRule = (rule: AllowRule) => rule.match === 'view-builders' || rule.match === 'view-builds';

/** Whether a view rule matches a read, for REST and events alike. */
function viewRuleMatches(rule: AllowRule, scope: ReadScope): boolean {
  if (scope === 'none') return false;
  if (!rule.builders) return true;
  return scope.name !== null && matchesAny(scope.name, rule.builders);
}

const ALLOWED: Decision = { allowed: true };

export class Authorizer {
  /** Resolves once the caches events need are filled (never rejects). */
  readonly primed: Promise<void>;
  /** Whether a rule is limited to some builders, so that reads need the builder's name. */
  private readonly namesNeeded: boolean;

  constructor(
    readonly policy: AuthzPolicy,
    private readonly targets: Targets,
    private readonly forceSchedulers: ReadonlyMap<string, ForceScheduler>,
  ) {
    this.namesNeeded = policy.rules.some((r) => isViewRule(r) && r.builders);
    this.primed = this.namesNeeded ? targets.primeBuilders().catch(() => {}) : Promise.resolve();
  }

  /** No rules: everything is allowed, nothing is looked up (Buildbot's default authz). */
  get open(): boolean {
    return this.policy.rules.length === 0;
  }

  async check(user: SessionUser | undefined, req: AuthzRequest): Promise<Decision> {
    if (this.open) return ALLOWED;
    // The audit log (registry/resources/audit.ts) is for administrators only.
    if (req.segments?.[0] === AUDIT_ROOT) return decideAdmin(this.policy, user);
    const scope = req.segments ? builderScope(req.segments) : 'none';
    if (req.action === 'get' && scope === 'mixed' && this.namesNeeded)
      return this.checkEveryBuilder(user, req);
    return decide(this.policy, user, (rule) => this.matchRule(rule, req, this.lookups(req)));
  }

  /**
   * A read of several builders' data (a list of builds, a build set): allowed only where a
   * read of each builder's would be, so that no rule lets a list show what it keeps from
   * the builder's own pages. The first refusal is the answer.
   */
  private async checkEveryBuilder(user: SessionUser | undefined, req: AuthzRequest): Promise<Decision> {
    const names = await this.targets.builderNames();
    for (const name of names.length ? names : [null]) {
      const look = this.lookups(req, { name });
      const d = await decide(this.policy, user, (rule) => this.matchRule(rule, req, look));
      if (!d.allowed) return d;
    }
    return ALLOWED;
  }

  /**
   * For events (the events plugin's `authorize` option): may this user receive the event with
   * this routing key? It is the decision REST makes for a read of the path the key names
   * (`builds/12/finished` reads builds/12): at once when the caches know the builder it
   * needs, else awaited from the database. Never assumed: an event waits rather than go out
   * undecided (a refused lookup withholds it).
   */
  authorize = (
    userInfo: SessionUser | undefined,
    routingKey: readonly string[],
  ): boolean | Promise<boolean> => {
    if (this.open) return true;
    const segments = routingKey.slice(0, -1);
    const scope = builderScope(segments);
    let read: ReadScope = 'none';
    if (scope !== 'none') {
      const name = !this.namesNeeded
        ? null
        : scope === 'mixed'
          ? undefined
          : this.targets.cachedBuilderNameOf(scope.ref);
      if (name === undefined) {
        return this.check(userInfo, { segments, action: 'get', params: {}, match: null }).then(
          (d) => d.allowed,
        );
      }
      read = { name };
    }
    return decideSync(this.policy, userInfo, (rule) =>
      rule.match === 'any' ? true : isViewRule(rule) ? viewRuleMatches(rule, read) : false,
    ).allowed;
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

  /** What the rules may need to know of a request, each looked up once, when first needed. */
  private lookups(req: AuthzRequest, read?: ReadScope) {
    const m = req.match;
    return {
      build: once(async () => (m && m.endpoint.resource.name === 'build' ? this.targets.build(m) : null)),
      buildRequest: once(async () =>
        m && m.endpoint.resource.name === 'buildrequest' ? this.targets.buildRequest(m) : null,
      ),
      read: once(async (): Promise<ReadScope> => {
        if (read) return read;
        const scope = req.segments ? builderScope(req.segments) : 'none';
        if (scope === 'none') return 'none';
        // Spanning builders, with no rule limited to some: any builder's read is the same.
        if (scope === 'mixed') return { name: null };
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
      case 'view-builds':
        return req.action === 'get' && viewRuleMatches(rule, await look.read()) ? NO_OWNER : null;
    }
  }
}
