// The agent's workflow code: deterministic, no Node modules. The model call is an activity; tool calls run in this
// same workflow through Switchyard's `runToolTurn`, so approvals are signals on this workflow.
import { proxyActivities } from '@temporalio/workflow';
import { runToolTurn } from 'temporal-switchyard/workflows';
import type { SessionOptions, ToolCall, TurnResult } from 'temporal-switchyard/workflows';
import type { AgentActivities, AgentStep } from './model.js';

// A model request is idempotent: retried after a lost worker or a 5xx (a 4xx other than 429 is not retried).
const { callModel } = proxyActivities<AgentActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 5, initialInterval: '2 seconds' },
});

/** Start input of {@link durableAgent}. */
export interface AgentInput {
  /** The task, as the user typed it. */
  prompt: string;
  /** The workspace the tools work in (absolute). */
  cwd: string;
  /** Default `default`: edits and commands wait for a human's approval. */
  permissionMode?: SessionOptions['permissionMode'];
  rules?: SessionOptions['rules'];
  /** Model requests at most (default 20). */
  maxSteps?: number;
}

export interface AgentOutcome {
  /** The model's last text (or why the agent stopped). */
  text: string;
  /** Model requests made. */
  steps: number;
  /** How the loop ended. */
  ending: 'answered' | 'interrupted' | 'max_steps';
}

/**
 * An agent session as one Temporal workflow: ask the model, run the tool calls of its reply as one Switchyard turn,
 * give the results back, until the model answers without tools. Every step is in the workflow's history, so a killed
 * worker, or a pending approval, resumes where it was.
 */
export async function durableAgent(input: AgentInput): Promise<AgentOutcome> {
  const maxSteps = input.maxSteps ?? 20;
  const session: SessionOptions = {
    cwd: input.cwd,
    permissionMode: input.permissionMode ?? 'default',
    ...(input.rules === undefined ? {} : { rules: input.rules }),
  };
  const transcript: AgentStep[] = [];
  for (let step = 1; step <= maxSteps; step += 1) {
    const reply = await callModel({ prompt: input.prompt, cwd: input.cwd, transcript });
    if (reply.calls.length === 0) return { text: reply.text, steps: step, ending: 'answered' };
    const turn: TurnResult = await runToolTurn(reply.calls satisfies ToolCall[], {
      ...session,
      turnId: `turn-${step}`,
    });
    transcript.push({ content: reply.content, results: turn.results });
    // The `interrupt` signal (Interrupt in the console, `switchyard interrupt`) stops the turn, and the agent with it.
    if (turn.stopped && turn.stopReason?.startsWith('interrupted') === true)
      return { text: `Stopped: ${turn.stopReason}`, steps: step, ending: 'interrupted' };
  }
  return { text: `No final answer after ${maxSteps} model requests.`, steps: maxSteps, ending: 'max_steps' };
}
