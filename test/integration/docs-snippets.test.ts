import { readFile, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { scratchDir } from '../support/harness.js';
import { checkDocuments, formatReport } from '../support/snippets.js';
import type { CheckedElsewhere } from '../support/snippets.js';
import { npm, packedPackage } from '../support/snippets-package.js';

// Every code block of README.md and docs/*.md, as printed (the markers: test/support/snippets.ts). TypeScript blocks
// are type-checked with strict tsc in a project with the packed package installed; the shell blocks run in order in
// one empty folder, the walkthrough's project, against the test's Temporal dev server, with no model key (the
// walkthrough's agent runs the scripted stand-in model, examples/scripted-model.ts); `npm i temporal-switchyard`
// installs the packed tarball, the package not being on the registry.

/** Blocks another test runs with values of its own (a real session's ids and digests). */
const elsewhere: CheckedElsewhere[] = [
  {
    doc: 'docs/APPROVALS.md',
    heading: 'Signing from Go',
    lang: 'go',
    test: 'test/integration/approval-signature-go.test.ts',
  },
  {
    doc: 'docs/APPROVALS.md',
    heading: 'Signing a policy change from Go',
    lang: 'go',
    test: 'test/integration/policy-signature-docs.test.ts',
  },
  {
    doc: 'docs/APPROVALS.md',
    heading: 'Signing a policy change from the shell',
    lang: 'sh',
    test: 'test/integration/policy-signature-docs.test.ts',
  },
];

async function documents(): Promise<Array<{ doc: string; text: string }>> {
  const docs = (await readdir('docs')).filter((name) => name.endsWith('.md')).sort();
  return Promise.all(
    ['README.md', ...docs.map((name) => `docs/${name}`)].map(async (doc) => ({
      doc,
      text: await readFile(doc, 'utf8'),
    })),
  );
}

describe('the code blocks of README.md and docs/', { timeout: 1_200_000 }, () => {
  it('the tests named for the blocks run elsewhere exist and read their document', async () => {
    for (const entry of elsewhere) expect(await readFile(entry.test, 'utf8')).toContain(entry.doc);
  });

  it('type-check, parse and run as printed, each no-run block with its reason', async () => {
    const packed = await packedPackage();
    const walkthrough = path.join(await scratchDir('switchyard-walkthrough-'), 'my-agent');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      // A home of its own, as a new user's: the data directory (keys, stored outputs) and settings start empty
      // where the blocks say (~/.local/share/switchyard); npm keeps the suite's cache.
      HOME: await scratchDir('switchyard-walkthrough-home-'),
      npm_config_cache: (await npm(['config', 'get', 'cache'], '.')).stdout.trim(),
      // The Temporal CLI where the quickstart left it (the suite's setup found or fetched it there).
      XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'),
      // A name the project has not installed is an error, never a download (the unrelated `switchyard` on npm).
      npm_config_yes: 'false',
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      CI: 'true',
    };
    // No model key: the walkthrough's agent runs the scripted model. The suite's own switches stay out.
    for (const name of [
      'ANTHROPIC_API_KEY',
      'OPENAI_API_KEY',
      'GEMINI_API_KEY',
      'SWITCHYARD_USE_SOURCES',
      'SWITCHYARD_TASK_QUEUE',
      'SWITCHYARD_DATA_DIR',
      'SWITCHYARD_USER_SETTINGS_DIR',
      'XDG_CONFIG_HOME',
      'XDG_DATA_HOME',
    ])
      delete env[name];
    const report = await checkDocuments(await documents(), {
      typeCheckProject: packed.project,
      walkthrough,
      env,
      elsewhere,
      onBlock: (line) => process.stderr.write(`[snippets] ${line}\n`),
      substitute: (code) => code.replace(/\bnpm (i|install) temporal-switchyard\b/g, `npm $1 ${packed.tarball}`),
    });
    console.log(formatReport(report));
    expect(report.failures).toEqual([]);
    expect(report.typeChecked).toBeGreaterThanOrEqual(5);
    expect(report.run).toBeGreaterThanOrEqual(4);
    expect(report.background).toBeGreaterThanOrEqual(1);
  });
});
