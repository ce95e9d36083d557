// An approval evaluator without a model: `switchyard worker --evaluator examples/evaluators/rule-based.ts`, then
// start sessions with `approvalEvaluator: 'rule-based'`. It allows shell commands made only of well-known harmless
// programs, denies any command that runs `rm`, and leaves everything else to the human.
import type { ApprovalEvaluator, EvaluationRequest, EvaluationResult } from '../../src/contracts/policy.js';

/** Programs whose plain use changes nothing a user would miss. */
const HARMLESS = new Set(['ls', 'cat', 'echo', 'pwd', 'touch', 'mkdir', 'wc', 'head', 'tail', 'grep', 'date', 'true']);
/** Programs this evaluator refuses outright. */
const REFUSED = new Set(['rm', 'rmdir', 'shred', 'dd', 'mkfs']);

/** The first word of each simple command of a plain list (`a && b; c | d`); undefined for anything more complex. */
function programsOf(command: string): string[] | undefined {
  if (/[`$(){}<>\\]/.test(command)) return undefined;
  return command
    .split(/&&|\|\||[;|\n]/)
    .map((part) => part.trim().split(/\s+/)[0] ?? '')
    .filter((program) => program !== '');
}

export const ruleBasedEvaluator: ApprovalEvaluator = {
  name: 'rule-based',
  async evaluate(request: EvaluationRequest): Promise<EvaluationResult> {
    if (request.toolName !== 'Bash')
      return { decision: 'escalate', reason: `${request.toolName} calls are left to a human.` };
    const command = String((request.input as { command?: unknown }).command ?? '');
    // Anything that names a refused program is denied, however it is spelt around it.
    const refused = command.split(/[^A-Za-z0-9_.-]+/).find((word) => REFUSED.has(word));
    if (refused !== undefined)
      return { decision: 'deny', reason: `The command runs ${refused}, which this evaluator never allows.` };
    const programs = programsOf(command);
    if (programs === undefined || programs.length === 0)
      return { decision: 'escalate', reason: 'The command is not a plain list of simple commands.' };
    const unknown = programs.find((program) => !HARMLESS.has(program));
    if (unknown !== undefined)
      return { decision: 'escalate', reason: `${unknown} is not on the list of harmless programs.` };
    return { decision: 'allow', reason: `Only harmless programs: ${programs.join(', ')}.` };
  },
};

// eslint-disable-next-line no-restricted-syntax -- `--evaluator MODULE` loads a module's default export
export default [ruleBasedEvaluator];
