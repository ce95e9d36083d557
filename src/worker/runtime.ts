import { Runtime } from '@temporalio/worker';
import type { Logger as PinoLogger } from 'pino';
import { PinoTemporalLogger } from './logger.js';

let installedWith: PinoLogger | undefined;

/**
 * Routes Temporal's Runtime logs (SDK, worker, activity context loggers, forwarded core logs) into pino.
 * Must run before the first connection or worker is created; later calls with the same logger do nothing.
 */
export function installTemporalRuntime(logger: PinoLogger): void {
  if (installedWith === logger) return;
  if (installedWith !== undefined) throw new Error('The Temporal Runtime was already installed with another logger');
  const level =
    logger.level === 'trace'
      ? 'TRACE'
      : logger.level === 'debug'
        ? 'DEBUG'
        : logger.level === 'info'
          ? 'INFO'
          : logger.level === 'warn'
            ? 'WARN'
            : 'ERROR';
  Runtime.install({
    logger: new PinoTemporalLogger(logger),
    telemetryOptions: {
      logging: {
        filter: { core: level === 'TRACE' || level === 'DEBUG' ? level : 'WARN', other: 'ERROR' },
        forward: {},
      },
    },
  });
  installedWith = logger;
}
