import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

// The code blocks of the documentation, as the snippet test runs them (test/integration/docs-snippets.test.ts). A
// fenced block's info string is its language, then optional words:
//   ts                 a whole TypeScript module: type-checked with strict tsc against the installed package
//   ts file=agent.ts   also written to that file of the walkthrough's project, so a later shell block runs it
//   ts fragment        joined, in order, with the section's other fragments (up to the next heading of the same or
//                      higher level) and type-checked as one module
//   sh                 run in order in the walkthrough's project (bash, stopping at the first failing command)
//   sh background      started; the next block waits for its first line of output (it is up); stopped when its
//                      section's blocks are done. Exiting on its own with a failure fails it
//   json               must parse (json file=NAME is also written)
//   text, or none      output shown to the reader; not run
//   <any> no-run       not run: right above it (blank lines aside) is an italic paragraph `*Not run in CI: …*`
// Any other language, or a word not listed here, is a failure: a block the test cannot check must say why.

export interface Block {
  /** The document, as given (README.md, docs/CLI.md). */
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  words: string[];
  /** `file=NAME`'s NAME. */
  file?: string;
  /** Heading indices enclosing the block, outermost first (-1: before any heading). */
  sections: number[];
  /** The heading text of the innermost section. */
  heading: string;
  code: string;
  /** The `*Not run in CI: …*` paragraph right above the block, if there is one. */
  reason?: string;
}

/** Words a block may carry besides its language: markers, and labels other tests find a block by. */
const MARKERS = new Set(['fragment', 'no-run', 'background']);
const LABELS = new Set(['mcp-config']);
const TYPESCRIPT = new Set(['ts', 'typescript']);
const SHELL = new Set(['sh', 'bash', 'shell']);
const OUTPUT = new Set(['', 'text']);

/** Every fenced block of a Markdown text, with its markers and section. */
export function extractBlocks(doc: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  const headings: Array<{ level: number; index: number; text: string }> = [];
  let headingCount = 0;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] ?? '';
    const heading = /^(#{1,6}) (.*)$/.exec(line);
    if (heading) {
      const level = heading[1]?.length ?? 1;
      while ((headings.at(-1)?.level ?? 0) >= level) headings.pop();
      headings.push({ level, index: headingCount, text: heading[2] ?? '' });
      headingCount += 1;
      continue;
    }
    const fence = /^( *)(`{3,}|~{3,})(.*)$/.exec(line);
    if (!fence) continue;
    const indent = fence[1]?.length ?? 0;
    const marker = fence[2] ?? '```';
    const [lang = '', ...words] = (fence[3] ?? '').trim().split(/\s+/).filter(Boolean);
    const body: string[] = [];
    let end = index + 1;
    for (; end < lines.length; end += 1) {
      const closing = lines[end] ?? '';
      if (closing.trim().startsWith(marker) && closing.trim().replace(/[`~]/g, '') === '') break;
      body.push(closing.startsWith(' '.repeat(indent)) ? closing.slice(indent) : closing.trimStart());
    }
    // The paragraph right above the block, blank lines aside (a reason may wrap over several lines).
    let above = index - 1;
    while (above >= 0 && (lines[above] ?? '').trim() === '') above -= 1;
    const paragraph: string[] = [];
    for (
      ;
      above >= 0 && (lines[above] ?? '').trim() !== '' && !/^#{1,6} |^ *(`{3,}|~{3,})/.test(lines[above] ?? '');
      above -= 1
    )
      paragraph.unshift((lines[above] ?? '').trim());
    const reasonLine = paragraph.join(' ');
    const file = words.find((word) => word.startsWith('file='))?.slice('file='.length);
    blocks.push({
      doc,
      line: index + 1,
      lang: lang.toLowerCase(),
      words: words.filter((word) => !word.startsWith('file=')),
      ...(file === undefined ? {} : { file }),
      sections: headings.length === 0 ? [-1] : headings.map((entry) => entry.index),
      heading: headings.at(-1)?.text ?? '',
      code: body.length === 0 ? '' : `${body.join('\n')}\n`,
      ...(/^\*Not run in CI: .+\*$/.test(reasonLine) ? { reason: reasonLine.slice(1, -1) } : {}),
    });
    index = end;
  }
  return blocks;
}

export type BlockKind = 'typescript' | 'shell' | 'background' | 'json' | 'output' | 'no-run' | 'elsewhere';

/** A block another test runs with values of its own (a real session's ids), named with that test. */
export interface CheckedElsewhere {
  doc: string;
  heading: string;
  lang: string;
  test: string;
}

/** What the snippet test does with a block, or why it cannot. */
export function kindOf(block: Block, elsewhere: readonly CheckedElsewhere[] = []): BlockKind | { problem: string } {
  const where = `${block.doc}:${block.line}`;
  const unknown = block.words.filter((word) => !MARKERS.has(word) && !LABELS.has(word));
  if (unknown.length > 0)
    return { problem: `${where}: unknown word(s) ${unknown.join(', ')} after \`\`\`${block.lang}` };
  if (block.words.includes('no-run')) {
    if (block.reason === undefined)
      return {
        problem: `${where}: a no-run block needs its reason right above it, in italics: "*Not run in CI: …*"`,
      };
    return 'no-run';
  }
  if (
    elsewhere.some((entry) => entry.doc === block.doc && entry.heading === block.heading && entry.lang === block.lang)
  )
    return 'elsewhere';
  if (block.words.includes('fragment') && !TYPESCRIPT.has(block.lang))
    return { problem: `${where}: only TypeScript blocks are fragments` };
  if (block.words.includes('background') && !SHELL.has(block.lang))
    return { problem: `${where}: only shell blocks run in the background` };
  if (TYPESCRIPT.has(block.lang)) return 'typescript';
  if (SHELL.has(block.lang)) return block.words.includes('background') ? 'background' : 'shell';
  if (block.lang === 'json') return 'json';
  if (OUTPUT.has(block.lang)) return 'output';
  return {
    problem: `${where}: nothing runs a \`\`\`${block.lang} block: mark it no-run with its reason, or text if it is output`,
  };
}

export interface CheckOptions {
  /** A folder with temporal-switchyard (and @types/node, zod) installed: the TypeScript blocks are checked there. */
  typeCheckProject: string;
  /** The walkthrough's project: shell blocks run here, `file=` blocks are written here. It may start empty. */
  walkthrough: string;
  /** The environment of the shell blocks. */
  env: NodeJS.ProcessEnv;
  /** Rewrites a shell block before it runs (the package's registry name to the packed tarball). */
  substitute?: (code: string) => string;
  elsewhere?: readonly CheckedElsewhere[];
  /** Per shell block, and for a background block's first line (default 240 s). */
  timeoutMs?: number;
  /** Told of each block run or started, and how it went: a long run shows where it is. */
  onBlock?: (line: string) => void;
  /** Where tsc finds @types (default: the project's own node_modules/@types). */
  typeRoots?: string[];
}

export interface SnippetReport {
  typeChecked: number;
  run: number;
  background: number;
  json: number;
  output: number;
  elsewhere: number;
  noRun: Array<{ where: string; reason: string }>;
  failures: string[];
}

/** The TypeScript files made from a document's blocks: one per block, one per section's fragments. */
interface TypeScriptUnit {
  name: string;
  source: string;
  /** The block each line came from, as `doc:line`. */
  origins: string[];
}

function typeScriptUnits(blocks: readonly Block[], folder: string): TypeScriptUnit[] {
  const units: TypeScriptUnit[] = [];
  const fragments = new Map<number, TypeScriptUnit>();
  for (const block of blocks) {
    const lines = block.code.split('\n');
    const origins = lines.map((_, offset) => `${block.doc}:${block.line + 1 + offset}`);
    if (block.words.includes('fragment')) {
      const section = block.sections.at(-1) ?? -1;
      const unit = fragments.get(section);
      if (unit === undefined) {
        const created = { name: `${folder}/fragments-${block.line}.ts`, source: block.code, origins };
        fragments.set(section, created);
        units.push(created);
      } else {
        // The last origin is the empty line after the previous block's final newline: this block's first line.
        unit.source += block.code;
        unit.origins.pop();
        unit.origins.push(...origins);
      }
    } else {
      units.push({ name: `${folder}/${block.file ?? `block-${block.line}.ts`}`, source: block.code, origins });
    }
  }
  return units;
}

/** Strict tsc over every unit at once: the errors, each at the block line it came from. */
async function typeCheck(project: string, units: readonly TypeScriptUnit[], typeRoots?: string[]): Promise<string[]> {
  if (units.length === 0) return [];
  for (const unit of units) {
    await mkdir(path.dirname(path.join(project, unit.name)), { recursive: true });
    await writeFile(path.join(project, unit.name), unit.source);
  }
  const config = path.join(project, 'tsconfig.snippets.json');
  await writeFile(
    config,
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        moduleDetection: 'force',
        strict: true,
        noEmit: true,
        types: ['node'],
        ...(typeRoots === undefined ? {} : { typeRoots }),
        skipLibCheck: true,
      },
      files: units.map((unit) => unit.name),
    }),
  );
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const { code, output } = await runProcess(process.execPath, [tsc, '-p', config, '--pretty', 'false'], {
    cwd: project,
    env: process.env,
    timeoutMs: 600_000,
  });
  if (code === 0) return [];
  const errors: string[] = [];
  for (const line of output.split('\n')) {
    const located = /^(.+?)\((\d+),(\d+)\): (error TS\d+: .*)$/.exec(line);
    if (!located) {
      if (/error TS\d+/.test(line)) errors.push(line);
      continue;
    }
    const unit = units.find(
      (candidate) => path.resolve(project, candidate.name) === path.resolve(project, located[1] ?? ''),
    );
    const origin = unit?.origins[Number(located[2]) - 1] ?? `${located[1]}:${located[2]}`;
    errors.push(`${origin}: ${located[4]}`);
  }
  return errors.length > 0 ? errors : [`tsc exited ${code}: ${output.slice(0, 2_000)}`];
}

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

/** A background block's process: its output so far, and whether it ended. */
interface Background {
  block: Block;
  child: ChildProcess;
  output: string;
  exited?: { code: number | null; signal: NodeJS.Signals | null };
  closed: Promise<void>;
}

function startBackground(block: Block, code: string, options: CheckOptions): Background {
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', code], {
    cwd: options.walkthrough,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const background: Background = { block, child, output: '', closed: Promise.resolve() };
  background.closed = new Promise((resolve) => {
    child.on('close', (exitCode, signal) => {
      background.exited = { code: exitCode, signal };
      resolve();
    });
  });
  child.stdout?.on('data', (chunk: Buffer) => (background.output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (background.output += chunk.toString()));
  return background;
}

/** Stops a background block's whole process group as Ctrl-C does, then for good. */
async function stopBackground(background: Background): Promise<void> {
  const pid = background.child.pid;
  if (background.exited === undefined && pid !== undefined) {
    const signal = (name: NodeJS.Signals): void => {
      try {
        process.kill(-pid, name);
      } catch {
        // already gone
      }
    };
    signal('SIGINT');
    const killer = setTimeout(() => signal('SIGKILL'), 15_000);
    await background.closed;
    clearTimeout(killer);
  }
}

const tail = (text: string): string => text.split('\n').slice(-25).join('\n');

/** Checks the blocks of the documents, in order: the report says what ran and what failed. */
export async function checkDocuments(
  docs: ReadonlyArray<{ doc: string; text: string }>,
  options: CheckOptions,
): Promise<SnippetReport> {
  const report: SnippetReport = {
    typeChecked: 0,
    run: 0,
    background: 0,
    json: 0,
    output: 0,
    elsewhere: 0,
    noRun: [],
    failures: [],
  };
  const timeoutMs = options.timeoutMs ?? 240_000;
  const units: TypeScriptUnit[] = [];
  const kinds = new Map<Block, BlockKind>();
  const documents = docs.map(({ doc, text }) => ({ doc, blocks: extractBlocks(doc, text) }));
  for (const { doc, blocks } of documents) {
    const typescript: Block[] = [];
    for (const block of blocks) {
      const kind = kindOf(block, options.elsewhere);
      if (typeof kind !== 'string') {
        report.failures.push(kind.problem);
        continue;
      }
      kinds.set(block, kind);
      if (kind === 'typescript') typescript.push(block);
      if (kind === 'no-run') report.noRun.push({ where: `${block.doc}:${block.line}`, reason: block.reason ?? '' });
      if (kind === 'output') report.output += 1;
      if (kind === 'elsewhere') report.elsewhere += 1;
      if (kind === 'json') {
        report.json += 1;
        try {
          JSON.parse(block.code);
        } catch (error) {
          report.failures.push(`${block.doc}:${block.line}: the json block does not parse: ${String(error)}`);
        }
      }
    }
    report.typeChecked += typescript.length;
    units.push(...typeScriptUnits(typescript, `snippets/${doc.replace(/[^A-Za-z0-9]+/g, '-')}`));
  }
  // One tsc for every TypeScript block of every document (each its own file in one project).
  const errors = await typeCheck(options.typeCheckProject, units, options.typeRoots);
  options.onBlock?.(`tsc over ${units.length} files: ${errors.length} errors`);
  report.failures.push(...errors);

  // The walkthroughs: documents in order, blocks in order, in one project folder, as a reader follows them.
  await mkdir(options.walkthrough, { recursive: true });
  const running: Background[] = [];
  const stopFinished = async (block: Block | undefined): Promise<void> => {
    for (const background of [...running]) {
      const section = background.block.sections.at(-1) ?? -1;
      const sameDoc = block !== undefined && block.doc === background.block.doc;
      if (sameDoc && (section === -1 || block.sections.includes(section))) continue;
      running.splice(running.indexOf(background), 1);
      await stopBackground(background);
      const exited = background.exited;
      if (exited !== undefined && exited.signal === null && exited.code !== 0 && exited.code !== 130)
        report.failures.push(
          `${background.block.doc}:${background.block.line}: the background block exited ${exited.code}:\n${tail(background.output)}`,
        );
    }
  };
  try {
    for (const { blocks } of documents) {
      for (const block of blocks) {
        const kind = kinds.get(block);
        if (kind === undefined) continue;
        await stopFinished(block);
        if (block.file !== undefined && kind !== 'no-run') {
          await mkdir(path.dirname(path.join(options.walkthrough, block.file)), { recursive: true });
          await writeFile(path.join(options.walkthrough, block.file), block.code);
        }
        if (kind !== 'shell' && kind !== 'background') continue;
        const code = options.substitute?.(block.code) ?? block.code;
        if (kind === 'background') {
          report.background += 1;
          const background = startBackground(block, code, options);
          running.push(background);
          const started = Date.now();
          while (background.output === '' && background.exited === undefined && Date.now() - started < timeoutMs)
            await new Promise((resolve) => setTimeout(resolve, 100));
          options.onBlock?.(`${block.doc}:${block.line}: started in the background (${Date.now() - started} ms)`);
          if (background.output === '' && background.exited === undefined)
            report.failures.push(`${block.doc}:${block.line}: the background block printed nothing in ${timeoutMs} ms`);
          continue;
        }
        report.run += 1;
        const started = Date.now();
        const result = await runProcess('bash', ['-e', '-o', 'pipefail', '-c', code], {
          cwd: options.walkthrough,
          env: options.env,
          timeoutMs,
        });
        options.onBlock?.(
          `${block.doc}:${block.line}: exit ${result.code ?? result.signal} in ${Date.now() - started} ms`,
        );
        if (result.code !== 0) {
          const others = running.map(
            (background) =>
              `--- ${background.block.doc}:${background.block.line} (background):\n${tail(background.output)}`,
          );
          report.failures.push(
            [
              `${block.doc}:${block.line}: the sh block exited ${result.code ?? result.signal}:`,
              block.code.trimEnd(),
              '--- its output:',
              tail(result.output),
              ...others,
            ].join('\n'),
          );
        }
      }
    }
  } finally {
    await stopFinished(undefined);
  }
  return report;
}

/** The counts, as the test prints them. */
export function formatReport(report: SnippetReport): string {
  return [
    `snippets: ${report.typeChecked} TypeScript blocks type-checked; ${report.run} shell blocks run and ${report.background} started in the background; ${report.json} json blocks parsed; ${report.output} output-only; ${report.elsewhere} run by other tests; ${report.noRun.length} marked no-run:`,
    ...report.noRun.map((entry) => `  ${entry.where}: ${entry.reason}`),
  ].join('\n');
}
