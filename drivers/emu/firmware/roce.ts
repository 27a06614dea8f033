/** The software NIC's RoCE firmware (CMDQ/CREQ). Placeholder until the control path lands. */
import type { NicModel } from '../nic-model.ts';

export class RoceFirmware {
  constructor(private readonly model: NicModel) {}
  trigger(_value: number): void {}
  reset(): void {}
  usesRing(_ringId: number): boolean {
    return false;
  }
  readonly controls = {};
}
