/** The machine a run measured on, for the head of docs/performance.md. */
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release } from 'node:os';
import { gccVersion } from './c-build.ts';

export interface Machine {
  /** /proc/cpuinfo's model name, with family/model/stepping when the name alone is vague. */
  readonly cpu: string;
  readonly cores: number;
  readonly node: string;
  readonly gcc: string;
  readonly kernel: string;
  /** 1, 5 and 15 minute load averages when the run started: the machine is shared. */
  readonly loadAverage: readonly number[];
}

export async function describeMachine(): Promise<Machine> {
  let gcc: string;
  try {
    gcc = await gccVersion();
  } catch {
    gcc = 'not found';
  }
  return {
    cpu: cpuModel(),
    cores: availableParallelism(),
    node: process.version,
    gcc,
    kernel: `Linux ${release()}`,
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

function cpuModel(): string {
  let text = '';
  try {
    text = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return cpus()[0]?.model ?? 'unknown';
  }
  // The first processor's fields: "key\t: value" lines up to the first blank line.
  const first = text.split('\n\n')[0] ?? '';
  const field = (key: string) => new RegExp(`^${key}\\s*:\\s*(.*)$`, 'm').exec(first)?.[1]?.trim();
  const name = field('model name') ?? cpus()[0]?.model ?? 'unknown';
  const family = field('cpu family');
  const model = field('model');
  const stepping = field('stepping');
  return family !== undefined && model !== undefined
    ? `${name} (family ${family}, model ${model}${stepping !== undefined ? `, stepping ${stepping}` : ''})` : name;
}
