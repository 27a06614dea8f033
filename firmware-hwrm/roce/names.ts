/**
 * Code → name lookups for the RoCE enumerations. Built once per table at module load; a
 * lookup never throws and never drops an unknown value: it comes back as `UNKNOWN(0x..)`
 * so a trace still shows the raw number.
 */
export type Namer = (code: number) => string;

export function namer(table: Readonly<Record<string, number>>): Namer {
  const byCode = new Map<number, string>();
  for (const [name, code] of Object.entries(table)) if (!byCode.has(code)) byCode.set(code, name);
  return (code: number) => byCode.get(code) ?? unknownName(code);
}

function unknownName(code: number): string {
  return Number.isInteger(code) && code >= 0 ? `UNKNOWN(0x${code.toString(16)})` : `UNKNOWN(${String(code)})`;
}
