/**
 * What a hostile wire's seed chooses (hostile-relay.ts): the share of frames it
 * adds a hostile frame to, and which kinds. Harmless kinds are frames IBA has a NIC drop or
 * answer without failing anything; disruptive kinds are valid frames an attacker on the path
 * can forge, which may end a connection but must never leak a byte or touch memory.
 */
import { seeded } from './seeded.ts';

export const HARMLESS_KINDS = [
  'garbage', 'truncated', 'badIcrc', 'replay', 'wrongQpn', 'futurePsn', 'oldPsn', 'ghostAck', 'ghostRead',
  'randomOpcode',
] as const;
export const DISRUPTIVE_KINDS = ['craftedRequest', 'opcodeAtEpsn', 'readInWindow'] as const;
export type Kind = (typeof HARMLESS_KINDS)[number] | (typeof DISRUPTIVE_KINDS)[number];

export interface HostilePlan {
  readonly seed: number;
  /** Share of the frames passing that get a hostile frame beside them. */
  readonly rate: number;
  readonly harmless: readonly Kind[];
  /** Empty unless the seed chose an attacker that forges valid frames. */
  readonly disruptive: readonly Kind[];
  /** Share of the hostile frames that are of a disruptive kind. */
  readonly disruptiveShare: number;
}

/** Bytes every secret region is filled with: they must never be seen on the wire. */
export const SECRET_MARKER = Uint8Array.from([...'rig-bnxt-secret!'].map((c) => c.charCodeAt(0)));

export function planFor(seed: number): HostilePlan {
  const r = seeded(seed);
  const u = () => r() / 4294967296;
  const rate = 0.25 + 0.17 * u(); // around a third
  let harmless = HARMLESS_KINDS.filter(() => u() < 0.7);
  if (harmless.length === 0) harmless = [HARMLESS_KINDS[Math.floor(u() * HARMLESS_KINDS.length)]!];
  // One seed in four forges valid frames too (rarely: each may end a connection at once).
  let disruptive: Kind[] = [];
  if (u() < 0.25) {
    disruptive = DISRUPTIVE_KINDS.filter(() => u() < 0.6);
    if (disruptive.length === 0) disruptive = [DISRUPTIVE_KINDS[Math.floor(u() * DISRUPTIVE_KINDS.length)]!];
  }
  return { seed, rate, harmless, disruptive, disruptiveShare: 0.01 };
}
