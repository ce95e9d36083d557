import { createRequire } from 'node:module';
import { pino } from 'pino';
import type { Logger as PinoLogger } from 'pino';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';
import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import { environmentSettings } from '../config/settings.js';
import type { Environment } from '../config/settings.js';

/**
 * pino-pretty is an optional dependency, loaded only when pretty logs are asked for: undefined when it is not
 * installed (`npm install --omit=optional`), and the logs stay JSON.
 */
function loadPretty(): ((options: PrettyOptions) => PrettyStream) | undefined {
  try {
    return createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

/**
 * The process logger: JSON lines by default, pretty when stdout is a terminal (or `SWITCHYARD_LOG_FORMAT=pretty`).
 * Level from `SWITCHYARD_LOG_LEVEL` (default `info`). Without the optional pino-pretty, always JSON. `logs` as an
 * entry point resolved them; else from `env` (default the process's) through the settings function
 * (src/config/settings.ts), which stops at a bad value, naming the variable.
 */
export function createLogger(
  options: {
    env?: Environment;
    logs?: { level: string; format?: 'json' | 'pretty' | undefined };
    destination?: NodeJS.WritableStream;
  } = {},
): PinoLogger {
  const logs = options.logs ?? environmentSettings(options.env).logs;
  const level = logs.level;
  const format = logs.format ?? (process.stdout.isTTY === true ? 'pretty' : 'json');
  const base = { name: 'switchyard', level };
  const pretty = format === 'pretty' ? loadPretty() : undefined;
  if (pretty !== undefined) {
    return pino(
      base,
      pretty({
        colorize: true,
        translateTime: 'HH:MM:ss.l',
        ignore: 'pid,hostname',
        destination: options.destination ?? 1,
      }),
    );
  }
  return options.destination === undefined ? pino(base) : pino(base, options.destination);
}

/** Temporal's `Logger` on top of pino, so SDK, worker and activity logs share one stream. */
export class PinoTemporalLogger implements TemporalLogger {
  constructor(private readonly logger: PinoLogger) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const method = level.toLowerCase() as 'trace' | 'debug' | 'info' | 'warn' | 'error';
    this.logger[method](meta ?? {}, message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}
