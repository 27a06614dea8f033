/**
 * What a RoCE command handler is given and what it gives back. A handler checks every
 * argument before it changes anything, so a refused command leaves the tables as they were.
 */
import type { FirmwarePersonality } from './personality.ts';
import type { ModelBus } from '../bus.ts';
import type { EngineHooks } from '../objects.ts';
import type { FunctionResources } from './function-resources.ts';
import { RoceStatus } from '../../../../firmware-hwrm/roce/index.ts';
import type { RoceState } from './roce-tables.ts';
import type { RoceLimits } from './roce-limits.ts';

export interface Answer {
  readonly status: number;
  /** The 16-byte response (a creq_*_resp layout); the firmware fills type, status, cookie, v and event. */
  readonly entry?: Uint8Array;
  /** A side buffer (a creq_*_resp_sb layout); the firmware fills its 8-byte header. */
  readonly sideBuffer?: Uint8Array;
  /** Why the command was refused (for tests and traces). */
  readonly why?: string;
}

export interface RoceContext {
  readonly bus: ModelBus;
  /** What HWRM set up for the function (context memory, rings, statistics contexts); read only. */
  readonly fn: Readonly<FunctionResources>;
  readonly state: RoceState;
  /** The engine, told of state changes and destroyed QPs. */
  readonly hooks: EngineHooks;
  limits(): RoceLimits;
  /** The firmware this NIC plays (what QUERY_FUNC offers, which flows the commands take). */
  readonly firmware: FirmwarePersonality;
  /** Ring id of the CREQ named by the cmdq_init mailbox. */
  readonly creqRingId: number | undefined;
  /** The chip takes variable-size WQEs (CREATE_QP VARIABLE_SIZED_WQE_ENABLED): Thor2 only. */
  readonly variableWqe: boolean;
}

export function refuse(status: number, why: string): Answer {
  return { status, why };
}

export function success(entry?: Uint8Array, sideBuffer?: Uint8Array): Answer {
  return { status: RoceStatus.SUCCESS, entry, sideBuffer };
}

/** Splits a 64-bit handle into the halves the shared objects keep. */
export function handleHalves(handle: bigint): [number, number] {
  return [Number(handle & 0xffff_ffffn), Number((handle >> 32n) & 0xffff_ffffn)];
}
