import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

// The package as a user gets it, made once per test run for every test file that needs it (the package test and the
// snippet test): `npm pack` (which builds dist/ through `prepare`) and the tarball installed into an empty project,
// shared through the run's temporary folder. The first file to ask packs and installs; the others wait for its
// answer. Optional dependencies are left out, as a library user may: the client and worker must not need them.

const run = promisify(execFile);
const repoRoot = path.resolve('.');

export const ownPackage = JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

export const npm = (args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) =>
  run('npm', args, {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...env, npm_config_audit: 'false', npm_config_fund: 'false' },
  });

export interface PackedPackage {
  /** The tarball `npm pack` wrote. */
  tarball: string;
  /** The files it holds. */
  files: string[];
  /** An installed consumer project: the tarball, zod and @types/node (type: module, no optional dependencies). */
  project: string;
}

async function packAndInstall(folder: string): Promise<PackedPackage> {
  const packed = JSON.parse((await npm(['pack', '--json', '--pack-destination', folder], repoRoot)).stdout) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const tarball = path.join(folder, packed[0]?.filename ?? '');
  const files = packed[0]?.files.map((file) => file.path) ?? [];
  const project = path.join(folder, 'consumer');
  await mkdir(project);
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({
      name: 'consumer',
      private: true,
      type: 'module',
      dependencies: { [ownPackage.name]: `file:${tarball}`, zod: ownPackage.dependencies.zod },
      devDependencies: { '@types/node': ownPackage.devDependencies['@types/node'] },
    }),
  );
  // From the npm cache (the suite's own `npm ci` filled it); the registry only for what the cache lacks.
  await npm(['install', '--prefer-offline', '--omit=optional', '--no-package-lock'], project);
  return { tarball, files, project };
}

/** The packed package and its installed consumer project, made once per run. */
export async function packedPackage(): Promise<PackedPackage> {
  const runTmp = process.env.SWITCHYARD_TEST_RUN_TMP ?? os.tmpdir();
  const folder = path.join(runTmp, `packed-${ownPackage.name}`);
  const answer = path.join(folder, 'answer.json');
  let mine = true;
  try {
    await mkdir(folder);
  } catch {
    mine = false;
  }
  if (mine) {
    const result = await packAndInstall(folder).then(
      (packed) => ({ packed }),
      (error: unknown) => ({ error: String((error as { stderr?: string }).stderr ?? error) }),
    );
    // Written whole, then renamed: a waiting file never reads half of it.
    await writeFile(`${answer}.partial`, JSON.stringify(result));
    await rename(`${answer}.partial`, answer);
  }
  const deadline = Date.now() + 900_000;
  while (!existsSync(answer)) {
    if (Date.now() > deadline) throw new Error(`no answer from the test file packing the package in ${folder}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const result = JSON.parse(await readFile(answer, 'utf8')) as { packed?: PackedPackage; error?: string };
  if (result.packed === undefined) throw new Error(`npm pack and install failed: ${result.error}`);
  return result.packed;
}
