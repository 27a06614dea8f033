/**
 * How the host of a software NIC reaches its model outside the bus: DMA mappings (the IOMMU's
 * page tables) and the test and fault controls. In a worker, each message is followed by a
 * Control entry in the write queue, so the model takes it in order with the bus writes.
 *
 * The controls are typed by the model's own control objects (NicModel.controls): a stepped
 * device hands those out; a worker's host gets their names when the worker starts and builds
 * the same surface, each call going to the worker by name and waiting for its answer.
 */
import type { ControlNames, NicModel } from '../model/nic-model.ts';

export type ControlMessage =
  | { readonly op: 'map'; readonly iova: number; readonly memory: SharedArrayBuffer; readonly length: number }
  | { readonly op: 'unmap'; readonly iova: number }
  | { readonly op: 'call'; readonly id: number; readonly name: string; readonly args: readonly unknown[] }
  /** Close the model (sockets, capture flushed) and answer `id` once it is closed. */
  | { readonly op: 'close'; readonly id: number };

/**
 * A worker's answer to call `id`. Id 0: it started, and `value` holds its ControlNames.
 * FAILURE_REPLY: it stopped on a broken invariant in `part`, described by `error`.
 */
export type ControlReply = {
  readonly id: number;
  readonly ok: boolean;
  readonly value?: unknown;
  readonly error?: string;
  readonly part?: string;
};

export const FAILURE_REPLY = -1;

/** A software NIC's test and fault controls: emu.engine.counters(), emu.hwrm.refuseType(type, code), ... */
export type EmuControls = NicModel['controls'];

/** The controls of a model elsewhere: every call goes through `call` by its name ('part.op'). */
export function controlsByName(names: ControlNames, call: (name: string, args: unknown[]) => unknown): EmuControls {
  const surface: Record<string, Readonly<Record<string, (...args: unknown[]) => unknown>>> = {};
  for (const [part, ops] of Object.entries(names)) {
    const methods: Record<string, (...args: unknown[]) => unknown> = {};
    for (const op of ops) methods[op] = (...args) => call(`${part}.${op}`, args);
    surface[part] = Object.freeze(methods);
  }
  // The names are the model's own (NicModel.controlNames): the shapes agree by construction.
  return Object.freeze(surface) as unknown as EmuControls;
}
