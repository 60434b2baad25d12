// Try jobs delivered as `buildbot try --connect=ssh` delivers them: each job file made by
// Debian's own tryclient (createJobfile), fed to `buildbot tryserver --jobdir` (Buildbot's own
// command line, buildbot.scripts.runner), which writes it into tmp/ and renames it into new/.
// All of them in one Python process: the command's start costs some 3 s on a busy machine
// (`time buildbot tryserver --jobdir /tmp/none < /dev/null`), a job's own work a millisecond.
import { execFileSync } from 'node:child_process';

const DELIVER = `
import io, json, sys
from buildbot.clients.tryclient import createJobfile
from buildbot.scripts import runner
jobdir, jobs = json.load(sys.stdin)
for j in jobs:
    j['patch_body'] = j['patch_body'].encode('latin-1')
    sys.stdin = io.StringIO(createJobfile(**j))
    sys.argv = ['buildbot', 'tryserver', '--jobdir', jobdir]
    try:
        runner.run()
    except SystemExit as e:
        if e.code:
            raise
`;

export function deliverTryJobs(jobdir: string, jobs: readonly Record<string, unknown>[]): void {
  execFileSync('/usr/bin/python3', ['-c', DELIVER], { input: JSON.stringify([jobdir, jobs]) });
}
