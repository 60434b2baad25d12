// Projects (Buildbot 4.3): by id, by name, and all of them; `?active=true` lists those with a
// builder on a master, as Buildbot's active-projects filter does. The builders of a project
// are in builders.ts (`projects/n:projectid/builders`).
import { sql } from '../../../core/db/pool.js';
import { project as projectEntity } from '../../../core/entities/project.js';
import { type Endpoint, entityResource, type Resource } from '../model.js';

export const project: Resource = entityResource(projectEntity);

export const projectEndpoints: Endpoint[] = [
  {
    pattern: 'projects/n:projectid',
    resource: project,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.id = ${a.projectid}`],
  },
  {
    pattern: 'projects/i:projectname',
    resource: project,
    collection: false,
    kind: 'rows',
    scope: (a) => [sql`a.name = ${a.projectname}`],
  },
  {
    pattern: 'projects',
    resource: project,
    collection: true,
    kind: 'rows',
    scope: () => [],
    rootLink: 'projects',
  },
];
