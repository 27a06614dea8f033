/**
 * The command trace's records and their decoders (pure: no I/O). One record per HWRM request
 * or response, RoCE command (CMDQ) or answer (CREQ), decoded with the same layout tables the
 * codecs use, so a trace names each field exactly as the public headers do (bnxt_hsi.h,
 * roce_hsi.h, lower case). Written as JSON lines (drivers/trace-file.ts):
 *
 *   {"t":<ns>,"ch":"hwrm"|"cmdq"|"creq"|"db"|"wqe","dir":"req"|"resp","name":"MODIFY_QP","fields":{...}}
 *
 * Numbers are JSON numbers; 64-bit fields and byte arrays are "0x…" strings (a u64 as its
 * value, bytes in wire order). Two optional keys: `side` (a CREQ answer's side buffer, decoded
 * with its creq_*_resp_sb layout) and `why` (a refusal's reason, where the writer knows it);
 * `tlv` marks a command that came TLV-encapsulated (qplib_tlv.h). A command or answer without a
 * layout here is traced with its header fields (cmdq_base, creq_base, input, output) only.
 * A CREQ entry is traced as the firmware composed it: its `v` bit is the ring's to set (0 here).
 *
 * The data path: a "db" record per 64-bit doorbell (bnxt_hsi.h struct dbc_dbc: index, epoch,
 * toggle, xid, path, valid, debug_trace, type; named by its DBC_DBC_TYPE_*), and, on the
 * software NIC, a "wqe" record per WQE it fetched (roce_hsi.h struct sq_send_hdr or sq_rdma_hdr
 * by wqe_type, or rq_wqe_hdr; named by SQ_BASE_WQE_TYPE_* or RCV), with its SGEs as
 * `sge<i>.va_or_pa`, `sge<i>.l_key`, `sge<i>.size` (struct sq_sge) for the 16-byte units its
 * wqe_size gives beyond the 32-byte header. Both carry `qp` (a WQE's QP number) or nothing else:
 * a doorbell names its queue in xid.
 */
import type { FieldSpec, Layout } from './layout.ts';
import { hwrmCommand, hwrmRequestName, HwrmInput, HwrmOutput } from './hwrm/index.ts';
import {
  CmdqAddGid, CmdqAllocateMrw, CmdqBase, CmdqCreateCq, CmdqCreateQp, CmdqDeallocateKey, CmdqDeinitializeFw,
  CmdqDeleteGid, CmdqDeregisterMr, CmdqDestroyCq, CmdqDestroyQp, CmdqInitializeFw, CmdqModifyQp,
  CmdqQueryFunc, CmdqQueryQp, CmdqQueryVersion, CmdqRegisterMr, CreqAddGidResp, CreqAllocateMrwResp,
  CreqBase, CreqCqErrorNotification, CreqCreateCqResp, CreqCreateQpResp, CreqDeallocateKeyResp,
  CreqDeinitializeFwResp, CreqDeleteGidResp, CreqDeregisterMrResp, CreqDestroyCqResp, CreqDestroyQpResp,
  CreqEvent, CreqFuncEvent, CreqInitializeFwResp, CreqModifyQpResp, CreqQpErrorNotification, CreqQpEvent,
  CreqQueryFuncResp, CreqQueryFuncRespSb, CreqQueryQpResp, CreqQueryQpRespSb, CreqQueryVersionResp,
  CreqRegisterMrResp, CreqType, DbcDbc, dbcTypeName, RQ_WQE_TYPE_RCV, RoceOpcode as O, roceOpcodeName,
  RqWqeHdr, SqRdmaHdr, SqSendHdr, SqSge, WqeFlags, WqeType, wqeTypeName,
} from './roce/index.ts';

export type TraceChannel = 'hwrm' | 'cmdq' | 'creq' | 'db' | 'wqe';
export type TraceFields = Record<string, number | string>;

/** One record before the writer stamps its time. */
export interface TraceEvent {
  readonly ch: TraceChannel;
  readonly dir: 'req' | 'resp';
  readonly name: string;
  readonly fields: TraceFields;
  readonly side?: TraceFields;
  readonly why?: string;
  readonly tlv?: boolean;
  /** A WQE's queue pair. */
  readonly qp?: number;
}

/** A record as written: `t` is nanoseconds since the trace was opened. */
export interface TraceRecord extends TraceEvent {
  readonly t: number;
}

/** Where a producer of trace events sends them (a file, a test's array). */
export interface TraceSink {
  write(event: TraceEvent): void;
}

type AnyLayout = Layout<Record<string, FieldSpec>>;
const any = (l: unknown) => l as AnyLayout;

const hex = (b: Uint8Array) => `0x${Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')}`;

/** Every field of `layout` in `bytes` (short input reads as zero-padded) as trace values. */
export function traceFields(layout: AnyLayout, bytes: Uint8Array): TraceFields {
  const values = layout.decode(bytes) as Record<string, unknown>;
  const out: TraceFields = {};
  for (const [name, spec] of Object.entries(layout.fields)) {
    const v = values[name];
    if (spec.kind === 'u64' || spec.kind === 'u64n') out[name] = `0x${BigInt(v as number | bigint).toString(16)}`;
    else if (v instanceof Uint8Array) out[name] = hex(v);
    else out[name] = v as number;
  }
  return out;
}

/** An HWRM request (its input layout) or response (its output layout; an error answer as `output`). */
export function hwrmEvent(dir: 'req' | 'resp', reqType: number, bytes: Uint8Array): TraceEvent {
  const spec = hwrmCommand(reqType);
  let layout: AnyLayout;
  if (dir === 'req') layout = spec?.request ?? any(HwrmInput);
  else {
    const ok = bytes.length >= 2 && (bytes[0]! | (bytes[1]! << 8)) === 0;
    layout = ok ? (spec?.response ?? any(HwrmOutput)) : any(HwrmOutput);
  }
  return { ch: 'hwrm', dir, name: hwrmRequestName(reqType), fields: traceFields(layout, bytes) };
}

/** Command layouts by opcode, and their CREQ answers (roce_hsi.h cmdq_* / creq_*_resp). */
const COMMANDS = new Map<number, readonly [AnyLayout, AnyLayout, AnyLayout?]>([
  [O.CREATE_QP, [any(CmdqCreateQp), any(CreqCreateQpResp)]],
  [O.DESTROY_QP, [any(CmdqDestroyQp), any(CreqDestroyQpResp)]],
  [O.MODIFY_QP, [any(CmdqModifyQp), any(CreqModifyQpResp)]],
  [O.QUERY_QP, [any(CmdqQueryQp), any(CreqQueryQpResp), any(CreqQueryQpRespSb)]],
  [O.CREATE_CQ, [any(CmdqCreateCq), any(CreqCreateCqResp)]],
  [O.DESTROY_CQ, [any(CmdqDestroyCq), any(CreqDestroyCqResp)]],
  [O.ALLOCATE_MRW, [any(CmdqAllocateMrw), any(CreqAllocateMrwResp)]],
  [O.DEALLOCATE_KEY, [any(CmdqDeallocateKey), any(CreqDeallocateKeyResp)]],
  [O.REGISTER_MR, [any(CmdqRegisterMr), any(CreqRegisterMrResp)]],
  [O.DEREGISTER_MR, [any(CmdqDeregisterMr), any(CreqDeregisterMrResp)]],
  [O.ADD_GID, [any(CmdqAddGid), any(CreqAddGidResp)]],
  [O.DELETE_GID, [any(CmdqDeleteGid), any(CreqDeleteGidResp)]],
  [O.INITIALIZE_FW, [any(CmdqInitializeFw), any(CreqInitializeFwResp)]],
  [O.DEINITIALIZE_FW, [any(CmdqDeinitializeFw), any(CreqDeinitializeFwResp)]],
  [O.QUERY_FUNC, [any(CmdqQueryFunc), any(CreqQueryFuncResp), any(CreqQueryFuncRespSb)]],
  [O.QUERY_VERSION, [any(CmdqQueryVersion), any(CreqQueryVersionResp)]],
]);

/** A RoCE command as the CMDQ carried it (a TLV-encapsulated one: the command inside). */
export function cmdqEvent(cmd: Uint8Array, tlv = false): TraceEvent {
  const opcode = cmd[0] ?? 0;
  const layout = COMMANDS.get(opcode)?.[0] ?? any(CmdqBase);
  const e: TraceEvent = { ch: 'cmdq', dir: 'req', name: roceOpcodeName(opcode), fields: traceFields(layout, cmd) };
  return tlv ? { ...e, tlv } : e;
}

/**
 * A CREQ entry: a command's answer (creq_qp_event whose event is the opcode, decoded with that
 * command's response layout, and its side buffer when given), a QP or CQ error notification,
 * or a function event. `why`: the writer's reason for a refusal.
 */
export function creqEvent(entry: Uint8Array, sideBuffer?: Uint8Array, why?: string): TraceEvent {
  const type = (entry[0] ?? 0) & 0x3f;
  const event = entry[9] ?? 0;
  let name: string;
  let layout: AnyLayout;
  let side: TraceFields | undefined;
  if (type === CreqType.FUNC_EVENT) {
    name = 'FUNC_EVENT';
    layout = any(CreqFuncEvent);
  } else if (type !== CreqType.QP_EVENT) {
    name = `CREQ_TYPE_0x${type.toString(16)}`;
    layout = any(CreqBase);
  } else if (event === CreqEvent.QP_ERROR_NOTIFICATION) {
    name = 'QP_ERROR_NOTIFICATION';
    layout = any(CreqQpErrorNotification);
  } else if (event === CreqEvent.CQ_ERROR_NOTIFICATION) {
    name = 'CQ_ERROR_NOTIFICATION';
    layout = any(CreqCqErrorNotification);
  } else {
    const spec = COMMANDS.get(event);
    name = roceOpcodeName(event);
    // A refusal carries only the common creq_qp_event fields.
    layout = (entry[1] ?? 0) === 0 ? (spec?.[1] ?? any(CreqQpEvent)) : any(CreqQpEvent);
    if (sideBuffer !== undefined && spec?.[2] !== undefined) side = traceFields(spec[2], sideBuffer);
  }
  const e: { -readonly [K in keyof TraceEvent]: TraceEvent[K] } = {
    ch: 'creq', dir: 'resp', name, fields: traceFields(layout, entry),
  };
  if (side !== undefined) e.side = side;
  if (why !== undefined) e.why = why;
  return e;
}

/** A 64-bit doorbell as written (lo = bytes 0-3, hi = bytes 4-7 of struct dbc_dbc). */
export function dbEvent(lo: number, hi: number): TraceEvent {
  const b = new Uint8Array(8);
  const v = new DataView(b.buffer);
  v.setUint32(0, lo >>> 0, true);
  v.setUint32(4, hi >>> 0, true);
  const fields = traceFields(any(DbcDbc), b);
  return { ch: 'db', dir: 'req', name: dbcTypeName(fields['type'] as number), fields };
}

const SGE_AT = 32;
const SGE_UNIT = 16;

/** The SGEs a WQE's wqe_size (16-byte units, header included) says follow its 32-byte header. */
function sgeFields(out: TraceFields, wqe: Uint8Array, wqeSize: number): void {
  const count = Math.max(0, Math.min(wqeSize - SGE_AT / SGE_UNIT, (wqe.length - SGE_AT) / SGE_UNIT));
  for (let i = 0; i < count; i++) {
    const sge = traceFields(any(SqSge), wqe.subarray(SGE_AT + i * SGE_UNIT));
    for (const [k, v] of Object.entries(sge)) out[`sge${i}.${k}`] = v;
  }
}

const RDMA_TYPES: ReadonlySet<number> = new Set([WqeType.WRITE_WQE, WqeType.WRITE_W_IMMEAD, WqeType.READ_WQE]);

/** A send-queue WQE as the NIC fetched it: sq_rdma_hdr for RDMA WRITE / READ, else sq_send_hdr. */
export function sqWqeEvent(qp: number, wqe: Uint8Array): TraceEvent {
  const type = wqe[0] ?? 0;
  const fields = traceFields(RDMA_TYPES.has(type) ? any(SqRdmaHdr) : any(SqSendHdr), wqe);
  if (((fields['flags'] as number) & WqeFlags.INLINE) === 0) sgeFields(fields, wqe, fields['wqe_size'] as number);
  return { ch: 'wqe', dir: 'req', name: wqeTypeName(type), fields, qp };
}

/** A receive-queue WQE as the NIC fetched it (rq_wqe_hdr and its SGEs). */
export function rqWqeEvent(qp: number, wqe: Uint8Array): TraceEvent {
  const fields = traceFields(any(RqWqeHdr), wqe);
  sgeFields(fields, wqe, fields['wqe_size'] as number);
  const type = fields['wqe_type'] as number;
  const name = type === RQ_WQE_TYPE_RCV ? 'RCV' : `UNKNOWN(0x${type.toString(16)})`;
  return { ch: 'wqe', dir: 'req', name, fields, qp };
}

/** Parses trace text (JSON lines) back into records; a line that is not a record is an error naming it. */
export function parseTrace(text: string): TraceRecord[] {
  const out: TraceRecord[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let r: unknown;
    try {
      r = JSON.parse(line);
    } catch (e) {
      throw new Error(`trace line ${i + 1} is not JSON: ${(e as Error).message}`);
    }
    const rec = r as Partial<TraceRecord>;
    const shaped = typeof rec === 'object' && rec !== null && typeof rec.t === 'number' && typeof rec.ch === 'string'
      && (rec.dir === 'req' || rec.dir === 'resp') && typeof rec.name === 'string'
      && typeof rec.fields === 'object' && rec.fields !== null;
    if (!shaped) {
      throw new Error(`trace line ${i + 1} is not a {t,ch,dir,name,fields} record: ${line.slice(0, 120)}`);
    }
    out.push(rec as TraceRecord);
  }
  return out;
}
