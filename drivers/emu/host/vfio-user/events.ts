/** Messages between the vfio-user server's thread and the thread that started it. */
import type { HwrmObservation } from './nic-device.ts';

export interface ServerStats {
  readonly messages: number;
  readonly errors: number;
  readonly byCommand: Readonly<Record<string, number>>;
  readonly iommuFaults: number;
  /** Lines written to the HWRM trace (0 without one). */
  readonly traceLines: number;
  /**
   * The model's engine counters as it ended (engine.counters: packets, retransmissions, fault
   * drops...): the server ends when the client leaves, so no control can ask for them afterwards.
   */
  readonly engineCounters: Readonly<Record<string, number>>;
}

export type ServerEvent =
  | { readonly kind: 'listening'; readonly socketPath: string }
  | { readonly kind: 'connected' }
  | ({ readonly kind: 'hwrm' } & HwrmObservation)
  | { readonly kind: 'log'; readonly line: string }
  | { readonly kind: 'failed'; readonly error: string }
  /** A strict model's broken invariant (ModelInternalError): the model runs no more and the server ends. */
  | { readonly kind: 'model-failed'; readonly part: string; readonly detail: string }
  | {
    readonly kind: 'control-reply'; readonly id: number; readonly ok: boolean;
    readonly value?: unknown; readonly error?: string;
  }
  | { readonly kind: 'ended'; readonly reason: string; readonly stats: ServerStats };

export type ServerRequest =
  | { readonly kind: 'close' }
  /** A test or fault control of the served model (NicModel.control: 'part.op'). */
  | { readonly kind: 'control'; readonly id: number; readonly name: string; readonly args: readonly unknown[] };
