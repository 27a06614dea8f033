/**
 * What runs a software NIC's model for a Device (drivers/emu/host/device.ts): in this thread on a
 * virtual clock (stepped-host.ts) or in a worker thread in real time (worker-host.ts). Either
 * gives the device the same five things, so nothing above knows which it has.
 */
import type { Clock } from '../../device.ts';
import type { WriteQueueProducer } from './write-queue-producer.ts';
import type { DmaMapper } from './dma-memory.ts';
import type { EmuControls } from './control.ts';
import type { ModelInit } from '../model/nic-model.ts';

export interface ModelHost {
  /** Where BAR writes and doorbells go, in order. */
  readonly queue: WriteQueueProducer;
  /** Maps DMA memory into the model's IOMMU. */
  readonly mapper: DmaMapper;
  readonly clock: Clock;
  readonly controls: EmuControls;
  /**
   * Stops the model; no DMA reaches host memory after it. Throws the ModelInternalError that
   * stopped a strict model, if one did (so a test that missed it still fails).
   */
  close(): void;
}

/** What a host starts a model with: the model's shared memory and config, and the driver's wake block (wake.ts). */
export interface HostInit extends ModelInit {
  readonly wake: SharedArrayBuffer;
}
