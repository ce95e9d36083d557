import { pathToFileURL } from 'node:url';
import { SwitchyardClient } from 'temporal-switchyard';
import type { SessionHandle } from 'temporal-switchyard';
import { builtinTools } from 'temporal-switchyard/worker';
import type { Tool } from 'temporal-switchyard/worker';

/** What every example agent loop takes: a Switchyard session, the tools its workers run, and the model API. */
export interface AgentLoopOptions {
  session: SessionHandle;
  /** The tools the model may call (the worker's tools; their schemas are exported for the model). */
  tools: readonly Tool[];
  prompt: string;
  apiKey: string;
  /** The API's base URL; the suite points it at a scripted model server. */
  baseUrl?: string;
  model?: string;
  /** Model requests at most (default 10). */
  maxSteps?: number;
}

export interface AgentLoopOutcome {
  /** The model's last text. */
  text: string;
  /** Model requests made. */
  steps: number;
}

/** POSTs JSON; a non-2xx answer throws with the API's own message. */
export async function postJson(url: string, headers: Record<string, string>, body: unknown): Promise<Response> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  return response;
}

/** A turn id per model reply, unique in the session. */
export const turnIdFor = (step: number): string => `turn-${step}-${Date.now().toString(36)}`;

/**
 * Runs an example against the real API when it is the program being run (`npx tsx examples/agent-anthropic.ts
 * "your prompt"`) and its key variable is set: a session on the Switchyard worker at `TEMPORAL_ADDRESS`, working in
 * the current directory, with the built-in tools.
 */
export async function runWhenMain(
  moduleUrl: string,
  keyVariable: string,
  loop: (options: AgentLoopOptions) => Promise<AgentLoopOutcome>,
): Promise<void> {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const apiKey = process.env[keyVariable];
  if (apiKey === undefined || apiKey === '') {
    console.error(`Set ${keyVariable} to run this example against the real API.`);
    process.exitCode = 1;
    return;
  }
  const client = await SwitchyardClient.connect();
  const session = await client.startSession(`agent-${Date.now().toString(36)}`, { cwd: process.cwd() });
  const outcome = await loop({
    session,
    tools: builtinTools(),
    prompt: process.argv[2] ?? 'Read README.md and say in one sentence what this project is.',
    apiKey,
  });
  console.log(outcome.text);
  await client.client.connection.close();
}
