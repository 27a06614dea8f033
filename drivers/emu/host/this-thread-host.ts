/**
 * The ModelHost of a model that runs in the driver's own thread (stepped-host.ts, inline-host.ts,
 * inline-udp-host.ts): a BAR write or doorbell lets the clock run the model at once, DMA maps go
 * straight to its IOMMU, and close takes it out of whatever runs it before it stops. The hosts
 * differ only in their clocks and in what they take the model out of.
 */
import type { Clock } from '../../device.ts';
import { WriteQueueProducer } from './write-queue-producer.ts';
import type { NicModel, ModelInit } from '../model/nic-model.ts';
import type { ModelHost } from './model-host.ts';

export function thisThreadHost(model: NicModel, init: ModelInit, clock: Clock, detach: () => void): ModelHost {
  return {
    queue: new WriteQueueProducer(init.queue, () => clock.relax()),
    mapper: {
      map: (iova, memory, length) => model.iommu.map(iova, memory, length),
      unmap: (iova) => model.iommu.unmap(iova),
    },
    clock,
    controls: model.controls,
    close() {
      detach();
      model.close();
      // A strict model's broken invariant fails the test that closes it, even one that missed it.
      if (model.failure) throw model.failure;
    },
  };
}
