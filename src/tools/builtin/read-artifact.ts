/**
 * Read of a `switchyard-artifact://<session>/<id>` reference: the one a `<persisted-output>` envelope gives the model
 * for an output too large to hand it whole. Read opens it like a file (offset and limit apply), but only an artifact
 * of the calling session: the session is part of the reference, so a reference from another session, or a made-up
 * one, is refused before anything is opened.
 */
import type { FileHandle } from 'node:fs/promises';
import { ARTIFACT_URI_SCHEME } from '../../contracts/artifact-store.js';
import type { ArtifactStore } from '../../contracts/artifact-store.js';
import { ToolUseError } from '../define-tool.js';
import { openRegularFile } from '../support/text-lines.js';

const ARTIFACT_REFERENCE = /^switchyard-artifact:\/\/([^/]+)\/([^/]+)$/;

/** Whether a Read `file_path` is an artifact reference rather than a path. */
export function isArtifactReference(filePath: string): boolean {
  return filePath.startsWith(`${ARTIFACT_URI_SCHEME}//`);
}

function decodedSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Why the session `sessionId` may not open `reference`, or undefined when it may. */
export function artifactReferenceProblem(reference: string, sessionId: string): string | undefined {
  const match = ARTIFACT_REFERENCE.exec(reference);
  const session = match?.[1] === undefined ? undefined : decodedSegment(match[1]);
  if (match === null || session === undefined)
    return `Not a Switchyard artifact reference: ${reference} (expected switchyard-artifact://<session>/<id>)`;
  if (session !== sessionId)
    return `${reference} belongs to another session: Read opens only the artifacts of this session.`;
  return undefined;
}

/** Opens the artifact for Read; every refusal is a `ToolUseError` the model can act on. */
export async function openArtifact(
  reference: string,
  context: { sessionId: string; artifacts: ArtifactStore | undefined },
): Promise<FileHandle> {
  const problem = artifactReferenceProblem(reference, context.sessionId);
  if (problem !== undefined) throw new ToolUseError(problem, 'artifact_not_accessible');
  if (context.artifacts === undefined)
    throw new ToolUseError(
      `This worker has no artifact store, so ${reference} cannot be read.`,
      'artifact_not_accessible',
    );
  let file: string;
  try {
    file = context.artifacts.locate(reference);
  } catch (error) {
    throw new ToolUseError(error instanceof Error ? error.message : String(error), 'artifact_not_accessible');
  }
  return openRegularFile(file).catch((error: unknown) => {
    const code = (error as NodeJS.ErrnoException).code;
    // The worker's own path stays out of the message: the model knows the artifact by its reference only.
    throw new ToolUseError(
      code === 'ENOENT' ? `Artifact not found: ${reference} (it may have been pruned)` : `Cannot read ${reference}`,
      'artifact_not_accessible',
    );
  });
}
