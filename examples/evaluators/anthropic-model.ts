// An approval evaluator that asks a model (the Anthropic Messages API): `ANTHROPIC_API_KEY=… switchyard worker
// --evaluator examples/evaluators/anthropic-model.ts`, then start sessions with `approvalEvaluator: 'anthropic-model'`.
// The model sees the command, the rule that asked and the session's recent calls. It fails closed: an answer it
// cannot read, an API error or a missing key escalates to the human, never allows.
import type { ApprovalEvaluator, EvaluationRequest, EvaluationResult } from '../../src/contracts/policy.js';

export interface ModelEvaluatorOptions {
  name?: string;
  apiKey: string;
  /** Default `https://api.anthropic.com`; the test suite points it at a scripted server. */
  baseUrl?: string;
  model?: string;
}

const INSTRUCTIONS = [
  'You review one tool call an AI coding agent wants to run, for a human who would otherwise be asked.',
  'Answer with one line of JSON only: {"decision": "allow" | "deny" | "escalate", "reason": "<one sentence>"}.',
  'Allow only what is clearly harmless in the working directory; deny what is clearly destructive or exfiltrates data;',
  'escalate whenever you are unsure.',
].join(' ');

function prompt(request: EvaluationRequest): string {
  const history = request.recentHistory
    .map((call) => `- ${call.toolName} ${call.status}${call.message === undefined ? '' : `: ${call.message}`}`)
    .join('\n');
  return [
    `Tool: ${request.toolName}`,
    `Input: ${JSON.stringify(request.input)}`,
    `Working directory: ${request.cwd}`,
    `Why it needs approval: ${request.reason}`,
    `The session's recent calls:\n${history || '(none)'}`,
  ].join('\n');
}

/** The model's `{ decision, reason }`, or an escalation when its text is not that. */
export function readAnswer(text: string): EvaluationResult {
  const match = /\{[\s\S]*\}/.exec(text);
  try {
    const answer = JSON.parse(match?.[0] ?? '') as { decision?: unknown; reason?: unknown };
    if (
      (answer.decision === 'allow' || answer.decision === 'deny' || answer.decision === 'escalate') &&
      typeof answer.reason === 'string'
    ) {
      return { decision: answer.decision, reason: answer.reason };
    }
  } catch {
    // fall through: unreadable
  }
  return { decision: 'escalate', reason: 'The model gave no readable decision.' };
}

export function createModelEvaluator(options: ModelEvaluatorOptions): ApprovalEvaluator {
  return {
    name: options.name ?? 'anthropic-model',
    async evaluate(request) {
      if (options.apiKey === '') return { decision: 'escalate', reason: 'No ANTHROPIC_API_KEY: the human decides.' };
      const response = await fetch(`${options.baseUrl ?? 'https://api.anthropic.com'}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': options.apiKey, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: options.model ?? 'claude-haiku-4-5',
          max_tokens: 200,
          system: INSTRUCTIONS,
          messages: [{ role: 'user', content: prompt(request) }],
        }),
      });
      if (!response.ok) return { decision: 'escalate', reason: `The model API answered ${response.status}.` };
      const body = (await response.json()) as { content?: Array<{ type: string; text?: string }> };
      return readAnswer((body.content ?? []).map((block) => block.text ?? '').join(''));
    },
  };
}

// eslint-disable-next-line no-restricted-syntax -- `--evaluator MODULE` loads a module's default export
export default [
  createModelEvaluator({
    apiKey: process.env.ANTHROPIC_API_KEY ?? '',
    ...(process.env.ANTHROPIC_BASE_URL === undefined ? {} : { baseUrl: process.env.ANTHROPIC_BASE_URL }),
  }),
];
