// Flotilla's own: the builds of many changes in one read, `/change_builds?changeid__in=...`,
// each build with the `changeid` it was caused by (a build whose build set holds several
// changed stamps comes once under each). Buildbot answers the builds of one change
// (`/changes/{id}/builds`), and a build carries no change, so a page of 25 changes made 25
// more reads (the grid 20 requests, the console 22, the changes page 26:
// load/results/web-pages.md). Unlisted: /application.spec stays Buildbot's.
import { changeBuildsFrom } from '../../../core/data/changes.js';
import { sql } from '../../../core/db/pool.js';
import { build as buildEntity } from '../../../core/entities/build.js';
import { field } from '../../../core/entities/field.js';
import { t } from '../../../core/entities/types.js';
import type { Endpoint, Resource } from '../model.js';

const changeBuild: Resource = {
  name: 'build',
  plural: 'builds',
  key: 'buildid',
  from: changeBuildsFrom(),
  fields: [...buildEntity.fields, field('changeid', t.integer, sql`a.changeid`, { sqlNullSemantics: true })],
  // Newest change first, as /changes; its builds newest first.
  defaultOrder: ['-changeid', '-buildid'],
};

export const changeBuildEndpoints: Endpoint[] = [
  {
    pattern: 'change_builds',
    resource: changeBuild,
    collection: true,
    kind: 'rows',
    scope: () => [],
    unlisted: true,
  },
];
