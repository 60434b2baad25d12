// Configuration errors: one catalogue, each with a stable code.

export type ConfigErrorCode =
  | 'CONFIG_ENV_INVALID'
  | 'CONFIG_FILE_UNREADABLE'
  | 'CONFIG_YAML_SYNTAX'
  | 'CONFIG_SCHEMA'
  | 'CONFIG_REFERENCE'
  // A port or address the process cannot listen on (in use, privileged, not this machine's).
  | 'CONFIG_LISTEN'
  // A reloaded file changes what a running process takes on only at its start (master/reconfigure.ts).
  | 'CONFIG_RESTART_REQUIRED';

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    readonly code: ConfigErrorCode,
    message: string,
    /** One line per problem, each naming the key and what was expected. */
    readonly problems: readonly string[] = [],
  ) {
    super(problems.length ? `${message}:\n  ${problems.join('\n  ')}` : message);
  }
}
