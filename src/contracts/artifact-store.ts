/** The artifact store's contract: where full outputs live outside Temporal history (claim check). Pure types. */

export const ARTIFACT_URI_SCHEME = 'switchyard-artifact:';

export interface StoredArtifact {
  /** `switchyard-artifact://<session>/<id>`. */
  uri: string;
  /** Where the bytes are, for the `<persisted-output>` envelope. */
  path: string;
  bytes: number;
}

/** Where full tool outputs live outside Temporal history (claim check). Replace it to share one store between hosts. */
export interface ArtifactStore {
  /** Stores text, or moves a spool file the tool wrote. */
  put(options: { sessionId: string; callId: string; content: string } | { sessionId: string; callId: string; file: string }): Promise<StoredArtifact>;
  read(uri: string): Promise<string>;
  /** The path of an artifact; throws for a malformed or foreign URI. */
  locate(uri: string): string;
}
