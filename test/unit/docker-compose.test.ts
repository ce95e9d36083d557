import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../../src/contracts/defaults.js';
import { pendingApprovalsSearchAttribute } from '../../src/contracts/messages.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const readRepoFile = (relative: string): string => readFileSync(path.join(repoRoot, relative), 'utf8');

type Port = string | number | { target?: number | string; published?: number | string };
interface Service {
  image?: string;
  build?: unknown;
  entrypoint?: string | string[];
  command?: string | string[];
  environment?: Record<string, string | number | null> | string[];
  ports?: Port[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: (string | { target?: string })[];
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

const compose = parse(readRepoFile('docker-compose.yml')) as Compose;
const services = compose.services;

function service(name: string): Service {
  const found = services[name];
  if (found === undefined) throw new Error(`docker-compose.yml has no service "${name}"`);
  return found;
}

/** A command or entrypoint as one argv array (a string form is split on whitespace, as Compose does for simple ones). */
function argv(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? value.trim().split(/\s+/) : value;
}

function environment(svc: Service): Record<string, string> {
  const env = svc.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const eq = entry.indexOf('=');
        return eq === -1 ? [entry, ''] : [entry.slice(0, eq), entry.slice(eq + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, value === null ? '' : String(value)]));
}

/** Host ports a service publishes, from short ("8080:8080", "127.0.0.1:8080:8080/tcp") or long syntax. */
function publishedPorts(svc: Service): number[] {
  return (svc.ports ?? []).flatMap((port): number[] => {
    if (typeof port === 'number') return [port];
    if (typeof port === 'string') {
      const parts = port.replace(/\/(tcp|udp)$/, '').split(':');
      const host = parts.length >= 2 ? parts[parts.length - 2] : parts[0];
      return host === undefined ? [] : [Number(host)];
    }
    const published = port.published ?? port.target;
    return published === undefined ? [] : [Number(published)];
  });
}

/** Splits "registry:5000/org/name:tag@sha256:..." into name and tag; the tag is undefined when absent. */
function imageTag(image: string): string | undefined {
  const withoutDigest = image.split('@')[0] ?? image;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon === -1 ? undefined : withoutDigest.slice(colon + 1);
}

const adminToolsService = 'temporal-admin-tools';
const dockerfile = readRepoFile('Dockerfile');

describe('docker-compose.yml', () => {
  it('defines the database, Temporal server, admin tools, Web UI and Switchyard worker services', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['postgresql', 'temporal', adminToolsService, 'temporal-ui', 'switchyard-worker']),
    );
  });

  it('shows the scale-out split in a profile: a workflow-only worker, and a tool worker owning the workspace volume', () => {
    const workflows = service('switchyard-workflows') as Record<string, unknown>;
    const tools = service('switchyard-tools') as Record<string, unknown>;
    const env = (svc: Record<string, unknown>) => svc.environment as Record<string, string>;
    expect(workflows.profiles).toEqual(['scale-out']);
    expect(tools.profiles).toEqual(['scale-out']);
    expect(env(workflows).SWITCHYARD_WORKER_ROLE).toBe('workflows');
    expect(env(tools).SWITCHYARD_WORKER_ROLE).toBe('tools');
    expect(workflows.volumes).toBeUndefined();
    expect(tools.volumes).toEqual(['workspace:/workspace']);
    expect(env(tools).SWITCHYARD_TASK_QUEUE).not.toBe(env(workflows).SWITCHYARD_TASK_QUEUE);
  });

  it('pins every image tag', () => {
    const images = Object.entries(services).flatMap(([name, svc]) =>
      svc.image === undefined ? [] : [[name, svc.image] as const],
    );
    expect(images.length).toBeGreaterThanOrEqual(4);
    for (const [name, image] of images) {
      const tag = imageTag(image);
      expect(tag, `${name}: ${image} has no tag`).toBeDefined();
      expect(tag, `${name}: ${image} uses latest`).not.toBe('latest');
      expect(tag, `${name}: ${image} has no version number in its tag`).toMatch(/\d/);
    }
  });

  it('publishes Temporal gRPC on 7233 and the Web UI on 8080', () => {
    expect(publishedPorts(service('temporal'))).toContain(7233);
    expect(publishedPorts(service('temporal-ui'))).toContain(8080);
  });

  it('registers the SwitchyardPendingApprovals Int search attribute in the default namespace', () => {
    const admin = service(adminToolsService);
    const script = [...argv(admin.entrypoint), ...argv(admin.command)].join(' ');
    expect(pendingApprovalsSearchAttribute).toBe('SwitchyardPendingApprovals');
    expect(script).toContain('temporal operator search-attribute create');
    expect(script).toMatch(new RegExp(`--name[ =]${pendingApprovalsSearchAttribute}\\b`));
    expect(script).toMatch(/--type[ =]Int\b/);
    expect(script).toMatch(new RegExp(`--namespace[ =]${DEFAULT_NAMESPACE}\\b`));
    expect(script).toMatch(/--address[ =]temporal:7233\b/);
  });

  describe('search attribute setup script, run against a fake temporal CLI', () => {
    /** Runs the admin service's script under /bin/sh with `temporal` and `sleep` replaced by fakes. */
    function runSetup(mode: 'registered' | 'already-exists' | 'fresh' | 'starting' | 'down'): {
      status: number;
      calls: string[];
    } {
      const admin = service(adminToolsService);
      expect(argv(admin.entrypoint)).toEqual(['/bin/sh', '-c']);
      const [script] = argv(admin.command);
      // Compose interpolates `${VAR}`/`$VAR` and turns `$$` into `$`; the script must use only the escaped form.
      expect(script?.replace(/\$\$/g, '')).not.toMatch(/\$/);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-compose-'));
      try {
        const log = path.join(dir, 'calls.log');
        writeFileSync(path.join(dir, 'sleep'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
        writeFileSync(
          path.join(dir, 'temporal'),
          [
            '#!/bin/sh',
            `echo "$*" >> '${log}'`,
            `n=$(grep -c 'search-attribute create' '${log}')`,
            'case "$FAKE_MODE:$3" in',
            '  registered:list) printf "Name Type\\nSwitchyardPendingApprovals Int\\n"; exit 0 ;;',
            '  down:*) echo "connection refused" >&2; exit 1 ;;',
            '  *:list) echo "Name Type"; exit 0 ;;',
            '  already-exists:create) echo "Error: search attribute SwitchyardPendingApprovals already exists" >&2; exit 1 ;;',
            '  starting:create) if [ "$n" -lt 3 ]; then echo "namespace default is not found" >&2; exit 1; fi; exit 0 ;;',
            '  *:create) exit 0 ;;',
            'esac',
            'exit 2',
          ].join('\n'),
          { mode: 0o755 },
        );
        const result = spawnSync('/bin/sh', ['-c', (script ?? '').replace(/\$\$/g, () => '$')], {
          env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, FAKE_MODE: mode, SETUP_ATTEMPTS: '5' },
          encoding: 'utf8',
          timeout: 30_000,
        });
        const calls = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];
        return { status: result.status ?? -1, calls };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }

    it('creates the attribute when it is missing', () => {
      const { status, calls } = runSetup('fresh');
      expect(status).toBe(0);
      expect(calls.filter((call) => call.includes('search-attribute create'))).toHaveLength(1);
    });

    it('succeeds without creating when the attribute is already registered', () => {
      const { status, calls } = runSetup('registered');
      expect(status).toBe(0);
      expect(calls.some((call) => call.includes('search-attribute create'))).toBe(false);
    });

    it('succeeds when create reports that the attribute already exists', () => {
      expect(runSetup('already-exists').status).toBe(0);
    });

    it('retries until the server and namespace are ready', () => {
      const { status, calls } = runSetup('starting');
      expect(status).toBe(0);
      expect(calls.filter((call) => call.includes('search-attribute create'))).toHaveLength(3);
    });

    it('gives up with a failure when the server never answers', () => {
      const { status, calls } = runSetup('down');
      expect(status).not.toBe(0);
      expect(calls.filter((call) => call.includes('search-attribute create'))).toHaveLength(5);
    });
  });

  it('starts the worker only after the search attribute is registered', () => {
    const dependsOn = service('switchyard-worker').depends_on;
    expect(Array.isArray(dependsOn) ? undefined : dependsOn?.[adminToolsService]?.condition).toBe(
      'service_completed_successfully',
    );
  });

  it("runs the worker with node bin/switchyard.js worker and a workspace volume as the sessions' cwd", () => {
    const worker = service('switchyard-worker');
    const command = argv(worker.command);
    expect(command.slice(0, 3)).toEqual(['node', 'bin/switchyard.js', 'worker']);
    const cwdFlag = command.indexOf('--cwd');
    expect(cwdFlag).toBeGreaterThan(2);
    const cwd = command[cwdFlag + 1];
    expect(cwd).toBeDefined();
    const mounts = (worker.volumes ?? []).map((volume) =>
      typeof volume === 'string' ? volume.split(':')[1] : volume.target,
    );
    expect(mounts).toContain(cwd);
  });

  it('overrides the image ENTRYPOINT for the worker, so its command is not passed to bin/switchyard.js twice', () => {
    const entrypoint = argv(service('switchyard-worker').entrypoint);
    expect(entrypoint.length).toBeGreaterThan(0);
    expect(entrypoint).not.toContain('bin/switchyard.js');
  });

  it("runs a worker command that exists: bin/switchyard.js and the CLI's worker case", () => {
    expect(existsSync(path.join(repoRoot, 'bin/switchyard.js'))).toBe(true);
    // The image has no src/: bin/switchyard.js runs the built dist/cli/main.js, which the Dockerfile copies.
    expect(readRepoFile('bin/switchyard.js')).toContain('dist/cli/main.js');
    expect(readRepoFile('src/cli/main.ts')).toMatch(/^  worker: /m);
  });

  it('points the worker at the temporal service, default namespace and switchyard task queue', () => {
    const env = environment(service('switchyard-worker'));
    const temporalPort = publishedPorts(service('temporal'))[0];
    expect(env.TEMPORAL_ADDRESS).toBe(`temporal:${temporalPort}`);
    expect(env.TEMPORAL_NAMESPACE).toBe(DEFAULT_NAMESPACE);
    expect(env.SWITCHYARD_TASK_QUEUE).toBe(DEFAULT_TASK_QUEUE);
  });

  it('connects Temporal to the postgresql service', () => {
    const env = environment(service('temporal'));
    expect(env.DB).toBe('postgres12');
    expect(env.POSTGRES_SEEDS).toBe('postgresql');
    expect(environment(service('postgresql')).POSTGRES_USER).toBe(env.POSTGRES_USER);
  });
});

describe('Dockerfile', () => {
  it('pins the base image tag', () => {
    const from = /^FROM\s+(\S+)/m.exec(dockerfile)?.[1];
    expect(from).toBeDefined();
    const tag = imageTag(from ?? '');
    expect(tag).toBeDefined();
    expect(tag).not.toBe('latest');
    expect(tag).toMatch(/\d/);
  });

  it('has an ENTRYPOINT that runs bin/switchyard.js', () => {
    const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile)?.[1];
    expect(entrypoint).toBeDefined();
    expect(JSON.parse(entrypoint ?? '[]')).toEqual(['node', 'bin/switchyard.js']);
  });

  it('builds the package and ships dist/ and bin/, not the TypeScript sources', () => {
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    expect(dockerfile).toMatch(/^COPY --from=build \/app\/dist\/ \.\/dist\/$/m);
    expect(dockerfile).toMatch(/^COPY bin\/ \.\/bin\/$/m);
    expect(dockerfile.split(/^FROM /m).at(-1)).not.toMatch(/^COPY src\//m);
  });

  it('runs as the non-root node user', () => {
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((match) => match[1]);
    expect(users.at(-1)).toBe('node');
  });
});
