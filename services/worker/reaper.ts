// No command outlives its agent, even a kill -9 of it. Each command runs in its own process
// group (command.ts); a small shell process, the reaper, holds the list of those groups and
// kills them all the moment the agent is gone. The agent tells it of each group over a pipe
// ("+pgid" when a command starts, "-pgid" once it is over); the pipe's end of file is the
// agent's death, however it died: the kernel closes a dead process's descriptors, so no
// signal, timer or poll is involved, and the reaper acts within milliseconds.
//
// Why not the parent-death signal alone (setpriv --pdeathsig): it reaches only the direct
// child, and a step's shell forks the real work (make, the test runner, `sleep`), which
// would be left running. Killing the group takes every one of them. A command that moves
// itself to another group or session (a daemon) escapes this as it escapes an interrupt.
//
// The pipe's write end is close-on-exec in the agent, so commands never hold it open. The
// reaper ignores the terminal's signals (a Ctrl-C or a SIGTERM sent to the agent's whole
// group): it must outlive the agent, and it ends only when its list has been dealt with.
import { type ChildProcess, spawn } from 'node:child_process';
import type { Logger } from '../core/telemetry/logger.js';

const SCRIPT = `
trap '' INT TERM HUP
groups=' '
while IFS= read -r line; do
  g=\${line#?}
  case "$line" in
    +*) groups="$groups$g " ;;
    -*) case "$groups" in *" $g "*) groups="\${groups%% $g *} \${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -9 "-$g" 2>/dev/null; done
`;

export class Reaper {
  private child: ChildProcess | null = null;
  private readonly groups = new Set<number>();
  private stopped = false;

  constructor(private readonly log?: Logger) {}

  /** Start the reaper process (again, with the groups it must know, if it ever died). */
  start(): void {
    const child = spawn('/bin/sh', ['-c', SCRIPT, 'flotilla-reaper'], {
      stdio: ['pipe', 'ignore', 'ignore'],
      detached: true,
    });
    this.child = child;
    child.stdin!.on('error', () => {});
    child.once('exit', (code, signal) => {
      if (this.child === child) this.child = null;
      if (this.stopped) return;
      this.log?.warn({ code, signal }, 'the command reaper ended; starting it again');
      this.start();
    });
    child.unref();
    for (const g of this.groups) this.send(`+${g}`);
  }

  private send(line: string): void {
    this.child?.stdin?.write(`${line}\n`);
  }

  /** A command's process group, to kill if the agent dies while it runs. */
  add(pgid: number): void {
    this.groups.add(pgid);
    this.send(`+${pgid}`);
  }

  /** The command is over: its group is no longer the reaper's business. */
  remove(pgid: number): void {
    if (this.groups.delete(pgid)) this.send(`-${pgid}`);
  }

  /** The agent is leaving on its own: whatever still runs goes now, as it would at its death. */
  stop(): void {
    this.stopped = true;
    this.child?.stdin?.end();
  }
}
