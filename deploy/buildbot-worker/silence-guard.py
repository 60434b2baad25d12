# Flotilla: a buildbot-worker that stops a silent master's commands, and whose commands die
# with it.
#
# Append this file to a msgpack_experimental_v7 worker's buildbot.tac, then call it after the
# line that makes the Worker (`s = Worker(...)`), with the masters' worker_silence_seconds:
#
#     flotilla_silence_guard(s, silence_seconds=3.75)
#
# Why: buildbot-worker 3.7 over msgpack never pings its master, so a master that froze (a
# paused VM, a long stall) keeps its connection open for ever; and when a connection does end,
# the worker lets the commands that master started run on. Meanwhile the cluster expires the
# silent master and runs its build requests again, on this worker or another: the same
# request would run twice at once. Flotilla's own agent pings its master and kills that
# master's commands after worker_silence_seconds (services/master/liveness.ts); this does the
# same for buildbot-worker, so a master's timing rules hold for both kinds of worker:
# - autobahn (the worker's WebSocket library) pings the master four times per silence and
#   drops the connection when a ping goes unanswered for the silence: a frozen master's
#   connection ends within 1.25 silences of its last word;
# - when a connection ends, for whatever reason, the commands that connection started are
#   interrupted at once (the master asks for SIGKILL of the command's process group);
# - the worker then connects again, as it always does, to whichever master answers at its
#   address (a Service in front of the masters).
# - a command dies with its worker, even a kill -9 of it: without this a killed worker's
#   command runs on (in its own process group, the worker's child no more) while the master
#   runs its request again elsewhere. A small shell process, the reaper, holds the process
#   group of every running command, told over a pipe; the pipe's end of file is the worker's
#   death, however it died, and the reaper then kills every group it holds (as Flotilla's own
#   agent does: services/worker/reaper.ts).
# It uses the worker's classes as buildbot-worker 3.7 has them (autobahn's client options,
# the msgpack protocol's onClose, the bot's protocol_commands, RunProcess's _spawnProcess and
# its process protocol); other versions are untested.


def flotilla_silence_guard(worker, silence_seconds):
    from buildbot_worker.msgpack import BuildbotWebSocketClientProtocol
    from twisted.python import log

    silence = float(silence_seconds)
    worker.bf.setProtocolOptions(autoPingInterval=silence / 4, autoPingTimeout=silence)

    if getattr(BuildbotWebSocketClientProtocol, "_flotilla_guarded", False):
        return
    closed = BuildbotWebSocketClientProtocol.onClose

    def on_close(self, wasClean, code, reason):
        bot = self.factory.buildbot_bot
        for command_id, command in list(bot.protocol_commands.items()):
            if command.protocol is not self:
                continue
            log.msg("flotilla: the master's connection ended: interrupting command {0}".format(command_id))
            # Nothing more of it goes to a master: the one that started it is gone.
            command.builder_is_running = False
            try:
                command.command.doInterrupt()
            except Exception as e:
                log.msg("flotilla: could not interrupt command {0}: {1}".format(command_id, e))
        closed(self, wasClean, code, reason)

    BuildbotWebSocketClientProtocol.onClose = on_close
    BuildbotWebSocketClientProtocol._flotilla_guarded = True
    _flotilla_reap_commands()


# The reaper: it ignores the terminal's signals (a SIGTERM to the worker's whole group must not
# end it first), keeps the groups it is told of ("+pgid" when a command starts, "-pgid" when it
# has ended), and at end of file kills those left.
_FLOTILLA_REAPER = r'''
trap '' INT TERM HUP
groups=' '
while IFS= read -r line; do
  g=${line#?}
  case "$line" in
    +*) groups="$groups$g " ;;
    -*) case "$groups" in *" $g "*) groups="${groups%% $g *} ${groups#* $g }" ;; esac ;;
  esac
done
for g in $groups; do kill -9 "-$g" 2>/dev/null; done
'''


def _flotilla_reap_commands():
    import subprocess

    from buildbot_worker import runprocess
    from twisted.python import log

    reaper = {"proc": None}

    def tell(line):
        # Started with the first command, in the process that runs them (twistd may have forked
        # since the tac was read). The pipe is close-on-exec: commands never hold it open.
        try:
            if reaper["proc"] is None or reaper["proc"].poll() is not None:
                reaper["proc"] = subprocess.Popen(
                    ["/bin/sh", "-c", _FLOTILLA_REAPER], stdin=subprocess.PIPE, start_new_session=True
                )
            reaper["proc"].stdin.write((line + "\n").encode())
            reaper["proc"].stdin.flush()
        except Exception as e:
            log.msg("flotilla: the command reaper was not told {0}: {1}".format(line, e))

    spawn = runprocess.RunProcess._spawnProcess

    def spawn_reaped(self, processProtocol, *args, **kwargs):
        process = spawn(self, processProtocol, *args, **kwargs)
        # Only a command in a group of its own (useProcGroup, no PTY) can be killed as a group.
        group_class = getattr(runprocess, "ProcGroupProcess", None)
        if group_class is not None and isinstance(process, group_class) and process.pid:
            processProtocol._flotilla_group = process.pid
            tell("+{0}".format(process.pid))
        return process

    ended = runprocess.RunProcessPP.processEnded

    def process_ended(self, status_object):
        group = getattr(self, "_flotilla_group", None)
        if group:
            tell("-{0}".format(group))
        return ended(self, status_object)

    runprocess.RunProcess._spawnProcess = spawn_reaped
    runprocess.RunProcessPP.processEnded = process_ended
