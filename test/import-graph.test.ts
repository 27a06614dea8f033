import t from 'tap';
import { fileURLToPath } from 'node:url';
import {
  circles, forbiddenImports, importGraph, modelImpurities, packageImports, readTree, upwardImports,
} from './helpers/import-graph.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const sources = readTree(ROOT, ['lib', 'drivers', 'firmware-hwrm', 'scripts', 'bench', 'test']);
const tree = importGraph(sources);

t.test('the graph is read: every relative import names a file of the tree', async (t) => {
  const unresolved: string[] = [];
  for (const [from, targets] of tree) for (const to of targets) if (!tree.has(to)) unresolved.push(`${from} -> ${to}`);
  t.same(unresolved, []);
  // A witness that imports are seen at all: the model's core builds both firmwares.
  t.ok(tree.get('drivers/emu/model/nic-model.ts')?.includes('drivers/emu/model/firmware/hwrm.ts'));
});

t.test('nothing in drivers/ or firmware-hwrm/ imports lib/, scripts/, bench/ or test/; firmware-hwrm/ imports no ' +
  'drivers/', async (t) => {
  t.same(upwardImports(tree), []);
});

t.test('drivers/ (the software NIC included) and firmware-hwrm/ have no import circle, type-only imports ' +
  'counted', async (t) => {
  t.same(circles(tree, 'drivers/'), []);
  t.same(circles(tree, 'firmware-hwrm/'), []);
});

t.test('no import circle anywhere in the tree (lib/, the tools and the tests too), type-only imports counted',
  async (t) => {
    t.same(circles(tree, ''), []);
  });

/** Above drivers/: lib/ imports no tool, and the tools (scripts/, bench/) import no test. */
const TOOL_RULES = { lib: ['scripts', 'bench', 'test'], scripts: ['test'], bench: ['test'] } as const;

t.test('lib/ imports nothing of scripts/, bench/ or test/; scripts/ and bench/ import nothing of test/', async (t) => {
  t.same(forbiddenImports(tree, TOOL_RULES), []);
});

t.test('the software NIC\'s model (drivers/emu/model/) imports nothing of drivers/emu/host/, and reaches no ' +
  'node:* module, koffi or worker_threads, type-only imports counted', async (t) => {
  const packages = packageImports(sources);
  t.same(modelImpurities(tree, packages), []);
  // Witnesses that the rule has something to look at: a host does import Node, and the model is read.
  t.ok(packages.get('drivers/emu/host/worker.ts')?.includes('node:worker_threads'), 'packages are read');
  t.ok(tree.get('drivers/emu/model/engine/port.ts')?.includes('drivers/emu/model/cable/port-cable.ts'));
});

t.test('the model\'s rule catches what it is for', async (t) => {
  const sources = new Map([
    ['drivers/emu/model/a.ts', "import type { Wake } from '../host/wake.ts';\nimport { b } from './b.ts';\n"],
    ['drivers/emu/model/b.ts', "import { c } from '../../c.ts';\n"],
    ['drivers/c.ts', "import { readFileSync } from 'fs';\nimport '../firmware-hwrm/ok.ts';\n"],
    ['firmware-hwrm/ok.ts', 'export const ok = 1;\n'],
    ['drivers/emu/model/d.ts', "type Koffi = typeof import('koffi');\n"],
    ['drivers/emu/model/e.ts', "// import x from 'node:fs';\nconst s = 'node:fs';\nexport { s };\n"],
    ['drivers/emu/model/f.ts', "export { threadId } from 'node:worker_threads';\n"],
    ['drivers/emu/model/g.ts', "import { h } from '../../h.ts';\n"],
    ['drivers/h.ts', "export { wake } from './emu/host/wake.ts';\n"],
    ['drivers/emu/host/wake.ts', "import { threadId } from 'node:worker_threads';\nimport '../model/a.ts';\n"],
  ]);
  t.same(modelImpurities(importGraph(sources), packageImports(sources)), [
    'drivers/c.ts -> fs (reached from drivers/emu/model/a.ts)',
    'drivers/emu/model/a.ts -> drivers/emu/host/wake.ts',
    'drivers/emu/model/d.ts -> koffi',
    'drivers/emu/model/f.ts -> node:worker_threads',
    'drivers/h.ts -> drivers/emu/host/wake.ts (reached from drivers/emu/model/g.ts)',
  ], 'a type-only import of a host, a bare built-in through a file outside the model, an import type, a ' +
    're-export, a host through a file outside the model; not a comment or a string, not the host\'s own imports');
});

t.test('the checks catch what they are for', async (t) => {
  const graph = importGraph(new Map([
    ['drivers/emu/a.ts', "import type { B } from './b.ts';\n// import x from '../../lib/nic.ts';\n"],
    ['drivers/emu/b.ts', "export { C } from './c.ts';\n"],
    ['drivers/emu/c.ts', "const later = () => import('./a.ts');\n"],
    ['drivers/emu/d.ts', "import { ok } from '../../lib/result.ts';\nimport './d.ts';\n"],
    ['firmware-hwrm/x.ts', "import type { Device } from '../drivers/device.ts';\n"],
    ['drivers/device.ts', "import type { Result } from '../firmware-hwrm/result.ts';\n"],
    ['lib/result.ts', "export * from '../firmware-hwrm/result.ts';\n"],
    ['lib/nic.ts', "import { openDevice } from '../drivers/open-device.ts';\n"],
  ]));
  t.same(upwardImports(graph), ['drivers/emu/d.ts -> lib/result.ts', 'firmware-hwrm/x.ts -> drivers/device.ts'],
    'a commented-out import is no import; lib/ importing drivers/ points down');
  t.same(circles(graph, 'drivers/'), [
    ['drivers/emu/a.ts', 'drivers/emu/b.ts', 'drivers/emu/c.ts'], ['drivers/emu/d.ts'],
  ],
    'a circle through a type-only import, a re-export and a dynamic import; a file importing itself');
  const tools = importGraph(new Map([
    ['scripts/soak.ts', "import { runSoak } from '../test/soak-run.ts';\nimport { x } from './stress/x.ts';\n"],
    ['bench/b.ts', "import type { T } from '../test/helpers/t.ts';\nimport { Nic } from '../lib/index.ts';\n"],
    ['test/soak.test.ts', "import { runSoak } from '../scripts/stress/soak-run.ts';\n"],
    ['lib/nic.ts', "import { seeded } from '../scripts/stress/seeded.ts';\n"],
  ]));
  t.same(forbiddenImports(tools, TOOL_RULES), [
    'scripts/soak.ts -> test/soak-run.ts', 'bench/b.ts -> test/helpers/t.ts', 'lib/nic.ts -> scripts/stress/seeded.ts',
  ], 'a tool importing a test (type-only too) and lib/ importing a tool are found; a test importing a tool is not');
});
