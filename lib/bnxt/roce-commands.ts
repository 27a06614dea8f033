/** The RoCE commands the driver sends: opcode plus the layout of the command (firmware-hwrm/roce). */
import * as R from '../../firmware-hwrm/roce/index.ts';

export const QUERY_FUNC = { opcode: R.RoceOpcode.QUERY_FUNC, layout: R.CmdqQueryFunc };
export const INITIALIZE_FW = { opcode: R.RoceOpcode.INITIALIZE_FW, layout: R.CmdqInitializeFw };
export const DEINITIALIZE_FW = { opcode: R.RoceOpcode.DEINITIALIZE_FW, layout: R.CmdqDeinitializeFw };
export const ADD_GID = { opcode: R.RoceOpcode.ADD_GID, layout: R.CmdqAddGid };
export const DELETE_GID = { opcode: R.RoceOpcode.DELETE_GID, layout: R.CmdqDeleteGid };
export const CREATE_CQ = { opcode: R.RoceOpcode.CREATE_CQ, layout: R.CmdqCreateCq };
export const DESTROY_CQ = { opcode: R.RoceOpcode.DESTROY_CQ, layout: R.CmdqDestroyCq };
export const CREATE_QP = { opcode: R.RoceOpcode.CREATE_QP, layout: R.CmdqCreateQp };
export const MODIFY_QP = { opcode: R.RoceOpcode.MODIFY_QP, layout: R.CmdqModifyQp };
export const DESTROY_QP = { opcode: R.RoceOpcode.DESTROY_QP, layout: R.CmdqDestroyQp };
export const REGISTER_MR = { opcode: R.RoceOpcode.REGISTER_MR, layout: R.CmdqRegisterMr };
export const DEREGISTER_MR = { opcode: R.RoceOpcode.DEREGISTER_MR, layout: R.CmdqDeregisterMr };
export const ALLOCATE_MRW = { opcode: R.RoceOpcode.ALLOCATE_MRW, layout: R.CmdqAllocateMrw };
export const DEALLOCATE_KEY = { opcode: R.RoceOpcode.DEALLOCATE_KEY, layout: R.CmdqDeallocateKey };
