/**
 * The RoCE firmware's command table: opcode -> handler, and the gate every command passes
 * first (qplib_rcfw.c __send_message; roce_hsi.h cmdq_base opcodes). Before INITIALIZE_FW only QUERY_FUNC,
 * QUERY_VERSION and INITIALIZE_FW are taken.
 *
 * Status codes (roce_hsi.h CREQ_QP_EVENT_STATUS_*), as this model uses them:
 *   INVALID_CMD        unknown opcode, malformed framing, or not allowed in the function's state
 *   NOT_IMPLEMENTED    a real command (or QP type, flag) the model does not run
 *   INVALID_PARAMETER  a bad argument: unknown object, value out of range, unmapped memory,
 *                      illegal QP transition or missing modify-mask bits
 *   RESOURCES          a table is full, or no context memory for INITIALIZE_FW
 *   FAIL               the object is still in use (CQ by a QP, GID by a QP, objects at DEINITIALIZE_FW)
 */
import { RoceOpcode as O, RoceStatus, roceOpcodeName } from '../../../../firmware-hwrm/roce/index.ts';
import { refuse, type Answer, type RoceContext } from './roce-answer.ts';
import { deinitializeFw, initializeFw, queryFunc, queryVersion } from './roce-cmd-fw.ts';
import { createQp, destroyQp, queryQp } from './roce-cmd-qp.ts';
import { modifyQp } from './roce-cmd-modify-qp.ts';
import { createCq, destroyCq } from './roce-cmd-cq.ts';
import { allocateMrw, deallocateKey, deregisterMr, registerMr } from './roce-cmd-mr.ts';
import { addGid, deleteGid } from './roce-cmd-gid.ts';
import { modifyRoceCc } from './roce-cmd-cc.ts';

type Handler = (ctx: RoceContext, cmd: Uint8Array) => Answer;

const HANDLERS = new Map<number, Handler>([
  [O.CREATE_QP, createQp],
  [O.DESTROY_QP, destroyQp],
  [O.MODIFY_QP, modifyQp],
  [O.QUERY_QP, queryQp],
  [O.CREATE_CQ, createCq],
  [O.DESTROY_CQ, destroyCq],
  [O.ALLOCATE_MRW, allocateMrw],
  [O.DEALLOCATE_KEY, deallocateKey],
  [O.REGISTER_MR, registerMr],
  [O.DEREGISTER_MR, deregisterMr],
  [O.ADD_GID, addGid],
  [O.DELETE_GID, deleteGid],
  [O.INITIALIZE_FW, initializeFw],
  [O.DEINITIALIZE_FW, (ctx) => deinitializeFw(ctx)],
  [O.QUERY_FUNC, (ctx) => queryFunc(ctx)],
  [O.QUERY_VERSION, (ctx) => queryVersion(ctx)],
  [O.MODIFY_ROCE_CC, modifyRoceCc],
]);

/** Every opcode of roce_hsi.h; those without a handler are answered NOT_IMPLEMENTED. */
const KNOWN_OPCODES = new Set<number>(Object.values(O));

/** Commands taken before INITIALIZE_FW. */
const BEFORE_INIT = new Set<number>([O.QUERY_FUNC, O.QUERY_VERSION, O.INITIALIZE_FW]);

export function runCommand(ctx: RoceContext, opcode: number, cmd: Uint8Array): Answer {
  const name = roceOpcodeName(opcode);
  if (!KNOWN_OPCODES.has(opcode)) return refuse(RoceStatus.INVALID_CMD, `opcode 0x${opcode.toString(16)} is unknown`);
  if (!ctx.state.initialized && !BEFORE_INIT.has(opcode))
    return refuse(RoceStatus.INVALID_CMD, `${name} before INITIALIZE_FW`);
  const handler = HANDLERS.get(opcode);
  if (!handler) return refuse(RoceStatus.NOT_IMPLEMENTED, `${name} is not modelled`);
  return handler(ctx, cmd);
}
