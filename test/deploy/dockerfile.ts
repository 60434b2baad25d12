// deploy/Dockerfile read into its stages, for the tests that check it without Docker.
// Only the instructions the file uses are understood; anything else fails the parse, so a
// new instruction gets a thought in the tests too.
import { readFileSync } from 'node:fs';

export interface Instruction {
  op:
    | 'ARG'
    | 'FROM'
    | 'WORKDIR'
    | 'COPY'
    | 'RUN'
    | 'ENV'
    | 'USER'
    | 'EXPOSE'
    | 'ENTRYPOINT'
    | 'CMD'
    | 'HEALTHCHECK';
  args: string;
}

export interface Stage {
  name: string;
  /** The image or the earlier stage it starts from (ARGs expanded). */
  from: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  args: Record<string, string>;
  stages: Stage[];
  stage(name: string): Stage;
}

const OPS = new Set([
  'ARG',
  'FROM',
  'WORKDIR',
  'COPY',
  'RUN',
  'ENV',
  'USER',
  'EXPOSE',
  'ENTRYPOINT',
  'CMD',
  'HEALTHCHECK',
]);

export function readDockerfile(path = 'deploy/Dockerfile'): Dockerfile {
  // Continuation lines joined, comments and blank lines dropped.
  const logical: string[] = [];
  let acc = '';
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.trim();
    if (acc === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      acc += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(acc + line);
    acc = '';
  }
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logical) {
    const m = /^([A-Z]+)\s+(.*)$/.exec(line);
    if (!m || !OPS.has(m[1]!)) throw new Error(`unexpected Dockerfile line: ${line}`);
    const op = m[1] as Instruction['op'];
    const rest = m[2]!.trim();
    if (op === 'ARG' && stages.length === 0) {
      const [k, v] = rest.split('=', 2);
      args[k!] = v ?? '';
      continue;
    }
    if (op === 'FROM') {
      const f = /^(\S+)\s+AS\s+(\S+)$/.exec(rest);
      if (!f) throw new Error(`every stage is named: ${line}`);
      const from = f[1]!.replace(/^\$\{(\w+)\}$/, (_, k: string) => args[k] ?? '');
      stages.push({ name: f[2]!, from, instructions: [] });
      continue;
    }
    if (stages.length === 0) throw new Error(`instruction before FROM: ${line}`);
    stages.at(-1)!.instructions.push({ op, args: rest });
  }
  return {
    args,
    stages,
    stage(name) {
      const s = stages.find((x) => x.name === name);
      if (!s) throw new Error(`no stage ${name}`);
      return s;
    },
  };
}

/** A stage and the stages it is built on, base first. */
export function lineage(df: Dockerfile, name: string): Stage[] {
  const s = df.stage(name);
  const parent = df.stages.find((x) => x.name === s.from);
  return parent ? [...lineage(df, parent.name), s] : [s];
}

/** Every instruction of one kind that applies to a stage, its ancestors' first. */
export function effective(df: Dockerfile, name: string, op: Instruction['op']): string[] {
  return lineage(df, name).flatMap((s) => s.instructions.filter((i) => i.op === op).map((i) => i.args));
}

/** ENV of a stage (with its ancestors'), as a map. Only the `K=V K=V` form is used. */
export function stageEnv(df: Dockerfile, name: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of effective(df, name, 'ENV')) {
    for (const pair of line.split(/\s+/)) {
      const [k, v] = pair.split('=', 2);
      if (v === undefined) throw new Error(`ENV ${line}: use K=V`);
      env[k!] = v;
    }
  }
  return env;
}

/** The apt packages a stage (and its ancestors) install. */
export function aptPackages(df: Dockerfile, name: string): string[] {
  return effective(df, name, 'RUN').flatMap((run) =>
    [...run.matchAll(/apt-get install\s+((?:-\S+\s+)*)([^&|;]+)/g)].flatMap((m) => m[2]!.trim().split(/\s+/)),
  );
}

export interface Copy {
  from: string | null;
  sources: string[];
  dest: string;
}

export function copies(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.op === 'COPY')
    .map((i) => {
      const words = i.args.split(/\s+/);
      let from: string | null = null;
      while (words[0]?.startsWith('--')) {
        const flag = words.shift()!;
        if (flag.startsWith('--from=')) from = flag.slice('--from='.length);
      }
      return { from, sources: words.slice(0, -1), dest: words.at(-1)! };
    });
}

/** The stages a build of `target` runs: the target's lineage and every stage it copies from. */
export function stagesNeeded(df: Dockerfile, target: string): string[] {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    for (const s of lineage(df, name)) {
      seen.add(s.name);
      for (const c of copies(s)) if (c.from) visit(c.from);
    }
  };
  visit(target);
  return [...seen];
}
