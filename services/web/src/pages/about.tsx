// About (`#/about`, as Buildbot's): which Flotilla this is (its version, fixed in the bundle
// at build time), what the server's `/config` says, and the size of the configuration.
// The counts are `meta.total` of a one-item page each, never a list.
import { getPage } from '../api.js';
import { ErrorBox, Loading, Section } from '../components/common.js';
import { useLive } from '../live.js';
import { useSession } from '../session.js';
import { useTitle } from '../title.js';
import { FLOTILLA_VERSION } from '../version.js';

const COUNTED: [path: string, key: string, label: string][] = [
  ['builders', 'builderid', 'Builders'],
  ['workers', 'workerid', 'Workers'],
  ['schedulers', 'schedulerid', 'Schedulers'],
  ['changesources', 'changesourceid', 'Change sources'],
  ['masters', 'masterid', 'Masters'],
];

export function AboutPage() {
  useTitle('About');
  const { config } = useSession();
  const counts = useLive(
    (s) =>
      Promise.all(
        COUNTED.map(([path, key]) => getPage(path, path, { limit: 1, field: [key] }, s).then((p) => p.total)),
      ),
    [],
    COUNTED.map(([path]) => `${path}/*/*`),
    1000,
  );
  return (
    <main id="main" tabIndex={-1}>
      <h1>About</h1>
      <Section title="Flotilla" id="about-flotilla">
        <table>
          <tbody>
            <tr>
              <th scope="row">Version</th>
              <td data-testid="flotilla-version">{FLOTILLA_VERSION}</td>
            </tr>
            <tr>
              <th scope="row">REST API</th>
              <td>
                <a href="api/v2">v2</a>
              </td>
            </tr>
          </tbody>
        </table>
      </Section>
      <Section title="Server settings (/config)" id="about-config">
        <Loading when={!config} />
        {config && (
          <table>
            <tbody>
              <tr>
                <th scope="row">Title</th>
                <td>{config.title}</td>
              </tr>
              <tr>
                <th scope="row">URL</th>
                <td>{config.buildbotURL}</td>
              </tr>
              <tr>
                <th scope="row">Login</th>
                <td>{config.auth.name}</td>
              </tr>
              <tr>
                <th scope="row">Several masters</th>
                <td>{config.multiMaster ? 'yes' : 'no'}</td>
              </tr>
              <tr>
                <th scope="row">Versions</th>
                <td>
                  {config.versions.length > 0 ? (
                    config.versions.map((v) => (Array.isArray(v) ? v.join(' ') : String(v))).join(', ')
                  ) : (
                    <span class="muted">none reported by the server</span>
                  )}
                </td>
              </tr>
            </tbody>
          </table>
        )}
      </Section>
      <Section title="Configuration" id="about-configuration">
        <ErrorBox error={counts.error} what="counting the configuration" />
        <Loading when={!counts.data && !counts.error} />
        {counts.data && (
          <table>
            <tbody>
              {COUNTED.map(([path, , label], i) => (
                <tr key={path}>
                  <th scope="row">{label}</th>
                  <td class="num">{counts.data![i]}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </main>
  );
}
