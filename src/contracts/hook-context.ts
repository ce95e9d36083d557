/**
 * Hook additional context: what hooks add for the model, collected in hook order (PreToolUse first, then PostToolUse
 * or PostToolUseFailure) and joined under `[Hook additional context]` when the result is handed out, after the
 * aggregate budget (docs/SEMANTICS.md, Hooks). Pure: no Node modules.
 */
import { texts } from './texts.js';

/** The texts of hook answers that add context, in order; empty or missing ones add nothing. */
export function hookContextOf(answers: ReadonlyArray<{ additionalContext?: unknown }>): string[] {
  return answers.flatMap((answer) =>
    typeof answer.additionalContext === 'string' && answer.additionalContext !== '' ? [answer.additionalContext] : [],
  );
}

/** One call's context: its PreToolUse hooks' (from Prepare), then its PostToolUse hooks' (from Execute). */
export function joinHookContext(...parts: ReadonlyArray<readonly string[] | undefined>): string[] {
  return parts.flatMap((part) => part ?? []);
}

/** Hook context reaches the model under `[Hook additional context]`, numbered, after the content. */
export function withHookContext(content: string, context: readonly string[]): string {
  if (context.length === 0) return content;
  const lines = context.map((text, index) => `${index + 1}. ${text}`);
  return `${content.replace(/\n+$/, '')}\n\n${texts.hookContextHeader}\n${lines.join('\n')}`;
}
