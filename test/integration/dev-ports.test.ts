import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killCli, startCli } from '../support/cli-process.js';
import type { CliProcess } from '../support/cli-process.js';
import { freePort } from '../support/free-port.js';
import { createHarness, scratchDir } from '../support/harness.js';
import type { Harness } from '../support/harness.js';
import { cliEnvironment } from '../support/cli-process.js';

/** Holds `port` on 127.0.0.1, as another server would. */
async function occupy(port: number): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

// `switchyard dev` starts its own server. With a port it needs already taken, it used to print "Temporal dev server:
// 127.0.0.1:7233" while its worker polled whatever answered there; now it names the port and stops before starting.
describe('switchyard dev with its ports taken', () => {
  let harness: Harness;
  let env: NodeJS.ProcessEnv;
  const started: CliProcess[] = [];
  beforeAll(async () => {
    harness = await createHarness();
    env = await cliEnvironment(harness);
    delete env.TEMPORAL_ADDRESS;
  });
  afterAll(async () => {
    await Promise.all(started.map(killCli));
    await harness?.close();
  });

  it("names the gRPC port in use and stops, never attaching to another server (here: the test's own dev server)", async () => {
    const port = Number(harness.address.split(':').at(-1));
    const dev = startCli(
      [
        'dev',
        '--headless',
        '--port',
        String(port),
        '--console-port',
        String(await freePort()),
        '--cwd',
        await scratchDir(),
      ],
      env,
    );
    started.push(dev);
    const { code } = await dev.exited;
    expect(code, dev.output()).toBe(1);
    expect(dev.output()).toContain(
      `port ${port} on 127.0.0.1 (the dev server's gRPC port) is in use by another process`,
    );
    expect(dev.output()).toContain('choose another with --port N');
    expect(dev.output()).not.toContain('Temporal dev server:');
    expect(dev.output()).not.toContain('worker started');
  });

  it('names the Web UI port in use and stops', async () => {
    const uiPort = await freePort();
    const holder = await occupy(uiPort);
    try {
      const dev = startCli(
        [
          'dev',
          '--port',
          String(await freePort()),
          '--ui-port',
          String(uiPort),
          '--console-port',
          String(await freePort()),
          '--cwd',
          await scratchDir(),
        ],
        env,
      );
      started.push(dev);
      const { code } = await dev.exited;
      expect(code, dev.output()).toBe(1);
      expect(dev.output()).toContain(`port ${uiPort} on 127.0.0.1 (the dev server's Web UI port) is in use`);
      expect(dev.output()).toContain('choose another with --ui-port N');
      expect(dev.output()).not.toContain('Temporal dev server:');
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
