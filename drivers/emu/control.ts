/**
 * Messages between the host side of a software NIC and its model, outside the bus: DMA
 * mappings (the IOMMU's page tables) and the test/fault controls. Each is followed by a
 * Control entry in the write queue so the model takes it in order with the bus writes.
 */
export type ControlMessage =
  | { readonly op: 'map'; readonly iova: number; readonly memory: SharedArrayBuffer; readonly length: number }
  | { readonly op: 'unmap'; readonly iova: number }
  | { readonly op: 'call'; readonly id: number; readonly name: string; readonly args: readonly unknown[] }
  | { readonly op: 'close' };

export type ControlReply = { readonly id: number; readonly ok: boolean; readonly value?: unknown; readonly error?: string };
