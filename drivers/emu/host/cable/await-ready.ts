import type { Result } from '../../../../firmware-hwrm/result.ts';

/** A socket cable whose `create` returns at once and whose `ready` settles when it can carry frames. */
export interface StartingCable {
  readonly ready: Promise<Result<void>>;
  close(): void;
}

/**
 * The `open` of a socket cable: waits for what `create` made to become ready. A cable that
 * fails to bind, connect or listen is closed here, so a failed open leaves no socket behind.
 */
export async function awaitReady<C extends StartingCable>(made: Result<C>): Promise<Result<C>> {
  if (!made.ok) return made;
  const ready = await made.value.ready;
  if (!ready.ok) {
    made.value.close();
    return ready;
  }
  return made;
}
