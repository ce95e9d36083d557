import { pino } from 'pino';
import type { Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
type Level = (typeof LEVELS)[number];

function levelFromEnv(env: NodeJS.ProcessEnv): Level {
  const raw = (env.SWITCHYARD_LOG_LEVEL ?? 'info').toLowerCase();
  if ((LEVELS as readonly string[]).includes(raw)) return raw as Level;
  throw new Error(`SWITCHYARD_LOG_LEVEL must be one of ${LEVELS.join(', ')}; got "${raw}"`);
}

/**
 * The process logger: JSON lines by default, pretty when stdout is a terminal (or `SWITCHYARD_LOG_FORMAT=pretty`).
 * Level from `SWITCHYARD_LOG_LEVEL` (default `info`).
 */
export function createLogger(options: { env?: NodeJS.ProcessEnv; destination?: NodeJS.WritableStream } = {}): PinoLogger {
  const env = options.env ?? process.env;
  const level = levelFromEnv(env);
  const format = env.SWITCHYARD_LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json');
  if (format !== 'json' && format !== 'pretty') {
    throw new Error(`SWITCHYARD_LOG_FORMAT must be "json" or "pretty"; got "${format}"`);
  }
  const base = { name: 'switchyard', level };
  if (format === 'pretty') {
    return pino(base, pretty({ colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname', destination: options.destination ?? 1 }));
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
