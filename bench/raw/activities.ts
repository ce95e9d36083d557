import { readFile } from 'node:fs/promises';

/** The hand-written contender's only activity: what a user would write to read a file for a model. */
export async function readFileActivity(filePath: string): Promise<string> {
  return await readFile(filePath, 'utf8');
}

export const rawActivities = { readFileActivity };
