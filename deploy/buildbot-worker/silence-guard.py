# Flotilla: a buildbot-worker that stops a silent master's commands.
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
# It uses the worker's classes as buildbot-worker 3.7 has them (autobahn's client options,
# the msgpack protocol's onClose and the bot's protocol_commands); other versions are untested.


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
