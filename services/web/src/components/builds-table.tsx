// Builds of several builders in one table (Home's latest finished, a worker's builds): the
// build by builder name and number, its result, state, when, and how long it took.
import { elapsed } from '../format.js';
import { timeText } from '../settings.js';
import type { Build } from '../types.js';
import { BuildLink, Result } from './common.js';

export function BuildsTable({
  builds,
  builderName,
  now,
  when,
}: {
  builds: readonly Build[];
  builderName: (id: number) => string;
  now: number;
  /** Which time the "when" column says: a list of finished builds says when each ended. */
  when: 'started' | 'finished';
}) {
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Build</th>
          <th scope="col">Result</th>
          <th scope="col">Status</th>
          <th scope="col">Took</th>
          <th scope="col">{when === 'started' ? 'Started' : 'Finished'}</th>
        </tr>
      </thead>
      <tbody>
        {builds.map((b) => (
          <tr key={b.buildid}>
            <td>
              <BuildLink b={b} builderName={builderName(b.builderid)} />
            </td>
            <td>
              <Result results={b.results} complete={b.complete} />
            </td>
            <td>{b.state_string}</td>
            <td class="num">{elapsed(b.started_at, b.complete_at, now)}</td>
            <td>{timeText(when === 'started' ? b.started_at : b.complete_at, now)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
