/**
 * Reference programs report as one JSON object on one line (the last line of their output
 * that starts with "{"), so they can print anything else before it.
 */

export type JsonLine = Readonly<Record<string, unknown>>;

/** The last JSON-object line of `output`; `source` names the program in errors. */
export function parseJsonLine(output: string, source: string): JsonLine {
  const lines = output.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith('{')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (e) {
      throw new Error(`${source}: its result line is not JSON (${(e as Error).message}): ${line.slice(0, 200)}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new Error(`${source}: its result line is not a JSON object: ${line.slice(0, 200)}`);
    }
    return parsed as JsonLine;
  }
  throw new Error(
    `${source}: printed no JSON result line${output.trim() ? `; it printed: ${output.trim().slice(0, 200)}` : ''}`,
  );
}

/** A finite number field of a result line, or a clear error naming the program and the field. */
export function numberField(line: JsonLine, key: string, source: string): number {
  const v = line[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new Error(
      `${source}: result field "${key}" is ${v === undefined ? 'missing' : JSON.stringify(v)}, not a finite number`,
    );
  }
  return v;
}
