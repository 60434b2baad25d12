// Which codec a configuration's log_compression stores chunks with: the runner writes a log's
// first chunks with it and the compress-log job its merged ones. Apart from compress-log.ts
// so that the runner's start does not load BullMQ (master.ts loads the jobs when they start).
import type { MasterConfig } from '../../core/config/master-config.js';
import type { LogCodec } from '../../core/data/index.js';

export type LogCompression = MasterConfig['log_compression'];

/** The codec compressLog is given for a configuration value; null for `none`. */
export function logCodec(setting: LogCompression): LogCodec | null {
  switch (setting) {
    case 'gzip':
      return 'gz';
    case 'zstd':
      return 'zstd';
    case 'none':
      return null;
  }
}
