/** The software NIC's RoCE engine. Placeholder until the data path lands. */
import type { NicModel } from '../nic-model.ts';

export class RoceEngine {
  constructor(private readonly model: NicModel) {}
  doorbell(_offset: number, _lo: number, _hi: number, _is64: boolean): void {}
  run(_nowNs: number): boolean {
    return false;
  }
  nextDeadlineNs(): number {
    return Infinity;
  }
  close(): void {}
  readonly controls = {};
}
