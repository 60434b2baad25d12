// Buildbot's Interpolate syntax in step commands and environments: %(prop:name)s, with
// %(prop:name:-default)s (default when unset or empty) and %(prop:name:~default)s (default
// when unset or false-ish); %% is a literal percent sign.

export type Properties = Record<string, readonly [unknown, string]>;

function text(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function interpolate(template: string, props: Properties): string {
  return template.replace(
    /%%|%\(prop:([^:)]+)(?::([-~])([^)]*))?\)s/g,
    (m, name?: string, op?: string, dflt?: string) => {
      if (m === '%%') return '%';
      const has = Object.hasOwn(props, name!);
      const v = has ? props[name!]![0] : undefined;
      if (op === '-') return has && v !== '' && v !== null ? text(v) : (dflt ?? '');
      if (op === '~') return has && v ? text(v) : (dflt ?? '');
      return text(v);
    },
  );
}
