#!/usr/bin/env python3
"""Write Flotilla's YAML configuration from a Buildbot master.cfg.

    npm run import-buildbot-config -- path/to/master.cfg > master.yaml

Run it with the python3 that has Buildbot installed (where the Buildbot master runs). The
master.cfg is loaded as Buildbot loads it (buildbot.config.master: loadConfigDict runs the file,
MasterConfig.loadFromDict checks it), then its objects are read: Buildbot keeps the constructor
arguments of its services (workers, schedulers, change sources, reporters: _config_args and
_config_kwargs) and of every step (the step factory a BuildFactory holds). Change filters keep
no arguments, so their constructor is wrapped while master.cfg runs to record them.

Every setting with a Flotilla form is written. Every other one is a loss: its place (builder,
step number, name), what it is, and what to do instead, written on stderr and as a comment block
at the end of the YAML. Nothing is dropped silently. Exit status: 0 when written (losses or
not), 2 when master.cfg does not load in Buildbot.
"""
import os
import re
import sys

import yaml
from buildbot.changes import filter as changefilter
from buildbot.config.errors import ConfigErrors
from buildbot.config.master import MasterConfig, loadConfigDict
from buildbot.process import properties as bbprops
from buildbot.util import bytes2unicode, safeTranslate

IDENT = re.compile(r'^[a-zA-Z_-][.a-zA-Z0-9_-]*$')


class Losses:
    """What could not be written: place, what it is, what to do instead."""

    def __init__(self):
        self.items = []

    def add(self, place, what, instead):
        self.items.append({'place': place, 'what': what, 'instead': instead})

    def lines(self):
        return [f"{i['place']}: {i['what']} -> {i['instead']}" for i in self.items]


def record_arguments():
    """Schedulers and change (and source stamp) filters keep no copy of their constructor's arguments: while master.cfg
    runs, each one made records them (args, kwargs) as it is created, before any __init__ runs."""
    from buildbot.schedulers.base import BaseScheduler
    from buildbot.util.ssfilter import SourceStampFilter

    def recording(cls, *args, **kwargs):
        obj = object.__new__(cls)
        obj._flotilla_import = (args, dict(kwargs))
        return obj

    for cls in (BaseScheduler, changefilter.ChangeFilter, SourceStampFilter):
        cls.__new__ = recording


class Buildbot4Project:
    """Buildbot 4's util.Project, which Debian's Buildbot 3.7 lacks: its arguments, to be written as projects:."""

    def __init__(self, name, slug=None, description=None, description_format=None):
        self.name, self.slug, self.description, self.description_format = name, slug, description, description_format


class Buildbot4Codebase:
    """Buildbot 4.3's util.Codebase, which Debian's Buildbot 3.7 lacks: its arguments, to be written as codebases:."""

    def __init__(self, name, project, slug=None):
        self.name, self.project, self.slug = name, project, slug


def buildbot4_stand_ins():
    """What a Buildbot 4.3 master.cfg says of projects and codebases, which Buildbot 3.7 cannot load: util.Project and
    util.Codebase are given stand-ins that keep their arguments, BuilderConfig takes project= and GitPoller takes
    codebase= (each kept beside the object), and c['projects'] and c['codebases'] are taken out of the dictionary
    before Buildbot checks its keys (main). Buildbot 3.7's own classes and checks are otherwise untouched."""
    import buildbot.util as bbutil
    from buildbot.changes.gitpoller import GitPoller
    from buildbot.config.builder import BuilderConfig
    from buildbot.plugins import util as plugin_util

    for namespace in (plugin_util, bbutil):
        for name, cls in (('Project', Buildbot4Project), ('Codebase', Buildbot4Codebase)):
            if not hasattr(namespace, name):
                setattr(namespace, name, cls)

    def keeping(cls, key, attribute):
        original = cls.__init__

        def init(self, *args, **kwargs):
            kept = kwargs.pop(key, None)
            original(self, *args, **kwargs)
            setattr(self, attribute, kept)

        cls.__init__ = init

    if 'project' not in BuilderConfig.__init__.__code__.co_varnames:
        keeping(BuilderConfig, 'project', '_flotilla_project')
    if 'codebase' not in GitPoller.checkConfig.__code__.co_varnames:
        keeping(GitPoller, 'codebase', '_flotilla_codebase')


def arguments(obj):
    return getattr(obj, '_flotilla_import', ((), {}))


def named(obj):
    """A Python object's name for the loss list: a function, a class, or the class of an instance.
    What master.cfg itself defines has no module of its own: it is said to be from master.cfg."""
    def where(module, name):
        return f'{name} (defined in master.cfg)' if module in (None, 'builtins') else f'{module}.{name}'
    if isinstance(obj, type):
        return f'class {where(obj.__module__, obj.__qualname__)}'
    if callable(obj) and hasattr(obj, '__qualname__'):
        return f'Python callable {where(obj.__module__, obj.__qualname__)}'
    t = type(obj)
    return f'{where(t.__module__, t.__qualname__)} object'


class Unrenderable(Exception):
    pass


def escape(text):
    """A literal string in Flotilla is a template: its percent signs are doubled."""
    return text.replace('%', '%%')


def prop_form(p):
    if p.default is None:
        return f'%(prop:{p.key})s'
    if isinstance(p.default, (str, int, float)):
        # Property's default replaces a false value too unless defaultWhenFalse=False: `~`, else `-`.
        op = '~' if p.defaultWhenFalse else '-'
        return f'%(prop:{p.key}:{op}{escape(str(p.default))})s'
    raise Unrenderable(f'util.Property({p.key!r}) with a default of type {type(p.default).__name__}')


def render(value):
    """A Buildbot value as Flotilla writes it: Interpolate, Property and Secret become templates."""
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, bbprops.Interpolate):
        if value.args:
            raise Unrenderable('util.Interpolate with positional arguments')
        if value.kwargs:
            kw = {}
            for k, v in value.kwargs.items():
                if not isinstance(v, (str, int, float, bool)) or v is None:
                    raise Unrenderable(f'util.Interpolate keyword {k} of type {type(v).__name__}')
                kw[k] = v
            return {'interpolate': value.fmtstring, 'kw': kw}
        return value.fmtstring
    if isinstance(value, bbprops.Property):
        return prop_form(value)
    if isinstance(value, bbprops.Secret):
        return f'%(secret:{value.secret_name})s'
    if isinstance(value, (list, tuple)):
        return [render(v) for v in value]
    if isinstance(value, dict):
        return {str(k): render(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise Unrenderable(named(value))


def plain(value, data_only=False):
    """A property value (no templates in Buildbot's plain values): kept as is when it is data; a
    renderable in it is written as a template, or (data_only) raises Unrenderable."""
    if isinstance(value, (list, tuple)):
        return [plain(v, data_only) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v, data_only) for k, v in value.items()}
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if data_only:
        raise Unrenderable(named(value))
    return render(value)


def pb_port_number(port):
    """The TCP port of a Buildbot port setting (an int, '9989' or a strport 'tcp:9989:...')."""
    if isinstance(port, int):
        return port
    if isinstance(port, str):
        parts = port.split(':')
        for part in (parts[1:2] if parts[0] == 'tcp' else parts[:1]):
            if part.isdigit():
                return int(part)
    return None


class Importer:
    def __init__(self, config_dict, master, buildbot4=None):
        self.raw = config_dict
        self.m = master
        # c['projects'] and c['codebases'] of a Buildbot 4 master.cfg (main takes them out).
        self.buildbot4 = buildbot4 or {}
        self.losses = Losses()
        self.locks = {}
        self.out = {}
        self.skipped_builders = set()

    # ------------------------------------------------------------------ helpers
    def put(self, target, key, value, place, what):
        """target[key] = render(value), or a loss naming what could not be rendered."""
        try:
            target[key] = render(value)
        except Unrenderable as e:
            self.losses.add(place, f'{what}: {e}', 'write it as a util.Interpolate string, or set it in YAML by hand')

    def properties(self, entry, props, place):
        out = {}
        for key, value in props.items():
            try:
                out[key] = plain(value)
            except Unrenderable as e:
                self.losses.add(place, f'property {key}: {e}', 'give it a plain value')
        if out:
            entry['properties'] = out

    def lock_access(self, access, place):
        from buildbot import locks as bblocks
        lock, mode, count = access, 'counting', 1
        if isinstance(access, bblocks.LockAccess):
            lock, mode, count = access.lockid, access.mode, access.count
        if not isinstance(lock, (bblocks.MasterLock, bblocks.WorkerLock)):
            self.losses.add(place, f'lock {named(lock)}', 'use a util.MasterLock or util.WorkerLock')
            return None
        kind = 'master' if isinstance(lock, bblocks.MasterLock) else 'worker'
        entry = {'name': lock.name, 'type': kind, 'maxCount': lock.maxCount}
        if kind == 'worker' and lock.maxCountForWorker:
            entry['maxCountForWorker'] = dict(lock.maxCountForWorker)
        self.locks.setdefault(lock.name, entry)
        if mode == 'counting' and count == 1:
            return lock.name
        return {'lock': lock.name, 'mode': mode, 'count': count}

    def locks_of(self, accesses, place):
        return [a for a in (self.lock_access(x, place) for x in accesses or []) if a is not None]

    # ------------------------------------------------------------------ global
    def globals(self):
        raw, out = self.raw, self.out
        out['title'] = self.m.title
        out['buildbotURL'] = self.m.buildbotURL
        for key in ('titleURL', 'buildbotNetUsageData'):
            if key in raw:
                out[key] = raw[key]
        if 'logCompressionMethod' in raw:
            method = {'gz': 'gzip', 'raw': 'none', 'zstd': 'zstd'}.get(self.m.logCompressionMethod)
            if method:
                out['log_compression'] = method
            else:
                self.losses.add("c['logCompressionMethod']", f'method {self.m.logCompressionMethod!r}',
                                'Flotilla compresses with gzip, zstd or none: choose one')
        db_url = (self.m.db or {}).get('db_url')
        if 'db' in raw or 'db_url' in raw:
            self.losses.add("c['db']", f'db_url {db_url!r}',
                            'set DATABASE_URL in the environment of the masters and API pods to a PostgreSQL URL')
        if raw.get('properties'):
            self.properties(out, raw['properties'], "c['properties']")
        if 'collapseRequests' in raw and not isinstance(raw['collapseRequests'], bool):
            self.losses.add("c['collapseRequests']", named(raw['collapseRequests']),
                            'collapse_requests is true or false per builder in Flotilla')
        handled = {'title', 'titleURL', 'buildbotURL', 'buildbotNetUsageData', 'logCompressionMethod', 'db',
                   'db_url', 'properties', 'collapseRequests', 'workers', 'builders', 'schedulers',
                   'change_source', 'services', 'www', 'protocols', 'secretsProviders'}
        for key in sorted(set(raw) - handled):
            self.losses.add(f"c[{key!r}]", f'setting {key}', 'no Flotilla form: see docs/compatibility.md')
        self.secret_providers()

    def secret_providers(self):
        """c['secretsProviders']: SecretInAFile, SecretInPass and SecretInVault have Flotilla forms;
        the passphrase and the token are read from the environment, never written in the YAML."""
        from buildbot.secrets.providers.file import SecretInAFile
        from buildbot.secrets.providers.passwordstore import SecretInPass
        from buildbot.secrets.providers.vault import HashiCorpVaultSecretProvider
        out = []
        for i, provider in enumerate(self.m.secretsProviders or []):
            place = f"c['secretsProviders'][{i}]"
            args, kwargs = tuple(getattr(provider, '_config_args', ())), dict(getattr(provider, '_config_kwargs', {}))
            if isinstance(provider, SecretInAFile):
                names = ('dirname', 'suffixes', 'strip')
                given = {**dict(zip(names, args)), **kwargs}
                entry = {'type': 'directory', 'dirname': given['dirname']}
                if given.get('suffixes'):
                    entry['suffixes'] = list(given['suffixes'])
                if given.get('strip', True) is False:
                    entry['strip'] = False
            elif isinstance(provider, SecretInPass):
                given = {**dict(zip(('gpgPassphrase', 'dirname'), args)), **kwargs}
                entry = {'type': 'pass'}
                if given.get('dirname'):
                    entry['dirname'] = given['dirname']
                if given.get('gpgPassphrase'):
                    entry['gpgPassphrase_env'] = self.hook_secret(place, 'gpgPassphrase', given['gpgPassphrase'],
                                                                  'PASS_GPG_PASSPHRASE', "masters'")
            elif isinstance(provider, HashiCorpVaultSecretProvider):
                given = {**dict(zip(('vaultServer', 'vaultToken', 'secretsmount', 'apiVersion'), args)), **kwargs}
                entry = {'type': 'vault', 'vaultServer': given['vaultServer'],
                         'vaultToken_env': self.hook_secret(place, 'vaultToken', given.get('vaultToken'),
                                                            'VAULT_TOKEN', "masters'")}
                if given.get('secretsmount'):
                    entry['secretsmount'] = given['secretsmount']
                if given.get('apiVersion', 1) != 1:
                    entry['apiVersion'] = given['apiVersion']
            else:
                self.losses.add(place, named(provider),
                                'no secret provider of this kind: see docs/migrating-from-buildbot.md')
                continue
            out.append(entry)
        if out:
            self.out['secrets'] = out

    def auth(self, auth):
        """c['www']['auth']: HTPasswdAuth, RemoteUserAuth and the OAuth2 logins have Flotilla forms."""
        from buildbot.www.auth import HTPasswdAuth, RemoteUserAuth
        from buildbot.www.oauth2 import GitHubAuth, GitLabAuth, GoogleAuth
        place = "c['www']['auth']"
        if isinstance(auth, HTPasswdAuth):
            path = auth.checkers[0].filename
            self.out.setdefault('auth', {})['htpasswd_file'] = bytes2unicode(path)
            # Twisted's FilePasswordDB, as HTPasswdAuth uses it, compares plain text.
            self.losses.add(place, f'HTPasswdAuth({bytes2unicode(path)!r}): its lines hold plain passwords for Buildbot',
                            'hash each with htpasswd -B (Flotilla takes bcrypt, $apr1$ or {SHA} lines only)')
        elif isinstance(auth, RemoteUserAuth):
            entry = {'header': bytes2unicode(auth.header),
                     'headerRegex': bytes2unicode(auth.headerRegex.pattern),
                     'trusted_proxies': ['127.0.0.1']}
            self.out.setdefault('auth', {})['remote_user'] = entry
            self.losses.add(place, 'RemoteUserAuth believes the header from any client',
                            "set auth.remote_user.trusted_proxies to your proxy's addresses (written: 127.0.0.1)")
        elif isinstance(auth, (GitHubAuth, GitLabAuth, GoogleAuth)):
            self.oauth2(auth, place)
        else:
            self.losses.add(place, named(auth), 'configure auth: in YAML by hand (docs/migrating-from-buildbot.md)')

    def oauth2(self, auth, place):
        """GitHubAuth, GitLabAuth, GoogleAuth: auth.oauth2, the client secret from the environment."""
        from buildbot.www.oauth2 import GitHubAuth, GitLabAuth
        entry = {}
        if isinstance(auth, GitHubAuth):
            entry['provider'] = 'github'
            if auth.serverURL and auth.serverURL != 'https://api.github.com':
                entry['serverURL'] = auth.serverURL
            if auth.apiVersion != 3:
                entry['apiVersion'] = auth.apiVersion
            if auth.getTeamsMembership:
                entry['getTeamsMembership'] = True
            if auth.debug:
                self.losses.add(place, 'GitHubAuth debug=True',
                                "the GraphQL queries and answers are not logged; a refused login's reason is (API pods' log)")
        elif isinstance(auth, GitLabAuth):
            entry['provider'] = 'gitlab'
            entry['instanceUri'] = auth.authUri[:-len('/oauth/authorize')]
        else:
            entry['provider'] = 'google'
        if isinstance(auth.clientId, str):
            entry['clientId'] = auth.clientId
        else:
            entry['clientId'] = 'CLIENT_ID'
            self.losses.add(place, f'clientId {named(auth.clientId)}', 'write the client id as auth.oauth2.clientId')
        entry['clientSecret_env'] = self.hook_secret(place, 'clientSecret', auth.clientSecret, 'OAUTH2_CLIENT_SECRET')
        if auth.autologin:
            entry['autologin'] = True
        self.out.setdefault('auth', {})['oauth2'] = entry

    def protocols(self):
        protos = dict(self.m.protocols or {})
        out = {}
        for name, conf in protos.items():
            port = (conf or {}).get('port')
            if name == 'msgpack_experimental_v7':
                out[name] = {'port': port}
            elif name == 'pb':
                # The workers keep their protocol and port; Flotilla's own agents, which
                # listen on 9989 unless told otherwise, move to the next port.
                out['pb'] = {'port': port}
                if pb_port_number(port) == 9989 and 'flotilla' not in out:
                    out['flotilla'] = {'port': 9990}
            else:
                self.losses.add(f"c['protocols'][{name!r}]", f'protocol {name}', 'no such protocol in Flotilla')
        if out:
            self.out['protocols'] = out

    def www(self):
        www = self.raw.get('www') or {}
        out = {}
        for key in ('port', 'plugins'):
            if key in www:
                out[key] = www[key] if isinstance(www[key], (str, int, dict, list)) else str(www[key])
        if 'allowed_origins' in www:
            out['allowed_origins'] = list(www['allowed_origins'])
        if 'auth' in www:
            self.auth(www['auth'])
        if 'authz' in www:
            self.losses.add("c['www']['authz']", named(www['authz']),
                            'configure auth: in YAML by hand (docs/migrating-from-buildbot.md)')
        if 'change_hook_dialects' in www:
            self.change_hooks(www['change_hook_dialects'] or {})
        if 'change_hook_auth' in www:
            self.losses.add("c['www']['change_hook_auth']", 'credentials of the change hooks',
                            'change_hooks.base.auth: {username, password_env or password_file}')
        handled = {'port', 'plugins', 'allowed_origins', 'auth', 'authz', 'change_hook_dialects', 'change_hook_auth'}
        for key in sorted(set(www) - handled):
            self.losses.add(f"c['www'][{key!r}]", f'www setting {key}', 'no Flotilla form')
        if out:
            self.out['www'] = out

    def hook_secret(self, place, what, secret, env, pods="API pods'"):
        """A hook's secret (or token): Flotilla reads it from the environment or a file, never from
        the YAML, so the variable is named and setting it is listed as the step left to do."""
        shown = (f'util.Secret({secret.secret_name!r})' if isinstance(secret, bbprops.Secret)
                 else '(a string)' if isinstance(secret, str) else named(secret))
        self.losses.add(place, f'{what} {shown}', f"set {env} in the {pods} environment to it")
        return env

    def change_hooks(self, dialects):
        """Buildbot's change_hook_dialects: base, github, gitlab and bitbucket have Flotilla forms."""
        out = {}
        for name, options in dialects.items():
            place = f"c['www']['change_hook_dialects'][{name!r}]"
            options = dict(options) if isinstance(options, dict) else {}
            hook = {}
            if name == 'base':
                hook['enabled'] = True
            elif name == 'github':
                if options.get('secret') is not None:
                    hook['secret_env'] = self.hook_secret(place, 'secret', options.pop('secret'),
                                                          'GITHUB_HOOK_SECRET')
                    # With a secret, Flotilla checks every signature: Buildbot's strict.
                    options.pop('strict', None)
                if options.get('token') is not None:
                    hook['token_env'] = self.hook_secret(place, 'token', options.pop('token'), 'GITHUB_API_TOKEN')
                for key in ('codebase', 'github_api_endpoint', 'pullrequest_ref'):
                    if isinstance(options.get(key), str):
                        hook[key] = options.pop(key)
                for key in ('skips', 'github_property_whitelist'):
                    value = options.get(key)
                    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                        hook[key] = list(options.pop(key))
                # Buildbot's defaults, which are Flotilla's behaviour (it always checks TLS).
                for key, default in (('debug', False), ('verify', False), ('verify', True)):
                    if key in options and options[key] == default:
                        options.pop(key)
                for key in ('skips', 'github_property_whitelist', 'token', 'secret', 'strict'):
                    if key in options and options[key] is None:
                        options.pop(key)
            elif name == 'gitlab':
                if options.get('secret') is not None:
                    hook['secret_env'] = self.hook_secret(place, 'secret', options.pop('secret'),
                                                          'GITLAB_HOOK_TOKEN')
            elif name != 'bitbucket':
                self.losses.add(place, f'change hook dialect {name}', 'no such dialect in Flotilla yet')
                continue
            for key in sorted(options):
                shown = named(options[key]) if callable(options[key]) else repr(options[key])
                self.losses.add(place, f'option {key}={shown}', 'no Flotilla form')
            out[name] = hook
        if out:
            self.out['change_hooks'] = out

    # ------------------------------------------------------------------ workers
    def workers(self):
        out = []
        for w in self.m.workers:
            place = f'worker {w.name}'
            args, kwargs = list(w._config_args), dict(w._config_kwargs)
            entry = {'name': w.name}
            password = args[1] if len(args) > 1 else kwargs.pop('password', None)
            kwargs.pop('name', None)
            if isinstance(password, str):
                entry['password'] = password
            else:
                entry['password_env'] = f'WORKER_{re.sub(r"[^A-Z0-9]", "_", w.name.upper())}_PASSWORD'
                self.losses.add(place, f'password {named(password)}',
                                f'set the environment variable {entry["password_env"]}')
            max_builds = kwargs.pop('max_builds', None)
            if max_builds is not None:
                entry['max_builds'] = max_builds
            else:
                # Unlimited in Buildbot; a builder runs one build at a time on a worker there, so
                # as many builds as builders that use the worker is the same limit.
                entry['max_builds'] = max(1, sum(1 for b in self.m.builders if w.name in b.workernames))
            props = kwargs.pop('properties', None)
            if props:
                self.properties(entry, props, place)
            for key in sorted(kwargs):
                self.losses.add(place, f'Worker argument {key}={kwargs[key]!r}', 'no Flotilla form')
            if not IDENT.match(w.name):
                self.losses.add(place, 'name is not an identifier', 'rename the worker')
            out.append(entry)
        self.out['workers'] = out

    # ------------------------------------------------------------------ steps
    COMMON = ('name', 'description', 'descriptionDone', 'descriptionSuffix', 'haltOnFailure', 'flunkOnFailure',
              'warnOnFailure', 'flunkOnWarnings', 'warnOnWarnings', 'timeout')
    SHELL = ('command', 'workdir', 'env', 'logfiles', 'lazylogfiles', 'maxTime', 'interruptSignal', 'sigtermTime',
             'decodeRC')
    GIT = ('repourl', 'branch', 'codebase', 'mode', 'method', 'submodules', 'remoteSubmodules', 'shallow',
           'retryFetch', 'clobberOnFailure', 'retry', 'getDescription', 'progress', 'reference', 'origin', 'config',
           'alwaysUseLatest', 'workdir', 'env')

    WARNINGS = ('warningPattern', 'warningExtractor', 'maxWarnCount', 'directoryEnterPattern',
                'directoryLeavePattern', 'suppressionFile', 'suppressionList')
    # Keys whose value is a template in Flotilla (a plain string is written escaped).
    RENDERED = ('set_properties', 'env', 'command', 'repourl', 'branch', 'workdir', 'logfiles', 'dir', 'src',
                'dest', 'suppressionFile')
    # What each kind's positional arguments are, in Buildbot's order.
    POSITIONAL = {'shell': ('command',), 'set_property': ('command',), 'git': ('repourl',),
                  'trigger': ('schedulerNames',), 'warning_counting_shell': ('warningPattern',),
                  'compile': ('warningPattern',), 'test': ('warningPattern',),
                  'set_property_value': ('property', 'value'), 'remove_directory': ('dir',),
                  'make_directory': ('dir',), 'copy_directory': ('src', 'dest'), 'shell_sequence': ('commands',),
                  'master_shell': ('command',)}

    def step_kinds(self):
        from buildbot.steps import master, shell, shellsequence, trigger, worker
        from buildbot.steps.source import git
        return {shell.ShellCommand: ('shell', self.SHELL),
                shell.SetPropertyFromCommand: ('set_property', self.SHELL + ('property', 'strip')),
                trigger.Trigger: ('trigger', ('schedulerNames', 'waitForFinish', 'set_properties', 'copy_properties',
                                              'updateSourceStamp', 'alwaysUseLatest', 'sourceStamps')),
                git.Git: ('git', self.GIT),
                shell.WarningCountingShellCommand: ('warning_counting_shell', self.SHELL + self.WARNINGS),
                shell.Compile: ('compile', self.SHELL + self.WARNINGS),
                shell.Test: ('test', self.SHELL + self.WARNINGS),
                master.SetProperty: ('set_property_value', ('property', 'value')),
                worker.RemoveDirectory: ('remove_directory', ('dir',)),
                worker.MakeDirectory: ('make_directory', ('dir',)),
                worker.CopyDirectory: ('copy_directory', ('src', 'dest', 'maxTime')),
                shellsequence.ShellSequence: ('shell_sequence', ('commands',) + self.SHELL[1:]),
                master.MasterShellCommand: ('master_shell', ('command', 'env', 'workdir', 'interruptSignal'))}

    @staticmethod
    def pattern(value):
        """A warning pattern as Flotilla takes it: Python's expression text, its flags written inline."""
        if not isinstance(value, re.Pattern):
            return value
        flags = ''.join(f for f, bit in (('i', re.I), ('m', re.M), ('s', re.S)) if value.flags & bit)
        if value.flags & ~(re.I | re.M | re.S | re.U):
            raise Unrenderable(f'expression {value.pattern!r} with flags {value.flags}')
        return f'(?{flags}){value.pattern}' if flags else value.pattern

    def warning_key(self, entry, key, value, place):
        """warningPattern and its kin: expressions, the extractor by name, the suppression list."""
        from buildbot.steps import shell
        extractors = {shell.WarningCountingShellCommand.warnExtractWholeLine: 'whole_line',
                      shell.WarningCountingShellCommand.warnExtractFromRegexpGroups: 'regexp_groups'}
        if value is None:
            return
        try:
            if key == 'warningExtractor':
                if value not in extractors:
                    raise Unrenderable(named(value))
                entry[key] = extractors[value]
            elif key == 'suppressionList':
                entry[key] = [[self.pattern(f), self.pattern(w), s, e] for f, w, s, e in value]
            elif key in ('warningPattern', 'directoryEnterPattern', 'directoryLeavePattern'):
                if not isinstance(value, (str, re.Pattern)):
                    raise Unrenderable(named(value))
                entry[key] = self.pattern(value)
            else:
                entry[key] = value
        except (Unrenderable, TypeError, ValueError) as e:
            self.losses.add(place, f'{key}: {e}', f'written without it: give {key} as plain values')

    def property_value(self, entry, value, place):
        """SetProperty's value: a template when Buildbot renders it, else the data as it is (Flotilla
        renders a top-level template only, so data holding templates is a loss)."""
        if isinstance(value, (str, bbprops.Interpolate, bbprops.Property, bbprops.Secret)):
            self.put(entry, 'value', value, place, 'value')
            return
        try:
            entry['value'] = plain(value, data_only=True)
        except Unrenderable as e:
            self.losses.add(place, f'value holding {e}',
                            'step written without it: give a plain value or one util.Interpolate')

    def shell_args(self, entry, args, place):
        """ShellSequence's commands: each ShellArg's command, log name and result rules."""
        from buildbot.steps.shellsequence import ShellArg
        if not isinstance(args, (list, tuple)):
            self.losses.add(place, f'commands {named(args)}', 'give the commands as a list of util.ShellArg')
            return
        out = []
        for number, arg in enumerate(args):
            if not isinstance(arg, ShellArg):
                self.losses.add(place, f'command {number}: {named(arg)}', 'written without it: use util.ShellArg')
                continue
            item = {}
            self.put(item, 'command', arg.command, f'{place}, command {number}', 'command')
            if 'command' not in item:
                continue
            if arg.logname is not None:
                item['logname'] = arg.logname
            for key in arg.resultConfig:
                if key in vars(arg):
                    item[key] = bool(getattr(arg, key))
            out.append(item)
        entry['commands'] = out

    def step(self, factory, place):
        cls, args, kwargs = factory.factory, list(factory.args), dict(factory.kwargs)
        kinds = self.step_kinds()
        if cls not in kinds:
            self.losses.add(place, f'step {named(cls)}',
                            'no Flotilla step of this kind: replace it with a shell step or leave it out')
            return None
        kind, keys = kinds[cls]
        if kind == 'trigger':
            # Buildbot's one sourceStamp joins its sourceStamps; None is "not given".
            one = kwargs.pop('sourceStamp', None)
            if one:
                kwargs['sourceStamps'] = list(kwargs.get('sourceStamps') or []) + [one]
            for key in ('updateSourceStamp', 'sourceStamps', 'copy_properties'):
                if key in kwargs and not kwargs[key]:
                    kwargs.pop(key)
        if args:
            names = self.POSITIONAL[kind]
            for name, a in zip(names, args):
                kwargs.setdefault(name, a)
            for a in args[len(names):]:
                self.losses.add(place, f'positional argument {a!r}', 'give it by keyword')
        entry = {'type': kind}
        for key in ('name',) + tuple(k for k in keys if k != 'name'):
            if key in kwargs:
                value = kwargs.pop(key)
                if key == 'schedulerNames':
                    entry['schedulers'] = list(value)
                elif key == 'interruptSignal':
                    entry[key] = str(value).removeprefix('SIG')
                elif key == 'decodeRC':
                    entry[key] = {str(k): v for k, v in value.items()}
                elif key in self.WARNINGS and key != 'suppressionFile':
                    self.warning_key(entry, key, value, place)
                elif key == 'value' and kind == 'set_property_value':
                    self.property_value(entry, value, place)
                elif key == 'commands':
                    self.shell_args(entry, value, place)
                elif key == 'sourceStamps':
                    self.put(entry, key, [dict(ss) for ss in value], place, key)
                elif key == 'copy_properties':
                    entry[key] = list(value)
                elif key in self.RENDERED:
                    self.put(entry, key, value, place, key)
                else:
                    entry[key] = value if not isinstance(value, tuple) else list(value)
        for key in self.COMMON:
            if key in ('timeout', 'maxTime') and key in kwargs and kwargs[key] is None:
                kwargs.pop(key)
                self.losses.add(place, f'{key}=None (no limit)', f'{key} is a number of seconds in Flotilla: '
                                'written without it (timeout: 1200 s without output)')
                continue
            if key in kwargs:
                value = kwargs.pop(key)
                if isinstance(value, (list, tuple)) and key.startswith('description'):
                    value = ' '.join(value)
                entry[key] = value
        for key in ('alwaysRun', 'doStepIf', 'hideStepIf'):
            if key in kwargs:
                value = kwargs.pop(key)
                if isinstance(value, bool):
                    entry[key] = value
                elif key == 'doStepIf':
                    # Written so that the step never runs: running a deploy step on every branch
                    # until someone notices is worse than skipping it.
                    entry[key] = False
                    self.losses.add(place, f'{key} {named(value)}', 'written as doStepIf: false (the step is '
                                    'skipped) until you write it as a condition on properties')
                else:
                    self.losses.add(place, f'{key} {named(value)}',
                                    f'written without it: write {key} as a condition on properties')
        if 'locks' in kwargs:
            entry['locks'] = self.locks_of(kwargs.pop('locks'), place)
        if kind == 'set_property' and 'extract_fn' in kwargs:
            self.losses.add(place, f'extract_fn {named(kwargs.pop("extract_fn"))}', 'set one property from stdout instead')
        for key in sorted(kwargs):
            self.losses.add(place, f'{cls.__qualname__} argument {key}={kwargs[key]!r}', 'no Flotilla form')
        if 'name' in entry and not isinstance(entry['name'], str):
            self.losses.add(place, f'name {named(entry.pop("name"))}', 'give the step a plain string name')
        if kind == 'trigger' and entry.get('waitForFinish') is None:
            entry.pop('waitForFinish', None)
        if kind == 'master_shell' and self.untrusted_shell(entry.get('command')):
            argv = self.shell_with_arguments(entry['command'])
            if argv is None:
                self.losses.add(place, 'a shell string run on the master that takes properties, source stamps or '
                                'worker info inside single quotes or beside $1...', 'step not written: give the '
                                'command as a list, each value one argument')
                return None
            entry['command'] = argv
        return entry

    # A value a build receives from users or workers spliced into a shell string becomes shell code
    # on the master, which Flotilla refuses. Buildbot splices it; the same script gets each such value
    # as a positional argument instead (`${1}` where `%(prop:branch)s` was, its word splitting as
    # Buildbot's outside double quotes, none inside them), so only what would have been injected
    # shell syntax is lost. Inside single quotes `${1}` would not expand, and a script that already
    # reads $1... would read these: those stay losses.
    TAKEN = re.compile(r'%\((?:prop|src|worker):[^)]*\)s')

    @classmethod
    def shell_with_arguments(cls, command):
        text = command.get('interpolate') if isinstance(command, dict) else command
        if re.search(r'\$([0-9@*#]|\{[0-9@*#])', text):
            return None
        script, values, quote, at = [], [], None, 0
        for m in cls.TAKEN.finditer(text):
            for ch in text[at:m.start()]:
                if quote is None and ch in '\'"':
                    quote = ch
                elif ch == quote:
                    quote = None
            if quote == "'":
                return None
            values.append(m.group(0))
            script.append(text[at:m.start()] + '${%d}' % len(values))
            at = m.end()
        script.append(text[at:])
        body = ''.join(script).strip()
        if isinstance(command, dict):
            body = {'interpolate': body, 'kw': command['kw']}
        return ['/bin/sh', '-c', body, 'sh'] + values

    @staticmethod
    def untrusted_shell(command):
        """Whether a master_shell command is a shell string taking values users or workers set (Flotilla
        refuses these: they would become shell code on the master)."""
        text = command.get('interpolate') if isinstance(command, dict) else command
        return isinstance(text, str) and re.search(r'%\((prop|src|worker):', text) is not None

    # ------------------------------------------------------------------ builders
    def builders(self):
        out = []
        default_collapse = self.m.collapseRequests
        for b in self.m.builders:
            place = f'builder {b.name}'
            if not IDENT.match(b.name):
                self.losses.add(place, 'name is not a URL identifier', 'rename the builder (Flotilla addresses builders by name)')
                self.skipped_builders.add(b.name)
                continue
            entry = {'name': b.name}
            if b.description:
                entry['description'] = b.description
            if b.tags:
                entry['tags'] = list(b.tags)
            entry['workers'] = list(b.workernames)
            # Buildbot: the builder's, else the master's, else True (process/builder.py).
            collapse = b.collapseRequests if b.collapseRequests is not None else default_collapse
            collapse = True if collapse is None else collapse
            if isinstance(collapse, bool):
                entry['collapse_requests'] = collapse
            else:
                self.losses.add(place, f'collapseRequests {named(collapse)}', 'collapse_requests is true or false')
            if b.properties:
                self.properties(entry, b.properties, place)
            if b.locks:
                entry['locks'] = self.locks_of(b.locks, place)
            if b.env:
                self.put(entry, 'env', b.env, place, 'env')
            if b.defaultProperties:
                defaults = {}
                self.properties(defaults, b.defaultProperties, place)
                if defaults:
                    entry['defaultProperties'] = defaults['properties']
            workerbuilddir = b.workerbuilddir
            if workerbuilddir != bytes2unicode(safeTranslate(b.name)):
                if isinstance(workerbuilddir, str) and not workerbuilddir.startswith('/') and \
                        '..' not in workerbuilddir.split('/'):
                    entry['workerbuilddir'] = workerbuilddir
                else:
                    self.losses.add(place, f'workerbuilddir={workerbuilddir!r}',
                                    'give a path under the worker\'s base directory')
            self.builder_project(entry, b, place)
            for key, default in (('builddir', bytes2unicode(safeTranslate(b.name))),
                                 ('nextWorker', None), ('nextBuild', None), ('canStartBuild', None)):
                value = getattr(b, key, default)
                if value != default and value:
                    what = named(value) if callable(value) else f'{key}={value!r}'
                    self.losses.add(place, f'{key}: {what}', 'no builder key for it in Flotilla yet')
            steps = []
            for number, factory in enumerate(b.factory.steps):
                name = factory.kwargs.get('name') or getattr(factory.factory, 'name', '?')
                step = self.step(factory, f'builder {b.name}, step {number} ({name})')
                if step is not None:
                    steps.append(step)
            if b.factory.workdir != 'build':
                self.losses.add(place, f'BuildFactory workdir {b.factory.workdir!r}', "give each step's workdir")
            entry['steps'] = steps
            out.append(entry)
        self.out['builders'] = out

    # ------------------------------------------------------------------ schedulers
    # Buildbot's ChangeFilter keys that Flotilla's change_filter takes as they are.
    FILTER_KEYS = tuple(f'{field}{suffix}' for field in ('project', 'repository', 'branch', 'category', 'codebase')
                        for suffix in ('', '_not_eq', '_re', '_not_re'))

    @staticmethod
    def filter_value(value):
        """A filter's value (or list of values) as YAML: compiled expressions as their text. Raises
        ValueError for an expression with flags, which a text cannot carry."""
        def one(v):
            if not isinstance(v, re.Pattern):
                return v
            if v.flags & ~re.UNICODE:
                raise ValueError(v)
            return v.pattern
        return [one(v) for v in value] if isinstance(value, (list, tuple)) else one(value)

    def filter_value_or_loss(self, value, place, what, instead):
        """(True, the value as YAML), or (False, None) with its loss for an expression with flags."""
        try:
            return True, self.filter_value(value)
        except ValueError as err:
            self.losses.add(place, f'{what}={err.args[0]!r} (flags)', instead)
            return False, None

    def change_filter(self, flt, entry, place, extra=None):
        """Buildbot's ChangeFilter as Flotilla's change_filter (the same keys; `extra` holds the
        scheduler's own branches/categories); False if some of it has no form (the caller leaves
        the scheduler out: without its filter it would build other changes)."""
        kwargs = dict(arguments(flt)[1]) if flt is not None else {}
        kwargs.update(extra or {})
        complete = True
        out = {}
        for key in self.FILTER_KEYS:
            if key not in kwargs:
                continue
            value = kwargs.pop(key)
            # None is "no filter" to Buildbot, but for branch and branch_not_eq the default branch.
            if value is None and key not in ('branch', 'branch_not_eq'):
                continue
            ok, converted = self.filter_value_or_loss(
                value, place, f'change filter {key}',
                'scheduler not written: Flotilla\'s expressions take no flags; spell them out ([Rr]elease)')
            if ok:
                out[key] = converted
            complete = complete and ok
        for key in sorted(kwargs):
            if kwargs[key] is None:
                continue
            value = kwargs[key]
            what = named(value) if callable(value) else f'{key}={value!r}'
            self.losses.add(place, f'change filter {what}',
                            'scheduler not written: no Flotilla form for this filter (Python callables and '
                            'property filters); write it with the branch, project, repository, category and '
                            'codebase keys')
            complete = False
        if out:
            entry['change_filter'] = out
        return complete

    def scheduler_common(self, s, kwargs, entry, place, forced=False):
        entry['builders'] = [b for b in kwargs.pop('builderNames', []) if b not in self.skipped_builders]
        props = None if forced else kwargs.pop('properties', None)
        if props:
            self.properties(entry, props, place)
        if kwargs.get('priority') not in (None, 0) and isinstance(kwargs['priority'], int):
            entry['priority'] = kwargs.pop('priority')
        codebases = kwargs.pop('codebases', None)
        if codebases and codebases != {'': {}}:
            if isinstance(codebases, dict):
                entry['codebases'] = {k: {'repository': v.get('repository', ''), 'branch': v.get('branch')}
                                      for k, v in codebases.items()}
            else:
                self.losses.add(place, f'codebases {codebases!r}', 'give codebases as a dict')

    def schedulers(self):
        from buildbot.schedulers import basic, forcesched, timed, triggerable
        out, forced = [], []
        for s in self.m.schedulers.values():
            place = f'scheduler {s.name}'
            args, kwargs = arguments(s)
            kwargs = dict(kwargs)
            if args:
                self.losses.add(place, 'positional arguments', 'give them by keyword')
            kwargs.pop('name', None)
            cls = type(s)
            if cls is forcesched.ForceScheduler:
                forced.append(self.force(s, kwargs, place))
                continue
            kinds = {basic.SingleBranchScheduler: 'single-branch', basic.AnyBranchScheduler: 'any-branch',
                     timed.Periodic: 'periodic',
                     timed.Nightly: 'nightly', triggerable.Triggerable: 'triggerable', basic.Dependent: 'dependent'}
            if cls not in kinds:
                self.losses.add(place, f'scheduler {cls.__module__}.{cls.__qualname__}',
                                'no scheduler of this kind: one single-branch scheduler per branch')
                continue
            entry = {'type': kinds[cls], 'name': s.name}
            complete = True
            self.scheduler_common(s, kwargs, entry, place)
            if cls in (basic.SingleBranchScheduler, basic.AnyBranchScheduler):
                entry['tree_stable_timer'] = kwargs.pop('treeStableTimer', None) or 0
                # Buildbot's own branch/branches/categories arguments are a change filter it makes.
                extra = {}
                if 'branch' in kwargs:
                    entry['branch'] = kwargs.pop('branch')
                if 'branches' in kwargs:
                    extra['branch'] = kwargs.pop('branches')
                if kwargs.get('categories'):
                    extra['category'] = kwargs.pop('categories')
                complete = self.change_filter(kwargs.pop('change_filter', None), entry, place, extra)
            if cls is basic.Dependent:
                entry['upstream'] = getattr(kwargs.pop('upstream', None), 'name', None)
            if cls is timed.Periodic:
                entry['period'] = kwargs.pop('periodicBuildTimer')
            if cls is timed.Nightly:
                entry['cron'] = self.cron(kwargs)
                if 'onlyIfChanged' in kwargs:
                    entry['only_if_changed'] = bool(kwargs.pop('onlyIfChanged'))
                if 'branch' in kwargs:
                    entry['branch'] = kwargs.pop('branch')
                complete = self.change_filter(kwargs.pop('change_filter', None), entry, place)
            if cls in (basic.SingleBranchScheduler, basic.AnyBranchScheduler, timed.Nightly):
                if 'onlyImportant' in kwargs:
                    entry['only_important'] = bool(kwargs.pop('onlyImportant'))
                if kwargs.get('fileIsImportant') is not None:
                    self.losses.add(place, f'fileIsImportant {named(kwargs.pop("fileIsImportant"))}',
                                    'write file_pattern, a regular expression over file names')
            for key in sorted(kwargs):
                if kwargs[key] is None:
                    continue
                self.losses.add(place, f'{cls.__qualname__} argument {key}={kwargs[key]!r}', 'no Flotilla form')
            if not complete:
                continue
            if entry['builders']:
                out.append(entry)
            else:
                self.losses.add(place, 'no builder left to schedule', 'fix the builders it names')
        self.out['schedulers'] = self.with_upstreams(out, [f['name'] for f in forced if f['builders']])
        if forced:
            self.out['force_schedulers'] = [f for f in forced if f['builders']]

    def with_upstreams(self, schedulers, forced):
        """The schedulers less each dependent one whose upstream was not written (a loss), until
        none is left without its upstream: Flotilla refuses a dependent scheduler without one."""
        while True:
            names = {s['name'] for s in schedulers} | set(forced)
            orphans = [s for s in schedulers if s['type'] == 'dependent' and s['upstream'] not in names]
            if not orphans:
                return schedulers
            for s in orphans:
                self.losses.add(f"scheduler {s['name']}", f"Dependent on {s['upstream']!r}, which was not written",
                                'convert the upstream scheduler (see its own loss), then add this one')
            schedulers = [s for s in schedulers if s not in orphans]

    def cron(self, kwargs):
        def field(key, shift=None):
            v = kwargs.pop(key, '*')
            if v == '*':
                return '*'
            values = v if isinstance(v, (list, tuple)) else [v]
            # Buildbot's dayOfWeek counts from Monday (0); cron's from Sunday (0).
            return ','.join(str((x + 1) % 7 if shift else x) for x in values)
        parts = [field('minute'), field('hour'), field('dayOfMonth'), field('month'), field('dayOfWeek', True)]
        return ' '.join(parts if parts[0] != '*' else ['0'] + parts[1:])

    PARAMS = {'StringParameter': 'string', 'TextParameter': 'text', 'IntParameter': 'int',
              'BooleanParameter': 'boolean', 'ChoiceStringParameter': 'choice', 'FixedParameter': 'fixed',
              'UserNameParameter': 'username', 'NestedParameter': 'nested'}
    PARAM_KEYS = ('label', 'tablabel', 'default', 'required', 'multiple', 'regex', 'hide', 'maxsize', 'size',
                  'cols', 'rows', 'choices', 'strict', 'need_email', 'layout', 'columns', 'autopopulate')

    def param(self, p, place):
        kind = self.PARAMS.get(type(p).__name__)
        if kind is None:
            self.losses.add(place, f'force parameter {named(p)}', 'use one of the standard parameter kinds')
            return None
        entry = {'type': kind, 'name': p.name}
        for key in self.PARAM_KEYS:
            if not hasattr(p, key):
                continue
            value = getattr(p, key)
            if value == getattr(type(p), key, object()) or value is None:
                continue
            if key == 'regex' and hasattr(value, 'pattern'):
                value = value.pattern
            if key == 'choices':
                value = list(value)
            entry[key] = value
        if kind == 'nested':
            entry['fields'] = [f for f in (self.param(x, place) for x in p.fields) if f]
        return entry

    def force(self, s, kwargs, place):
        entry = {'name': s.name}
        self.scheduler_common(s, kwargs, entry, place, forced=True)
        for key, to in (('label', 'label'), ('buttonName', 'button_name')):
            if kwargs.get(key) is not None:
                entry[to] = kwargs.pop(key)
            kwargs.pop(key, None)
        for key in ('reason', 'username'):
            value = kwargs.pop(key, None)
            if value is not None:
                entry[key] = self.param(value, place)
        params = kwargs.pop('properties', None) or []
        if params:
            entry['properties'] = [p for p in (self.param(x, place) for x in params) if p]
        for key in sorted(kwargs):
            if kwargs[key] is not None:
                self.losses.add(place, f'ForceScheduler argument {key}={kwargs[key]!r}', 'no Flotilla form')
        return entry

    # ------------------------------------------------------------------ change sources
    def pb_change_source(self, place, cs):
        # Buildbot's PBChangeSource: `buildbot sendchange` logs in on the workers' PB port
        # (Flotilla takes it there only: a port of its own is written as a loss).
        names = ('user', 'passwd', 'port', 'prefix', 'name')
        given = dict(zip(names, cs._config_args))
        given.update(cs._config_kwargs)
        entry = {'type': 'pb', 'user': given.get('user', 'change'), 'passwd': given.get('passwd', 'changepw')}
        if given.get('prefix'):
            entry['prefix'] = given['prefix']
        if given.get('name'):
            entry['name'] = given['name']
        port = given.get('port')
        pb = (self.m.protocols or {}).get('pb') or {}
        if port is not None and pb_port_number(port) != pb_port_number(pb.get('port')):
            self.losses.add(place, f'its own port {port}',
                            "point buildbot sendchange at the workers' PB port (protocols.pb) instead")
        return entry

    # ------------------------------------------------------------------ Buildbot 4 projects and codebases
    def projects_and_codebases(self):
        """c['projects'] and c['codebases'] of a Buildbot 4.3 master.cfg, as projects: and codebases:."""
        projects = []
        for number, p in enumerate(self.buildbot4.get('projects') or []):
            place = f"c['projects'][{number}]"
            if not isinstance(p, Buildbot4Project) or not isinstance(p.name, str):
                self.losses.add(place, named(p), 'write it under projects: by hand (name, slug, description)')
                continue
            entry = {'name': p.name}
            for key in ('slug', 'description'):
                if getattr(p, key) is not None:
                    self.put(entry, key, getattr(p, key), place, key)
            if p.description_format == 'markdown':
                entry['description_format'] = 'markdown'
            elif p.description_format is not None:
                self.losses.add(place, f'description_format {p.description_format!r}',
                                'the description is kept as plain text (Flotilla knows markdown only)')
            projects.append(entry)
        codebases = []
        for number, c in enumerate(self.buildbot4.get('codebases') or []):
            entry = self.codebase(c, f"c['codebases'][{number}]", with_slug=True)
            if entry is not None:
                codebases.append(entry)
        if projects:
            self.out['projects'] = projects
        if codebases:
            self.out['codebases'] = codebases

    def codebase(self, c, place, with_slug):
        if not isinstance(c, Buildbot4Codebase) or not isinstance(c.name, str) or not isinstance(c.project, str):
            self.losses.add(place, f'codebase {named(c)}', 'write it as {name, project} by hand')
            return None
        entry = {'name': c.name, 'project': c.project}
        if with_slug and c.slug is not None:
            entry['slug'] = c.slug
        return entry

    def builder_project(self, entry, b, place):
        project = getattr(b, '_flotilla_project', None) or getattr(b, 'project', None)
        if isinstance(project, str) and project:
            entry['project'] = project
        elif project:
            self.losses.add(place, f'project: {named(project)}', 'name one of projects: by its name')

    def change_sources(self):
        from buildbot.changes import gitpoller
        from buildbot.changes import pb as pbchange
        out = []
        for cs in self.m.change_sources:
            place = f'change source {cs.name}'
            if type(cs) is pbchange.PBChangeSource:
                out.append(self.pb_change_source(place, cs))
                continue
            if type(cs) is not gitpoller.GitPoller:
                self.losses.add(place, named(cs), 'send changes through the change hooks (change_hooks:)')
                continue
            args, kwargs = list(cs._config_args), dict(cs._config_kwargs)
            entry = {'name': cs.name, 'type': 'git', 'repourl': args[0] if args else kwargs.pop('repourl')}
            kwargs.pop('repourl', None)
            branches, branch = kwargs.pop('branches', None), kwargs.pop('branch', None)
            only_tags = bool(kwargs.pop('only_tags', False))
            if only_tags:
                entry['only_tags'] = True
            elif branches is True:
                entry['branches'] = True
            elif isinstance(branches, (list, tuple)):
                entry['branches'] = list(branches)
            elif branches is not None:
                self.losses.add(place, f'branches={named(branches) if callable(branches) else branches!r}',
                                'list the branches to poll')
            elif branch:
                entry['branches'] = [branch]
            else:
                entry['branches'] = ['master']
            if kwargs.get('workdir'):
                # Buildbot's is under the master's directory; Flotilla's under MASTER_WORKDIR.
                entry['workdir'] = kwargs.pop('workdir')
            for key, to in (('pollInterval', 'poll_interval'), ('project', 'project'), ('category', 'category')):
                if kwargs.get(key) is not None:
                    entry[to] = kwargs.pop(key)
                kwargs.pop(key, None)
            codebase = getattr(cs, '_flotilla_codebase', None)
            if codebase is not None:
                written = self.codebase(codebase, place, with_slug=False)
                if written is not None:
                    entry['codebase'] = written
            for key in sorted(kwargs):
                if kwargs[key] is not None:
                    self.losses.add(place, f'GitPoller argument {key}={kwargs[key]!r}', 'no Flotilla form')
            out.append(entry)
        if out:
            self.out['change_sources'] = out

    # ------------------------------------------------------------------ reporters
    def reporters(self):
        from buildbot.reporters import http
        out = []
        for number, r in enumerate(self.m.services.values()):
            place = f"c['services'][{number}] ({type(r).__name__})"
            kwargs = dict(r._config_kwargs)
            args = list(r._config_args)
            if type(r) is http.HttpStatusPush and set(kwargs) <= {'serverUrl'} and len(args) <= 1:
                out.append({'type': 'http', 'serverUrl': args[0] if args else kwargs['serverUrl']})
                continue
            if type(r).__name__ == 'OldBuildCanceller':
                canceller = self.old_build_canceller(r, place)
                if canceller is not None:
                    self.out.setdefault('services', []).append(canceller)
                continue
            self.losses.add(place, f'{named(r)} with arguments {sorted(kwargs)}',
                            'configure it under reporters: in YAML by hand (docs/migrating-from-buildbot.md)')
        if out:
            self.out['reporters'] = out

    # Buildbot's SourceStampFilter keyword for each key of Flotilla's (`<field>_eq` is `<field>`).
    SS_FILTER_KEYS = {f'{field}{suffix}' if suffix != '_eq' else field: f'{field}{suffix}'
                      for field in ('project', 'repository', 'branch', 'codebase')
                      for suffix in ('_eq', '_not_eq', '_re', '_not_re')}

    def old_build_canceller(self, r, place):
        """Buildbot's OldBuildCanceller as a `services` entry, or None (with its loss) when a
        filter or a branch_key is a Python callable, which has no form here."""
        from buildbot.util import NotABranch
        args = list(r._config_args)
        kwargs = dict(r._config_kwargs)
        name = kwargs.pop('name', args.pop(0) if args else None)
        filters = kwargs.pop('filters', args.pop(0) if args else [])
        branch_key = kwargs.pop('branch_key', args.pop(0) if args else None)
        if branch_key is not None:
            self.losses.add(place, f'branch_key {named(branch_key)}',
                            'canceller not written: only Buildbot\'s default branch key has a form')
            return None
        out = []
        for number, (builders, ssf) in enumerate(filters):
            fkwargs = dict(arguments(ssf)[1])
            fn = fkwargs.pop('filter_fn', None)
            if fn is not None:
                self.losses.add(place, f'filter {number} filter_fn {named(fn)}',
                                'canceller not written: write the filter with the branch, project, repository and '
                                'codebase keys')
                return None
            entry = {'builders': [builders] if isinstance(builders, str) else list(builders)}
            for key, bb_key in self.SS_FILTER_KEYS.items():
                value = fkwargs.get(bb_key)
                # NotABranch is Buildbot's "not given" for branch and branch_not_eq, where None is
                # the default branch; None is "not given" for the others.
                if bb_key not in fkwargs or value is NotABranch or (value is None and key not in ('branch', 'branch_not_eq')):
                    continue
                ok, converted = self.filter_value_or_loss(
                    value, place, f'filter {number} {bb_key}',
                    'canceller not written: Flotilla\'s expressions take no flags; spell them out')
                if not ok:
                    return None
                entry[key] = converted
            out.append(entry)
        return {'type': 'old_build_canceller', 'name': name, 'filters': out}

    def run(self):
        self.globals()
        self.projects_and_codebases()
        self.protocols()
        self.workers()
        self.builders()
        self.schedulers()
        self.change_sources()
        self.reporters()
        self.www()
        order = ['title', 'titleURL', 'buildbotURL', 'buildbotNetUsageData', 'log_compression', 'properties',
                 'projects', 'codebases', 'protocols', 'workers', 'locks', 'builders', 'schedulers', 'force_schedulers', 'change_sources',
                 'change_hooks', 'reporters', 'services', 'secrets', 'auth', 'www']
        if self.locks:
            self.out['locks'] = list(self.locks.values())
        return {k: self.out[k] for k in order if k in self.out}


def main(argv):
    if len(argv) != 1:
        print('usage: npm run import-buildbot-config -- path/to/master.cfg > master.yaml', file=sys.stderr)
        return 2
    path = os.path.abspath(argv[0])
    if not os.path.isfile(path):
        print(f'error: {argv[0]}: no such file', file=sys.stderr)
        return 2
    basedir, filename = os.path.split(path)
    record_arguments()
    buildbot4_stand_ins()
    cwd = os.getcwd()
    os.chdir(basedir)
    try:
        _, config_dict = loadConfigDict(basedir, filename)
        # Buildbot 4's keys, which Buildbot 3.7 refuses as unknown: read here, not by it.
        buildbot4 = {key: config_dict.pop(key) for key in ('projects', 'codebases') if key in config_dict}
        master = MasterConfig.loadFromDict(config_dict, path)
    except ConfigErrors as e:
        print(f'error: Buildbot does not load {argv[0]}:', file=sys.stderr)
        for err in e.errors:
            print(f'  {err}', file=sys.stderr)
        return 2
    except Exception as e:  # Buildbot's own checks can fail on input they do not expect
        print(f'error: Buildbot fails loading {argv[0]}: {type(e).__name__}: {e}', file=sys.stderr)
        return 2
    finally:
        os.chdir(cwd)
    importer = Importer(config_dict, master, buildbot4)
    document = importer.run()
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120)
    lines = importer.losses.lines()
    header = f'# Written by deploy/import/buildbot_to_flotilla.py from {argv[0]}.\n'
    footer = [f'# Not converted ({len(lines)}): each place, what it is -> what to do instead.']
    footer += [f'#   {line}' for line in lines]
    sys.stdout.write(header + text + '\n'.join(footer) + '\n')
    out = document
    steps = sum(len(b['steps']) for b in out.get('builders', []))
    schedulers = len(out.get('schedulers', [])) + len(out.get('force_schedulers', []))
    print(f"{argv[0]}: converted {len(out.get('builders', []))} builders ({steps} steps), {schedulers} schedulers, "
          f"{len(out.get('reporters', []))} reporters; {len(lines)} not converted", file=sys.stderr)
    for line in lines:
        print(f'  not converted: {line}', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
