// Projects (Buildbot 4.3): each with its description, whether one of its builders runs on a
// master now, and its builders, which link to their pages. A configuration has a handful of
// projects, so the list is read whole; each project's builders are read by its own path.
import { getPage } from '../api.js';
import { ErrorBox, Loading } from '../components/common.js';
import { useLive } from '../live.js';
import { href } from '../router.js';
import { useTitle } from '../title.js';
import type { Builder, Project } from '../types.js';

const MAX_PROJECTS = 200;

function ProjectBuilders({ projectid }: { projectid: number }) {
  const builders = useLive(
    (s) =>
      getPage<Builder>(
        `projects/${projectid}/builders`,
        'builders',
        { order: 'name', limit: 100, field: ['builderid', 'name'] },
        s,
      ),
    [projectid],
    ['builders/*/*'],
  );
  if (builders.error) return <ErrorBox error={builders.error} what="reading its builders" />;
  if (!builders.data) return null;
  if (builders.data.items.length === 0) return <span class="muted">none</span>;
  return (
    <>
      {builders.data.items.map((b) => (
        <a key={b.builderid} class="chip" href={href(`/builders/${b.builderid}`)}>
          {b.name}
        </a>
      ))}
    </>
  );
}

export function ProjectsPage() {
  useTitle('Projects');
  const projects = useLive(
    (s) => getPage<Project>('projects', 'projects', { order: 'name', limit: MAX_PROJECTS }, s),
    [],
    ['builders/*/*'],
  );
  return (
    <main id="main" tabIndex={-1}>
      <h1>Projects</h1>
      <ErrorBox error={projects.error} what="reading projects" />
      <Loading when={!projects.data && !projects.error} />
      {projects.data && (
        <>
          <table class="projects">
            <thead>
              <tr>
                <th scope="col">Project</th>
                <th scope="col">State</th>
                <th scope="col">Builders</th>
              </tr>
            </thead>
            <tbody>
              {projects.data.items.map((p) => (
                <tr key={p.projectid}>
                  <th scope="row">
                    {p.name}
                    {p.description && <div class="muted small">{p.description}</div>}
                  </th>
                  <td>{p.active ? 'active' : 'no builder on a master'}</td>
                  <td>
                    <ProjectBuilders projectid={p.projectid} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {projects.data.items.length === 0 && <p class="muted">No project is configured.</p>}
        </>
      )}
    </main>
  );
}
