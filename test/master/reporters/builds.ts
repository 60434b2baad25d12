// What the reporters' tests share: a configuration with a passing and a failing builder on
// one worker (each test appends its `reporters:`), and a request for a build of either.
import { addBuildset, findBuilderId, transact } from '../../../services/core/data/index.js';
import type { Stage } from '../in-process.js';

export const BUILDERS = `
log_compression: none
title: Widgets CI
buildbotURL: http://flotilla.test/
workers:
  - { name: w1, password: x, max_builds: 4 }
builders:
  - name: app
    workers: [w1]
    steps:
      - { type: shell, name: test, command: "echo ok" }
  - name: broken
    workers: [w1]
    steps:
      - { type: shell, name: compile, command: "exit 1" }
`;

export interface Requested {
  brid: number;
  builderid: number;
}

/** A build request for `builder`, on one source stamp of `repository` at `revision`. */
export async function requestBuild(
  stage: Stage,
  builder: 'app' | 'broken',
  source: { repository?: string; revision?: string } = {},
  properties: Record<string, readonly [unknown, string]> = {},
): Promise<Requested> {
  return transact(stage.ctx, async (tx) => {
    const builderid = (await findBuilderId(tx, builder, false))!;
    const added = await addBuildset(tx, {
      scheduler: 'force',
      sourcestamps: [
        {
          codebase: '',
          repository: source.repository ?? 'r',
          branch: 'main',
          revision: source.revision ?? 'abc',
          project: '',
        },
      ],
      reason: 'test',
      builderids: [builderid],
      properties,
    });
    return { brid: added.brids[builderid]!, builderid };
  });
}
