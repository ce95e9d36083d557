import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The hand-written contender's read: what a user would write to read a file for a model. */
export async function readFileActivity(filePath: string): Promise<string> {
  return await readFile(filePath, 'utf8');
}

/** A read-only call of known duration (Switchyard's side runs the bench's `SlowRead` tool). */
export async function waitActivity(ms: number): Promise<string> {
  await sleep(ms);
  return `waited ${ms} ms`;
}

/** The hand-written write: the file's content, then a line for the model. */
export async function writeFileActivity(filePath: string, content: string): Promise<string> {
  await writeFile(filePath, content);
  return `File created successfully at: ${filePath}`;
}

/** The hand-written shell call: `bash -c`, its output for the model. */
export async function bashActivity(command: string, cwd: string): Promise<string> {
  const { stdout, stderr } = await run('/bin/bash', ['-c', command], { cwd });
  return `${stdout}${stderr}`;
}

export const rawActivities = { readFileActivity, waitActivity, writeFileActivity, bashActivity };
