import t from 'tap';
import { HwrmInput, HWRM_COMMANDS, hwrmCommand, hwrmRows } from '../firmware-hwrm/hwrm/index.ts';
import type { HwrmCommand } from '../firmware-hwrm/hwrm/index.ts';

type AnyLayout = HwrmCommand['request'];
/** The table's rows with layouts (the commands spoken here), by req_type. */
const REQUESTS = new Map<number, HwrmCommand>();
for (const row of hwrmRows()) if (row.request !== undefined) REQUESTS.set(row.req_type, row);

// Sizes are the kernel header's (include/linux/bnxt/hsi.h states each struct's size beside it).
const DOC_SIZES: Array<[string, number, number, number]> = [
  // name, req_type, request bytes, response bytes
  ['HWRM_VER_GET', 0x0000, 24, 176],
  ['HWRM_FUNC_RESET', 0x0011, 24, 16],
  ['HWRM_FUNC_QCAPS', 0x0015, 24, 144],
  ['HWRM_FUNC_QCFG', 0x0016, 24, 176],
  ['HWRM_FUNC_DRV_RGTR', 0x001d, 112, 16],
  ['HWRM_FUNC_DRV_UNRGTR', 0x001a, 24, 16],
  ['HWRM_FUNC_DRV_IF_CHANGE', 0x000d, 24, 16],
  ['HWRM_FUNC_RESOURCE_QCAPS', 0x0190, 24, 88],
  ['HWRM_PORT_PHY_QCFG', 0x0027, 24, 104],
  ['HWRM_FUNC_BACKING_STORE_QCAPS', 0x0192, 16, 104],
  ['HWRM_FUNC_BACKING_STORE_CFG', 0x0193, 336, 16],
  ['HWRM_FUNC_BACKING_STORE_QCAPS_V2', 0x01a8, 24, 56],
  ['HWRM_FUNC_BACKING_STORE_CFG_V2', 0x01a3, 64, 16],
  ['HWRM_STAT_CTX_ALLOC', 0x00b0, 40, 16],
  ['HWRM_STAT_CTX_FREE', 0x00b1, 24, 16],
  ['HWRM_RING_ALLOC', 0x0050, 96, 16],
  ['HWRM_RING_FREE', 0x0051, 32, 16],
  // What Linux's bnxt_en sends beyond those: sizes from the "(size:NNNb/NB)" comments of bnxt_hsi.h.
  ['HWRM_FW_SET_TIME', 0x00c8, 32, 16],
  ['HWRM_NVM_GET_DEV_INFO', 0xfff6, 24, 96],
  ['HWRM_QUEUE_QPORTCFG', 0x0030, 24, 168],
  ['HWRM_QUEUE_PRI2COS_QCFG', 0x0037, 24, 24],
  ['HWRM_PORT_PHY_QCAPS', 0x002a, 24, 40],
  ['HWRM_PORT_LED_QCAPS', 0x002f, 24, 48],
  ['HWRM_VNIC_QCAPS', 0x004a, 24, 24],
  ['HWRM_FUNC_CFG', 0x0017, 160, 16],
  ['HWRM_VNIC_ALLOC', 0x0040, 24, 16],
  ['HWRM_VNIC_FREE', 0x0041, 24, 16],
  ['HWRM_VNIC_CFG', 0x0042, 48, 16],
  ['HWRM_VNIC_RSS_CFG', 0x0046, 48, 16],
  ['HWRM_VNIC_PLCMODES_CFG', 0x0048, 40, 16],
  ['HWRM_RING_CMPL_RING_CFG_AGGINT_PARAMS', 0x0053, 40, 16],
  ['HWRM_RING_AGGINT_QCAPS', 0x0054, 16, 48],
  ['HWRM_VNIC_RSS_COS_LB_CTX_ALLOC', 0x0070, 16, 16],
  ['HWRM_VNIC_RSS_COS_LB_CTX_FREE', 0x0071, 24, 16],
  ['HWRM_CFA_L2_FILTER_ALLOC', 0x0090, 96, 24],
  ['HWRM_CFA_L2_FILTER_FREE', 0x0091, 24, 16],
  ['HWRM_CFA_L2_SET_RX_MASK', 0x0093, 56, 16],
  ['HWRM_PORT_MAC_CFG', 0x0021, 56, 16],
  ['HWRM_PORT_PHY_CFG', 0x0020, 64, 16],
  ['HWRM_PORT_QSTATS', 0x0023, 40, 16],
  ['HWRM_PORT_QSTATS_EXT', 0x00b4, 40, 16],
];

t.test('the table has layouts for every command of the brief, with the documented sizes', async (t) => {
  t.equal(REQUESTS.size, DOC_SIZES.length);
  for (const [name, reqType, reqBytes, respBytes] of DOC_SIZES) {
    const spec = REQUESTS.get(reqType);
    if (!spec) { t.fail(`${name} missing`); continue; }
    t.equal(spec.name, name);
    t.equal(spec.req_type, reqType);
    t.equal(spec.request.size, reqBytes, `${name} request size`);
    t.equal(spec.response.size, respBytes, `${name} response size`);
    t.match(spec.request.name, /^hwrm_[a-z0-9_]+_input$/);
    t.match(spec.response.name, /^hwrm_[a-z0-9_]+_output$/);
  }
});

t.test('every request is a multiple of 8 bytes and starts with the 16-byte header', async (t) => {
  // Header of a FUNC_QCAPS-like request, written out by hand (2.2).
  const header = { req_type: 0x0190, cmpl_ring: 0xffff, seq_id: 0x0a0b, target_id: 0xfffd, resp_addr: 0x12_3456_7000 };
  const headerBytes = [0x90, 0x01, 0xff, 0xff, 0x0b, 0x0a, 0xfd, 0xff, 0x00, 0x70, 0x56, 0x34, 0x12, 0x00, 0x00, 0x00];
  for (const { name, request } of REQUESTS.values()) {
    t.equal(request.size % 8, 0, `${name}: ${request.size} bytes`);
    t.same(request.fields['req_type'], { offset: 0, kind: 'u16', shift: undefined, bits: undefined },
      `${name} req_type`);
    const got = request.encode(header);
    t.same([...got.subarray(0, 16)], headerBytes, `${name} header bytes`);
    t.ok(got.subarray(16).every((b) => b === 0), `${name} body left zero`);
    const padded = new Uint8Array(request.size);
    padded.set(headerBytes);
    const decoded = request.decode(padded) as Record<string, unknown>;
    for (const [key, value] of Object.entries(header)) t.equal(decoded[key], value, `${name}.${key}`);
  }
});

t.test('every response starts with the 8-byte header and ends with its valid byte', async (t) => {
  // RESOURCE_ALLOC_ERROR, req 0xb0, seq 0x0a0b, len 16
  const headerBytes = [0x04, 0x00, 0xb0, 0x00, 0x0b, 0x0a, 0x10, 0x00];
  for (const { name, response } of REQUESTS.values()) {
    t.equal(response.size % 8, 0, `${name}: ${response.size} bytes`);
    const bytes = new Uint8Array(response.size);
    bytes.set(headerBytes);
    bytes[response.size - 1] = 1;
    const r = response.decode(bytes) as Record<string, unknown>;
    t.equal(r['error_code'], 4, name);
    t.equal(r['req_type'], 0xb0, name);
    t.equal(r['seq_id'], 0x0a0b, name);
    t.equal(r['resp_len'], 16, name);
    t.equal(r['valid'], 1, `${name} valid is the last byte`);
    t.same(response.fields['valid'], { offset: response.size - 1, kind: 'u8', shift: undefined, bits: undefined });
  }
});

t.test('no two fields of any layout share a byte', async (t) => {
  const layouts: AnyLayout[] = [...REQUESTS.values()].flatMap((c) => [c.request, c.response]);
  const width = { u8: 1, u16: 2, u32: 4, u64: 8, u64n: 8 } as const;
  for (const L of layouts) {
    const owner = new Array<string | undefined>(L.size);
    for (const [key, f] of Object.entries(L.fields)) {
      const n = f.kind === 'bytes' ? (f.length ?? 0) : width[f.kind];
      for (let i = f.offset; i < f.offset + n; i++) {
        if (owner[i] !== undefined) t.fail(`${L.name}: ${key} and ${owner[i]} both cover byte ${i}`);
        owner[i] = key;
      }
    }
    t.pass(`${L.name} checked`);
  }
});

t.test('a firmware model decodes whatever request arrives by its req_type', async (t) => {
  // A FUNC_QCAPS request for the calling function, written out by hand.
  const wire = Uint8Array.from([
    0x15, 0x00, 0xff, 0xff, 0x02, 0x00, 0xff, 0xff, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  ]);
  const { req_type } = HwrmInput.decode(wire);
  const spec = hwrmCommand(req_type);
  if (!spec) throw new Error('FUNC_QCAPS must be known');
  t.equal(spec.name, 'HWRM_FUNC_QCAPS');
  const req = spec.request.decode(wire) as Record<string, unknown>;
  t.equal(req['fid'], 0xffff);
  t.equal(req['resp_addr'], 0x2000);
  // ...and answers with the response layout: header echoes, resp_len = size, valid = 1.
  const resp = spec.response.encode({
    error_code: 0, req_type, seq_id: 2, resp_len: spec.response.size, port_id: 1, valid: 1,
  });
  t.same([...resp.subarray(0, 12)], [0x00, 0x00, 0x15, 0x00, 0x02, 0x00, 0x90, 0x00, 0x00, 0x00, 0x01, 0x00]);
  t.equal(resp[143], 1);
});

t.test('an unknown req_type has no spec and does not throw', async (t) => {
  t.equal(hwrmCommand(0x1ff), undefined);
  t.equal(hwrmCommand(HWRM_COMMANDS.FW_RESET.req_type), undefined, 'a named command without a layout here');
  t.equal(hwrmCommand(-1), undefined);
  t.equal(hwrmCommand(Number.NaN), undefined);
});

t.test('encoding rejects values that do not fit and names the field', async (t) => {
  const ringAlloc = REQUESTS.get(HWRM_COMMANDS.RING_ALLOC.req_type)!.request;
  t.throws(() => ringAlloc.encode({ ring_type: 0x100 }), {
    name: 'RangeError', message: /hwrm_ring_alloc_input\.ring_type/,
  });
  t.throws(() => ringAlloc.encode({ page_tbl_addr: 2 ** 53 }), RangeError);
  t.throws(() => ringAlloc.encode({ no_such_field: 1 } as never), /no field no_such_field/);
});
