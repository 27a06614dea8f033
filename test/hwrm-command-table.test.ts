// The HWRM command table (firmware-hwrm/hwrm/commands.ts) is the only place a command is named:
// product code reaches a command through its row, every row with layouts has the software NIC's
// handler, and what has no handler is answered CMD_NOT_SUPPORTED, as an unknown request type is.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as H from '../firmware-hwrm/hwrm/index.ts';
import { hwrmEvent } from '../firmware-hwrm/trace.ts';
import { HWRM_HANDLERS } from '../drivers/emu/model/firmware/hwrm-dispatch.ts';
import { readFiles } from './helpers/tidy.ts';
import { EmuRig } from './helpers/emu-roce-setup.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TABLE = 'firmware-hwrm/hwrm/commands.ts';
const PRODUCT = ['lib', 'drivers', 'firmware-hwrm', 'scripts', 'bench'];
const ROWS = H.hwrmRows();
const KEYS = new Set(Object.keys(H.HWRM_COMMANDS));

/**
 * Where `text` names a command other than through the table: a string or template literal that
 * spells a row's name ("HWRM_FUNC_QCAPS", or its key alone, but not as a key in a type), or a
 * request type compared with or set to a number (`req_type: 0x15`, `reqType === 0`). Found with
 * TypeScript's parser, so comments never count.
 */
function namings(path: string, text: string): string[] {
  const out: string[] = [];
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const at = (node: ts.Node) => `${path}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
  const isReqType = (node: ts.Node) => /^(req_type|reqType)$/.test(node.getText(sf).replace(/^.*\./, ''));
  const visit = (node: ts.Node): void => {
    // A key in a type (HwrmHandler<'VNIC_CFG'>) is the table's: the compiler checks it against the rows.
    const inType = node.parent !== undefined && ts.isLiteralTypeNode(node.parent);
    if (!inType && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateLiteralToken(node))) {
      for (const m of node.text.matchAll(/\bHWRM_([A-Z0-9_]+)\b/g)) {
        if (KEYS.has(m[1]!)) out.push(`${at(node)}: "${m[0]}"`);
      }
      if (KEYS.has(node.text)) out.push(`${at(node)}: "${node.text}"`);
    }
    // (A 0 set is also where a field starts: `lastAnswer = { reqType: 0 }`; compared, it is VER_GET.)
    if (ts.isPropertyAssignment(node) && isReqType(node.name) && ts.isNumericLiteral(node.initializer) &&
      Number(node.initializer.text) !== 0) {
      out.push(`${at(node)}: ${node.getText(sf)}`);
    }
    if (ts.isBinaryExpression(node) && ts.isNumericLiteral(node.right) && isReqType(node.left) &&
      /^(=|===|!==|==|!=)$/.test(node.operatorToken.getText(sf))) out.push(`${at(node)}: ${node.getText(sf)}`);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

t.test('product code names no command but through the table (a row, its name or its req_type)', async (t) => {
  const files = readFiles(ROOT, PRODUCT, (p) => /\.(ts|mjs)$/.test(p) && p !== TABLE && !p.endsWith('.d.ts'));
  t.ok(files.size > 100, `${files.size} files read`);
  const found = [...files].flatMap(([path, text]) => namings(path, text));
  t.same(found, [], 'commands named outside firmware-hwrm/hwrm/commands.ts');
});

t.test('the check finds what it is for, and not in comments', async (t) => {
  t.same(namings('x.ts', "fail('HWRM_FUNC_QCFG', e);"), ['x.ts:1: "HWRM_FUNC_QCFG"']);
  t.same(namings('x.ts', 'const s = `${n} HWRM_RING_FREE (${k})`;'), ['x.ts:1: "HWRM_RING_FREE"']);
  t.same(namings('x.ts', "byName.get('VNIC_CFG');"), ['x.ts:1: "VNIC_CFG"']);
  t.same(namings('x.ts', 'send({ req_type: 0x15 });\nif (cmd.reqType === 0) x();'),
    ['x.ts:1: req_type: 0x15', 'x.ts:2: cmd.reqType === 0']);
  t.same(namings('x.ts', '// HWRM_FUNC_QCFG asks\n/* \'VNIC_CFG\' */ const a = C.FUNC_QCFG.name;'), []);
  t.same(namings('x.ts', "err('HWRM_NOT_A_COMMAND'); hdr.req_type + 1;"), [], 'only the table\'s names count');
});

t.test('every layout of a command is a row\'s, once; a row is named after its key', async (t) => {
  const seen = new Map<string, string>();
  for (const row of ROWS) {
    t.match(row.name, /^HWRM_[A-Z0-9_]+$/);
    t.ok(KEYS.has(row.name.slice('HWRM_'.length)), `${row.name} is its key's name`);
    for (const layout of [row.request, row.response]) {
      if (layout === undefined) continue;
      t.notOk(seen.has(layout.name), `${layout.name} in ${row.name} only`);
      seen.set(layout.name, row.name);
    }
  }
  const headerLayouts = new Set(['input', 'output', 'hwrm_err_output', 'hwrm_short_input']);
  const commandLayouts = (Object.values(H) as unknown[]).filter((v): v is H.HwrmCommand['request'] =>
    v instanceof H.HwrmInput.constructor && !headerLayouts.has((v as H.HwrmCommand['request']).name));
  t.ok(commandLayouts.length > 60, `${commandLayouts.length} command layouts exported`);
  for (const layout of commandLayouts) t.ok(seen.has(layout.name), `${layout.name} belongs to a row`);
});

t.test('every row with layouts has the software NIC\'s handler, registered under its req_type', async (t) => {
  const withLayouts = ROWS.filter((row) => row.request !== undefined);
  t.equal(HWRM_HANDLERS.size, withLayouts.length);
  for (const row of withLayouts) t.equal(HWRM_HANDLERS.get(row.req_type)?.command, row, row.name);
  for (const row of ROWS.filter((r) => r.request === undefined)) {
    t.notOk(HWRM_HANDLERS.has(row.req_type), `${row.name}: named only, no handler`);
  }
});

t.test('a row without layouts and an unknown req_type: CMD_NOT_SUPPORTED, traced by name or number', async (t) => {
  const rig = new EmuRig();
  const headerOnly = (req_type: number): H.HwrmCommand =>
    ({ req_type, name: H.hwrmRequestName(req_type), request: H.HwrmInput, response: H.HwrmOutput });
  const unsupported = new RegExp(`error ${H.HWRM_ERR_CODE.CMD_NOT_SUPPORTED}$`);
  t.throws(() => rig.hwrm(headerOnly(H.HWRM_COMMANDS.FW_RESET.req_type), {}), unsupported);
  t.throws(() => rig.hwrm(headerOnly(0x01ff), {}), unsupported);
  const fwReset = H.HwrmInput.encode({ req_type: H.HWRM_COMMANDS.FW_RESET.req_type });
  t.equal(hwrmEvent('req', H.HWRM_COMMANDS.FW_RESET.req_type, fwReset).name, 'HWRM_FW_RESET');
  t.equal(hwrmEvent('req', 0x01ff, H.HwrmInput.encode({ req_type: 0x01ff })).name, '0x01ff');
});
