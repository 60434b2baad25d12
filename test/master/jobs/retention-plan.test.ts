// How the retention section resolves per builder (pure logic): a builder's override wins,
// then the longest of its tags', then the global value; a build horizon bounds the horizons
// of what a build holds; durations and their errors.
import { describe, expect, it } from 'vitest';
import { horizonSeconds, retention } from '../../../services/core/config/master-config/retention.js';
import { retentionConfigured } from '../../../services/master/jobs/retention.js';
import { builderPlan, plansAnything } from '../../../services/master/jobs/retention-plan.js';

const DAY = 86_400;

describe('retention plans', () => {
  const config = retention.parse({
    logHorizon: '30d',
    build_horizon: '365d',
    max_builds: 1000,
    builders: { nightly: { logHorizon: 'forever', max_builds: 'forever' }, tiny: { build_horizon: '7d' } },
    tags: { release: { logHorizon: '90d' }, audit: { logHorizon: '2w' }, keep: { logHorizon: 'forever' } },
  });
  const plan = (name: string, tags: string[] = []) => builderPlan(config, { id: 1, name, tags });

  it('takes the global values for a builder without overrides', () => {
    expect(plan('plain')).toEqual({
      builderid: 1,
      logs: 30 * DAY,
      artifacts: 365 * DAY,
      buildData: 365 * DAY,
      builds: 365 * DAY,
      maxBuilds: 1000,
    });
  });

  it("lets a builder's own override win over its tags'", () => {
    // Its logs kept forever are still bounded by the build horizon: the build goes whole.
    expect(plan('nightly', ['audit'])).toMatchObject({ logs: 365 * DAY, maxBuilds: null });
  });

  it('keeps the longest of the tags, forever longest of all', () => {
    expect(plan('x', ['release', 'audit']).logs).toBe(90 * DAY);
    expect(plan('x', ['release', 'keep']).logs).toBe(365 * DAY);
    const logsOnly = retention.parse({ logHorizon: '1d', tags: { keep: { logHorizon: 'forever' } } });
    expect(builderPlan(logsOnly, { id: 1, name: 'x', tags: ['keep', 'other'] }).logs).toBeNull();
  });

  it('bounds the horizons of logs, artifacts and build data by the build horizon', () => {
    expect(plan('tiny')).toMatchObject({
      logs: 7 * DAY,
      artifacts: 7 * DAY,
      buildData: 7 * DAY,
      builds: 7 * DAY,
    });
  });

  it('plans nothing when nothing is configured', () => {
    const none = retention.parse({});
    expect(retentionConfigured(none)).toBe(false);
    expect(plansAnything(builderPlan(none, { id: 1, name: 'b', tags: [] }))).toBe(false);
    expect(retentionConfigured(retention.parse({ tags: { t: { max_builds: 5 } } }))).toBe(true);
  });

  it('reads durations with units and refuses others', () => {
    expect(horizonSeconds('90s')).toBe(90);
    expect(horizonSeconds('12h')).toBe(12 * 3600);
    expect(horizonSeconds(600)).toBe(600);
    expect(horizonSeconds('forever')).toBeNull();
    for (const bad of ['30 days', '0', -5, '1y', 0])
      expect(retention.safeParse({ logHorizon: bad }).success).toBe(false);
    expect(retention.safeParse({ max_builds: 0 }).success).toBe(false);
    expect(retention.safeParse({ logHorzon: '1d' }).success).toBe(false);
  });
});
