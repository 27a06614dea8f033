/**
 * The firmware's handlers by req_type: every family file's handlers, one per row with layouts
 * of the command table (firmware-hwrm/hwrm/commands.ts). The type below fails to compile when a
 * row has no handler; a req_type registered by two families is refused at load.
 */
import type { FieldSpec, Values } from '../../../../firmware-hwrm/layout.ts';
import {
  HWRM_COMMANDS, type HwrmCommand, type HwrmCommandName,
} from '../../../../firmware-hwrm/hwrm/commands.ts';
import type { HwrmContext, HwrmHandlerTable, HwrmHandlers } from './hwrm-handler.ts';
import { FUNCTION_HANDLERS } from './hwrm-function.ts';
import { RESERVATION_HANDLERS } from './hwrm-reservation.ts';
import { CONTEXT_MEMORY_HANDLERS } from './hwrm-context-memory.ts';
import { RING_HANDLERS } from './hwrm-ring.ts';
import { L2_HANDLERS } from './hwrm-l2.ts';
import { PORT_HANDLERS } from './hwrm-port.ts';

/** Any row's fields, seen through the layouts' common surface (names known only at run time). */
type AnyValues = Values<Record<string, FieldSpec>>;
/** An answer of any row's handler. */
export type AnyHwrmAnswer = { readonly error: number } | { readonly values: Partial<AnyValues> };
/** A handler seen through the table's common surface: a request its row's layout decoded in, an answer out. */
type ErasedHandler = (ctx: HwrmContext, req: AnyValues) => AnyHwrmAnswer;

/** A registered command: its row (layouts, name) and its handler. */
export interface HwrmEntry {
  readonly command: HwrmCommand;
  readonly handle: ErasedHandler;
}

const FAMILIES: readonly HwrmHandlers[] = [
  FUNCTION_HANDLERS, RESERVATION_HANDLERS, CONTEXT_MEMORY_HANDLERS, RING_HANDLERS, L2_HANDLERS, PORT_HANDLERS,
];

const ALL: HwrmHandlerTable = {
  ...FUNCTION_HANDLERS, ...RESERVATION_HANDLERS, ...CONTEXT_MEMORY_HANDLERS, ...RING_HANDLERS, ...L2_HANDLERS,
  ...PORT_HANDLERS,
};

function entries(): ReadonlyMap<number, HwrmEntry> {
  const registered = FAMILIES.reduce((n, family) => n + Object.keys(family).length, 0);
  if (registered !== Object.keys(ALL).length) throw new Error('an HWRM command has handlers in two family files');
  const table = new Map<number, HwrmEntry>();
  for (const name of Object.keys(ALL) as HwrmCommandName[]) {
    const command: HwrmCommand = HWRM_COMMANDS[name];
    // The one erasure: each handler was type-checked against its row's layouts where it is
    // written, and it is only ever given a request its row's layout decoded.
    table.set(command.req_type, { command, handle: ALL[name] as unknown as ErasedHandler });
  }
  return table;
}

/** The handler of every command the firmware has, by req_type. */
export const HWRM_HANDLERS: ReadonlyMap<number, HwrmEntry> = entries();
