// Settings (`#/settings`, as Buildbot's): this browser's preferences, saved as they change.
import { PAGE_SIZES, type Settings, saveSettings, useSettings, WATERFALL_SCALES } from '../settings.js';
import { useTitle } from '../title.js';

type Choosable = 'time' | 'theme';

// The preferences chosen among a few values, each a group of radio buttons.
const CHOICES: [name: Choosable, legend: string, options: [value: string, label: string][]][] = [
  [
    'time',
    'Times',
    [
      ['relative', 'Relative (5m ago)'],
      ['absolute', 'Absolute (UTC)'],
    ],
  ],
  [
    'theme',
    'Theme',
    [
      ['light', 'Light'],
      ['dark', 'Dark'],
    ],
  ],
];

export function SettingsPage() {
  useTitle('Settings');
  const s = useSettings();
  return (
    <main id="main" tabIndex={-1}>
      <h1>Settings</h1>
      <p class="muted">Kept in this browser; they apply at once, on every page.</p>
      <section class="card settings">
        {CHOICES.map(([name, legend, options]) => (
          <fieldset key={name}>
            <legend>{legend}</legend>
            {options.map(([v, label]) => (
              <label key={v}>
                <input
                  type="radio"
                  name={name}
                  checked={s[name] === v}
                  onChange={() => saveSettings({ [name]: v } as Partial<Settings>)}
                />{' '}
                {label}
              </label>
            ))}
          </fieldset>
        ))}
        <label>
          Rows per list page{' '}
          <select
            value={String(s.pageSize ?? '')}
            onChange={(e) => {
              const v = (e.target as HTMLSelectElement).value;
              saveSettings({ pageSize: v ? Number(v) : null });
            }}
          >
            <option value="">Each page's own</option>
            {PAGE_SIZES.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label>
          Waterfall scale{' '}
          <select
            value={String(s.waterfallScale)}
            onChange={(e) => saveSettings({ waterfallScale: Number((e.target as HTMLSelectElement).value) })}
          >
            {WATERFALL_SCALES.map((n) => (
              <option key={n} value={String(n)}>
                {n} px per minute
              </option>
            ))}
          </select>
        </label>
      </section>
    </main>
  );
}
