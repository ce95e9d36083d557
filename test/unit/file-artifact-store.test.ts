import { mkdir, readdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileArtifactStore } from '../../src/artifacts/file-artifact-store.js';
import { main } from '../../src/cli/main.js';
import { ARTIFACT_RETENTION } from '../../src/contracts/defaults.js';
import { scratchDir } from '../support/scratch.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Sets a directory's and its files' modification time `ageMs` into the past. */
async function age(dir: string, ageMs: number): Promise<void> {
  const when = new Date(Date.now() - ageMs);
  for (const entry of await readdir(dir)) await utimes(path.join(dir, entry), when, when);
  await utimes(dir, when, when);
}

describe('FileArtifactStore session directories', () => {
  it('keeps a session id of ".." or "." inside the artifact root, in its own directory', async () => {
    const dataDir = await scratchDir();
    const store = new FileArtifactStore(dataDir);
    for (const sessionId of ['..', '.', '../..', '.hidden', '%2E%2E']) {
      const stored = await store.put({ sessionId, callId: 'c1', content: `from ${sessionId}` });
      expect(path.dirname(path.dirname(stored.path))).toBe(store.root);
      expect(path.basename(path.dirname(stored.path))).not.toMatch(/^\./);
      expect(store.locate(stored.uri)).toBe(stored.path);
      expect(await store.read(stored.uri)).toBe(`from ${sessionId}`);
    }
    // Five ids, five directories: none collides with another or with the root.
    expect(await readdir(store.root)).toHaveLength(5);
    expect((await readdir(dataDir)).sort()).toEqual(['artifacts']);
  });

  it('gives call ids and session ids with any character a URI that locate accepts', async () => {
    const store = new FileArtifactStore(await scratchDir());
    for (const [sessionId, callId] of [
      ['a(b)*!', "c'1"],
      ['s/with/slashes', '..'],
      ['ünïcode ~ space', '.c'],
    ] as const) {
      const stored = await store.put({ sessionId, callId, content: 'x' });
      expect(store.locate(stored.uri)).toBe(stored.path);
      expect(path.dirname(path.dirname(stored.path))).toBe(store.root);
    }
  });

  it('keeps the names of ordinary ids, so existing URIs still resolve', async () => {
    const dataDir = await scratchDir();
    const store = new FileArtifactStore(dataDir);
    const stored = await store.put({ sessionId: 'session-1.2_x~y', callId: 'toolu_01', content: 'x' });
    expect(stored.uri).toMatch(/^switchyard-artifact:\/\/session-1\.2_x~y\/toolu_01-tool-result-[0-9a-f-]+$/);
    expect((await store.put({ sessionId: 'my session', callId: 'c', content: 'x' })).uri).toMatch(
      /^switchyard-artifact:\/\/my%20session\/c-tool-result-/,
    );
    expect(store.locate('switchyard-artifact://session-1.2_x~y/toolu_01-tool-result-1')).toBe(
      path.join(dataDir, 'artifacts/session-1.2_x~y/toolu_01-tool-result-1'),
    );
    expect(store.locate('switchyard-artifact://my%20session/c-tool-result-1')).toBe(
      path.join(dataDir, 'artifacts/my%20session/c-tool-result-1'),
    );
  });

  it('refuses an empty session id', async () => {
    const store = new FileArtifactStore(await scratchDir());
    await expect(store.put({ sessionId: '', callId: 'c', content: 'x' })).rejects.toThrow(/session id/);
  });
});

describe('FileArtifactStore.prune (artifact retention)', () => {
  it('deletes session directories whose newest artifact is older than the limit, and keeps the rest', async () => {
    const store = new FileArtifactStore(await scratchDir());
    const old = await store.put({ sessionId: 'old', callId: 'c', content: 'old output' });
    const recent = await store.put({ sessionId: 'recent', callId: 'c', content: 'recent output' });
    await age(path.dirname(old.path), 10 * DAY_MS);
    await age(path.dirname(recent.path), 1 * DAY_MS);
    const report = await store.prune({ olderThanMs: 7 * DAY_MS });
    expect(report.removed.map((entry) => entry.session)).toEqual(['old']);
    expect(report.removed[0]?.bytes).toBe(Buffer.byteLength('old output'));
    expect(report.kept).toBe(1);
    await expect(stat(path.dirname(old.path))).rejects.toThrow();
    expect(await store.read(recent.uri)).toBe('recent output');
  });

  it('reports without deleting on a dry run, and never follows a symlink out of the root', async () => {
    const dataDir = await scratchDir();
    const store = new FileArtifactStore(dataDir);
    const old = await store.put({ sessionId: 'old', callId: 'c', content: 'x' });
    await age(path.dirname(old.path), 30 * DAY_MS);
    const outside = await scratchDir();
    await writeFile(path.join(outside, 'precious'), 'keep me');
    await symlink(outside, path.join(store.root, 'link'));
    const dry = await store.prune({ olderThanMs: DAY_MS, dryRun: true });
    expect(dry.removed.map((entry) => entry.session)).toEqual(['old']);
    expect(await store.read(old.uri)).toBe('x');
    await store.prune({ olderThanMs: 0 });
    expect(await readFile(path.join(outside, 'precious'), 'utf8')).toBe('keep me');
  });

  it('is fine when there is no artifact directory yet, and rejects a negative age', async () => {
    const store = new FileArtifactStore(path.join(await scratchDir(), 'never-written'));
    expect(await store.prune({ olderThanMs: DAY_MS })).toEqual({ removed: [], kept: 0 });
    await expect(store.prune({ olderThanMs: -1 })).rejects.toThrow(/olderThanMs/);
  });

  it('has a named default age', () => {
    expect(ARTIFACT_RETENTION.maxAgeMs).toBe(7 * DAY_MS);
  });
});

describe('switchyard artifacts prune', () => {
  const saved = process.env.SWITCHYARD_DATA_DIR;
  afterEach(() => {
    vi.restoreAllMocks();
    if (saved === undefined) delete process.env.SWITCHYARD_DATA_DIR;
    else process.env.SWITCHYARD_DATA_DIR = saved;
  });

  function capture(): { stdout: () => string; stderr: () => string } {
    let out = '';
    let err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      err += String(chunk);
      return true;
    });
    return { stdout: () => out, stderr: () => err };
  }

  it('deletes old session directories under SWITCHYARD_DATA_DIR with --older-than, and says what it did', async () => {
    const dataDir = await scratchDir();
    process.env.SWITCHYARD_DATA_DIR = dataDir;
    const store = new FileArtifactStore(dataDir);
    const old = await store.put({ sessionId: 'old-session', callId: 'c', content: 'x' });
    await store.put({ sessionId: 'new-session', callId: 'c', content: 'y' });
    await age(path.dirname(old.path), 3 * DAY_MS);
    const output = capture();
    expect(await main(['artifacts', 'prune', '--older-than', '2d'])).toBe(0);
    expect(output.stdout()).toContain('old-session');
    expect(output.stdout()).toMatch(/removed 1 session, kept 1/);
    expect((await readdir(store.root)).sort()).toEqual(['new-session']);
  });

  it('prints help, and rejects a malformed age', async () => {
    const output = capture();
    expect(await main(['artifacts', 'prune', '--help'])).toBe(0);
    expect(output.stdout()).toMatch(/--older-than/);
    expect(await main(['artifacts', 'prune', '--older-than', 'soon'])).toBe(2);
    expect(output.stderr()).toMatch(/--older-than/);
    expect(await main(['help'])).toBe(0);
    expect(output.stdout()).toMatch(/artifacts prune/);
  });

  it('uses the default age without --older-than and keeps a recent session', async () => {
    const dataDir = await scratchDir();
    process.env.SWITCHYARD_DATA_DIR = dataDir;
    await mkdir(path.join(dataDir, 'artifacts', 'recent'), { recursive: true });
    capture();
    expect(await main(['artifacts', 'prune', '--dry-run'])).toBe(0);
    expect(await readdir(path.join(dataDir, 'artifacts'))).toEqual(['recent']);
  });
});
