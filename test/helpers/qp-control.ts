/**
 * A stepped software NIC opened through the public API, for the control-path tests of queue
 * pairs and regions (issue 3): what the model holds (tables, DMA, IOMMU mappings), the
 * requests the driver sent, and test-only wrappers that record or break the driver's RoCE
 * commands and DMA allocations for one NIC.
 */
import { Nic, nicInternals, type NicOptions } from '../../lib/nic.ts';
import type { EmuControls, EmuDevice } from '../../drivers/emu/host/device.ts';
import type { DmaBuffer } from '../../drivers/device.ts';
import type { MrAttributes, QpAttributes, RoceResources } from '../../drivers/emu/model/firmware/roce.ts';
import type { Result } from '../../lib/result.ts';

// roce_hsi.h: CMDQ_BASE_OPCODE_*.
export const OP = {
  CREATE_QP: 0x01, DESTROY_QP: 0x02, MODIFY_QP: 0x03, CREATE_CQ: 0x09, DESTROY_CQ: 0x0a,
  ALLOCATE_MRW: 0x0d, DEALLOCATE_KEY: 0x0e, REGISTER_MR: 0x0f, DEREGISTER_MR: 0x10,
} as const;
// roce_hsi.h: CREQ_BASE_STATUS_*.
export const STATUS = { FAIL: 0x1, RESOURCES: 0x2, INVALID_PARAMETER: 0x5 } as const;
// roce_hsi.h: CMDQ_MODIFY_QP_NEW_STATE_*.
export const STATE = { RESET: 0, INIT: 1, RTR: 2, RTS: 3, ERR: 6 } as const;
const STATE_NAME = ['RESET', 'INIT', 'RTR', 'RTS', 'SQD', 'SQE', 'ERR'];
const OP_NAME: Record<number, string> = Object.fromEntries(Object.entries(OP).map(([k, v]) => [v, k]));

/** A software NIC stepped in this thread; firmware waits are 50 ms of virtual time. */
export function openNic(options: NicOptions = {}): Nic {
  const n = Nic.open('emu', { stepped: true, firmwareTimeoutMs: 50, ...options });
  if (!n.ok) throw new Error(n.error);
  return n.value;
}

export function emu(nic: Nic): EmuDevice {
  return nicInternals(nic).device as EmuDevice;
}

/** The model's test and fault controls (they act at once: nothing queued is run first). */
export function controls(nic: Nic): EmuControls {
  return emu(nic).emu;
}

export function qpAttributes(nic: Nic, qpn: number): QpAttributes | undefined {
  return controls(nic).roce.qpAttributes(qpn);
}

export function mrAttributes(nic: Nic, key: number): MrAttributes | undefined {
  return controls(nic).roce.mrAttributes(key);
}

/** Everything a control-path operation may take: DMA memory, model tables, IOMMU mappings. */
export interface Holdings {
  readonly dmaBytes: number;
  readonly dmaBuffers: number;
  readonly quarantinedBytes: number;
  readonly roce: RoceResources;
  readonly hwrm: unknown;
  readonly iommuMappings: number;
}

export function holdings(nic: Nic): Holdings {
  const info = nic.info;
  return {
    dmaBytes: info.dmaBytes,
    dmaBuffers: emu(nic).dma.allocatedBuffers,
    quarantinedBytes: info.quarantinedBytes,
    roce: controls(nic).roce.resources(),
    hwrm: controls(nic).hwrm.resources(),
    iommuMappings: controls(nic).model.mappedBuffers(),
  };
}

/** Requests the driver sent so far, and commands the model took. */
export interface Requests {
  readonly rcfw: number;
  readonly hwrm: number;
  readonly seen: number;
}

export function requests(nic: Nic): Requests {
  const i = nicInternals(nic);
  return { rcfw: i.roce.rcfw.requests, hwrm: i.func.hwrm.requests, seen: controls(nic).roce.seen() };
}

/** One RoCE command the driver sent: its name (MODIFY_QP with its new state), body, and DMA in use then. */
export interface SentCommand {
  readonly opcode: number;
  readonly name: string;
  readonly body: Record<string, unknown>;
  readonly dmaBytesBefore: number;
  readonly ok: boolean;
}

type Send = (cmd: { opcode: number }, body: Record<string, unknown>, names?: readonly DmaBuffer[]) => Result<unknown>;

/**
 * Wraps the NIC's RCFW channel's `send` (test only): every command is recorded, and
 * `before(n, command)` runs before the nth command of the wrapper's life (1 = the first),
 * where a test may silence the model or throw. `restore()` puts the channel back.
 */
export function watchCommands(
  nic: Nic, before?: (n: number, name: string) => void,
): { readonly log: SentCommand[]; restore(): void } {
  const i = nicInternals(nic);
  const rcfw = i.roce.rcfw as unknown as { send: Send };
  const original = rcfw.send;
  const log: SentCommand[] = [];
  let n = 0;
  rcfw.send = function (cmd, body, names) {
    const name = commandName(cmd.opcode, body);
    before?.(++n, name);
    const dmaBytesBefore = i.func.pool.allocatedBytes;
    const r = original.call(this, cmd, body, names);
    log.push({ opcode: cmd.opcode, name, body, dmaBytesBefore, ok: r.ok });
    return r;
  };
  return { log, restore: () => { rcfw.send = original; } };
}

function commandName(opcode: number, body: Record<string, unknown>): string {
  const name = OP_NAME[opcode] ?? `0x${opcode.toString(16)}`;
  return opcode === OP.MODIFY_QP ? `MODIFY_QP ${STATE_NAME[body['new_state'] as number] ?? String(body['new_state'])}`
    : name;
}

/**
 * Wraps the NIC's DMA pool's `alloc` (test only): records every buffer handed out, and the
 * nth allocation from now (if given) fails as a machine out of memory would.
 */
export function watchAllocations(
  nic: Nic, failAt?: number,
): { readonly buffers: DmaBuffer[]; calls(): number; restore(): void } {
  const pool = nicInternals(nic).func.pool as unknown as { alloc(length: number): Result<DmaBuffer> };
  const original = pool.alloc;
  const buffers: DmaBuffer[] = [];
  let calls = 0;
  pool.alloc = function (length) {
    if (++calls === failAt) return { ok: false, error: `the machine has no memory for ${length} bytes (test)` };
    const r = original.call(this, length);
    if (r.ok) buffers.push(r.value);
    return r;
  };
  return { buffers, calls: () => calls, restore: () => { pool.alloc = original; } };
}

/** True if [a, a + la) and [b, b + lb) share a byte. */
export function overlaps(a: number, la: number, b: number, lb: number): boolean {
  return a < b + lb && b < a + la;
}

export function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(r.error);
  return r.value;
}
