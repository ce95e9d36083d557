import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  LAYERS,
  importsOf,
  importsOfFiles,
  layerBreaches,
  roomCycles,
  roomsOnDisk,
  sharedBaseNames,
} from '../../scripts/layer-map.js';
import { sourceFilesUnder } from '../../scripts/source-sizes.js';

// The layer map (scripts/layer-map.ts) is true: no file of src/ imports from a higher layer or from another folder of
// its own layer, and no folders import each other in a circle. Type-only imports count as imports.

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the layer checker', () => {
  const layers = [['contracts'], ['tools', 'hooks'], ['cli']];

  it('reads static imports, type imports, re-exports and dynamic imports, resolved against the file', () => {
    const source = [
      "import { a } from '../contracts/a.js';",
      "import type { B } from '../tools/b.js';",
      "import { type C } from '../hooks/c.js';",
      "export { d } from './d.js';",
      "const e = await import('../cli/e.js');",
      "import { z } from 'zod';",
    ].join('\n');
    expect(importsOf('src/activities/x.ts', source)).toEqual([
      { file: 'src/activities/x.ts', target: 'src/contracts/a.js', typeOnly: false },
      { file: 'src/activities/x.ts', target: 'src/tools/b.js', typeOnly: true },
      { file: 'src/activities/x.ts', target: 'src/hooks/c.js', typeOnly: false },
      { file: 'src/activities/x.ts', target: 'src/activities/d.js', typeOnly: false },
      { file: 'src/activities/x.ts', target: 'src/cli/e.js', typeOnly: false },
    ]);
  });

  it('accepts imports down the layers and within a folder', () => {
    const imports = [
      { file: 'src/cli/main.ts', target: 'src/tools/x.js', typeOnly: false },
      { file: 'src/tools/a.ts', target: 'src/contracts/x.js', typeOnly: false },
      { file: 'src/tools/a.ts', target: 'src/tools/support/y.js', typeOnly: false },
    ];
    expect(layerBreaches(imports, layers)).toEqual([]);
    expect(roomCycles(imports)).toEqual([]);
  });

  it('names an import up a layer, a type import too, and one across a layer', () => {
    const imports = [
      { file: 'src/contracts/a.ts', target: 'src/tools/x.js', typeOnly: false },
      { file: 'src/tools/a.ts', target: 'src/cli/x.js', typeOnly: true },
      { file: 'src/tools/a.ts', target: 'src/hooks/x.js', typeOnly: false },
      { file: 'src/tools/a.ts', target: 'src/elsewhere/x.js', typeOnly: false },
    ];
    expect(layerBreaches(imports, layers)).toEqual([
      'src/contracts/a.ts: import of src/tools/x.js: contracts (layer 0) imports tools, a higher layer',
      'src/tools/a.ts: type import of src/cli/x.js: tools (layer 1) imports cli, a higher layer',
      'src/tools/a.ts: import of src/hooks/x.js: tools imports hooks, a folder of its own layer',
      'src/tools/a.ts: import of src/elsewhere/x.js: elsewhere is not in the layer map',
    ]);
  });

  it('names folders that import each other in a circle', () => {
    const imports = [
      { file: 'src/tools/a.ts', target: 'src/artifacts/x.js', typeOnly: false },
      { file: 'src/artifacts/a.ts', target: 'src/config/x.js', typeOnly: false },
      { file: 'src/config/a.ts', target: 'src/tools/x.js', typeOnly: true },
      { file: 'src/cli/a.ts', target: 'src/tools/x.js', typeOnly: false },
    ];
    expect(roomCycles(imports)).toEqual([['artifacts', 'config', 'tools']]);
  });
});

describe('the name checker', () => {
  it('names a base name two files share, and lets index.ts be', () => {
    const files = ['src/contracts/tasks.ts', 'src/tools/tasks.ts', 'src/index.ts', 'src/worker/index.ts', 'src/a.ts'];
    expect(sharedBaseNames(files)).toEqual(['tasks.ts: src/contracts/tasks.ts, src/tools/tasks.ts']);
  });
});

describe('src/', () => {
  const imports = importsOfFiles(root, sourceFilesUnder(root, 'src'));

  it('has every folder in the layer map, and the map no folder that is gone', () => {
    expect(roomsOnDisk(root)).toEqual([...LAYERS.flat()].sort());
  });

  it('imports only down the layer map', () => {
    expect(layerBreaches(imports)).toEqual([]);
  });

  it('has no circle of folders', () => {
    expect(roomCycles(imports)).toEqual([]);
  });

  it('gives each concept one name: no two files share a base name (index.ts aside)', () => {
    expect(sharedBaseNames(sourceFilesUnder(root, 'src'))).toEqual([]);
  });
});
