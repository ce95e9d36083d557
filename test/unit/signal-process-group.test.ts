import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signalProcessGroup } from '../../src/tools/support/signal-process-group.js';

describe('signalProcessGroup', () => {
  it('signals the whole group a detached child leads, its own children too', async () => {
    // The shell prints its background child's pid, then waits: both must end.
    const child = spawn('/bin/sh', ['-c', 'sleep 30 & echo $!; wait'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    const grandchild = Number(line.toString().trim());
    const exited = once(child, 'exit');
    signalProcessGroup(child.pid, 'SIGKILL');
    expect((await exited)[1]).toBe('SIGKILL');
    // Gone, or a zombie left for whoever reaps orphans here: either way it no longer runs.
    await expect
      .poll(() => {
        try {
          const stat = readFileSync(`/proc/${grandchild}/stat`, 'utf8');
          return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z') ? 'gone' : 'running';
        } catch {
          return 'gone';
        }
      })
      .toBe('gone');
  });

  it('does nothing for no pid or a group that is gone', () => {
    expect(() => signalProcessGroup(undefined, 'SIGTERM')).not.toThrow();
    expect(() => signalProcessGroup(2 ** 22 + 12345, 'SIGTERM')).not.toThrow();
  });
});
