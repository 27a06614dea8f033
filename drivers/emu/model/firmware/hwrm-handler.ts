/**
 * What an HWRM command handler of the software NIC's firmware is given and gives back. One
 * handler per row with layouts of the command table (firmware-hwrm/hwrm/commands.ts), typed
 * from that row: it receives the request decoded with the row's request layout and answers
 * either an HWRM error code or the row's response fields (the firmware adds the header:
 * error_code, req_type, seq_id, resp_len, valid). A handler checks its arguments before it
 * changes anything, so a refused command leaves the function as it was.
 *
 * Handlers are registered per family file (hwrm-function.ts, hwrm-port.ts, hwrm-ring.ts,
 * hwrm-l2.ts, hwrm-context-memory.ts) and looked up by req_type (hwrm-dispatch.ts).
 */
import type { HwrmCommandName, HwrmRequest, HwrmResponse } from '../../../../firmware-hwrm/hwrm/commands.ts';
import type { ModelBus } from '../bus.ts';
import type { FunctionResources, RoceOfFunction } from './function-resources.ts';
import type { BackingStoreV2 } from './hwrm-backing-store-v2.ts';
import type { TqmOffer } from './hwrm-backing-store.ts';

/** The firmware's state a handler may read and change. */
export interface HwrmContext {
  readonly bus: ModelBus;
  /** The function's state this firmware keeps (the RoCE firmware reads it). */
  readonly fn: FunctionResources;
  /** The function's RoCE side: reset with the function, and asked before a ring is freed. */
  readonly roce: RoceOfFunction;
  /** Context memory V2 (QCAPS_V2 / CFG_V2) between FUNC_RESETs. */
  readonly backingStoreV2: BackingStoreV2;
  /** The fast-path TQM rings BACKING_STORE_QCAPS offers (controls.offerTqmRings). */
  tqmOffer: TqmOffer;
  /** The next ring and statistics context ids: handed out once, FUNC_RESET does not start them again. */
  nextRingId: number;
  nextStatId: number;
  /** What HWRM_FUNC_RESET and a PCI function reset drop (HwrmFirmware.resetFunction). */
  resetFunction(): void;
  /** Called after a command that may open or close the L2 receive path for RoCE frames. */
  receivePathMayChange(): void;
}

/** A handler's answer: an HWRM error code, or the response fields it sets (the others stay zero). */
export type HwrmAnswer<K extends HwrmCommandName> =
  | { readonly error: number }
  | { readonly values: Partial<HwrmResponse<K>> };

export type HwrmHandler<K extends HwrmCommandName> = (ctx: HwrmContext, req: HwrmRequest<K>) => HwrmAnswer<K>;

/** A handler for every command with layouts: a row without one does not compile. */
export type HwrmHandlerTable = { readonly [K in HwrmCommandName]: HwrmHandler<K> };

/** Some of the table: what a family file registers (checked with `satisfies`). */
export type HwrmHandlers = Partial<HwrmHandlerTable>;
