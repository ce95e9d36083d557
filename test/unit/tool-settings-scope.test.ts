import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_TOOL_SETTINGS,
  runWithToolSettings,
  toolSettings,
  useToolSettings,
} from '../../src/tools/tool-settings.js';
import type { ToolSettings } from '../../src/tools/tool-settings.js';
import { childEnvironment } from '../../src/tools/support/environment-policy.js';
import { resolveLimit } from '../../src/tools/limits.js';
import { useLiveToolSettings } from '../support/tool-settings-setup.js';

/** Default settings with one worker's environment, allow list and Read limit. */
function workerSettings(name: string, readMaxFileBytes: number): ToolSettings {
  return {
    ...DEFAULT_TOOL_SETTINGS,
    environment: { PROBE_WORKER: name },
    environmentPolicy: { include: ['PROBE_*'], exclude: [] },
    limits: { ...DEFAULT_TOOL_SETTINGS.limits, readMaxFileBytes },
  };
}

// A worker runs its activities with its own settings (`runWithToolSettings`); the process's (`useToolSettings`) are
// what tools get outside any worker. Two workers in one process must not see each other's.
describe('tool settings scoped to the code a worker runs', () => {
  afterEach(() => useLiveToolSettings());

  it('the scoped settings win over the process-wide ones, and only inside the scope', () => {
    useToolSettings(workerSettings('process', 3));
    runWithToolSettings(workerSettings('a', 1), () => {
      expect(childEnvironment().PROBE_WORKER).toBe('a');
      expect(resolveLimit('readMaxFileBytes')).toBe(1);
    });
    expect(childEnvironment().PROBE_WORKER).toBe('process');
    expect(resolveLimit('readMaxFileBytes')).toBe(3);
  });

  it('two scopes running at once each keep their own, across awaits and timers', async () => {
    const seen = await Promise.all(
      [workerSettings('a', 1), workerSettings('b', 2)].map((settings) =>
        runWithToolSettings(settings, async () => {
          await sleep(5);
          const afterAwait = toolSettings().environment.PROBE_WORKER;
          const inTimer = await new Promise<string | undefined>((resolve) =>
            setTimeout(() => resolve(childEnvironment().PROBE_WORKER), 1),
          );
          return [afterAwait, inTimer, resolveLimit('readMaxFileBytes')];
        }),
      ),
    );
    expect(seen).toEqual([
      ['a', 'a', 1],
      ['b', 'b', 2],
    ]);
  });

  it('a function source is called at each use inside its scope', () => {
    let name = 'first';
    runWithToolSettings(
      () => workerSettings(name, 1),
      () => {
        expect(toolSettings().environment.PROBE_WORKER).toBe('first');
        name = 'second';
        expect(toolSettings().environment.PROBE_WORKER).toBe('second');
      },
    );
  });
});
