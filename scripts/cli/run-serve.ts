/**
 * `rig-bnxt serve SOCKET`: serves one software NIC on a vfio-user socket, for QEMU's
 * `-device vfio-user-pci` (QEMU 10.1 or later), so a guest's own bnxt_en/bnxt_re, DPDK or any
 * driver drives the model. Serves one connection (one guest boot) and exits when it ends.
 *
 *   rig-bnxt serve SOCKET [--chip NAME] [-d emu | emu:LOCAL:REMOTE] [--nic-mac MAC] [--ipv4 A.B.C.D]
 *                        [--eth-mtu N] [--pcap FILE] [--hwrm-log FILE] [--trace FILE] [-v]
 */
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { serveVfioUser } from '../../drivers/emu/host/vfio-user/index.ts';
import { CHIP_ENV, DEFAULT_EMU_CHIP, ipv4FromNumber, macFromNumber } from '../../drivers/emu/model/config.ts';
import type { CableSpec } from '../../drivers/emu/model/cable/port-cable.ts';
import { chipByName, chipNames } from '../../firmware-hwrm/chips.ts';
import { parseMac } from './option-values.ts';
import { ok, err, type Result } from './result.ts';

export const SERVE_USAGE = `Usage: rig-bnxt serve SOCKET [options]
Serves one software NIC (a PF of its chip, BCM57608 unless told) on the vfio-user socket SOCKET for QEMU:
  qemu-system-x86_64 ... -object memory-backend-memfd,id=mem,size=512M,share=on \\
    -machine pc,memory-backend=mem -device '{"driver":"vfio-user-pci","socket":{"type":"unix","path":"SOCKET"}}'
Guest RAM must be a shared memfd backend: the model reaches it by mmap (see docs/vfio-user.md).
  --chip NAME            the chip the model is: ${chipNames().join(', ')} (default RIG_BNXT_CHIP's, else BCM57608)
  -d, --ib-dev CABLE     the NIC's port: emu (looped back, default) or emu:LOCAL:REMOTE (UDP ports)
  --nic-mac MAC          the NIC's MAC (default 02:62:6e:..)
  --ipv4 A.B.C.D         its RoCE address (default 10.77.x.y from the cable)
  --eth-mtu N            Ethernet MTU (default 1500)
  --pcap FILE            append every frame on the port to FILE
  --hwrm-log FILE        write every HWRM command the guest sent, with the answer, to FILE at the end
  --trace FILE           write every HWRM request and response, RoCE command and CREQ entry, decoded, ` +
  `one JSON object a line
  -v, --verbose          log every refused message and every HWRM command
  -h, --help             show this text`;

const hex4 = (n: number) => n.toString(16).padStart(4, '0');

/** The port's cable, MAC, IPv4 address and MTU from -d, --nic-mac, --ipv4 and --eth-mtu, or what is wrong. */
function portOptions(
  values: Record<string, string | boolean | undefined>,
): Result<{ cable: CableSpec; mac: Uint8Array; ipv4: Uint8Array; mtu: number }> {
  const dev = (values['ib-dev'] as string | undefined) ?? 'emu';
  const m = /^emu(?::(\d{1,5}):(\d{1,5}))?$/.exec(dev);
  if (!m) return err(`-d ${dev}: expected emu or emu:LOCAL:REMOTE`);
  let cable: CableSpec = { kind: 'loop' };
  let number = (process.pid & 0xff) * 256 + 1;
  if (m[1] !== undefined) {
    const [local, remote] = [Number(m[1]), Number(m[2])];
    if (local < 1 || local > 65535 || remote < 1 || remote > 65535) return err(`-d ${dev}: ports must be 1..65535`);
    cable = { kind: 'udp', localPort: local, remotePort: remote };
    number = local;
  }
  let mac = macFromNumber(number);
  if (values['nic-mac'] !== undefined) {
    const parsed = parseMac(values['nic-mac'] as string);
    if (!parsed.ok) return err(`--nic-mac: ${parsed.error}`);
    mac = parsed.value;
  }
  let ipv4 = ipv4FromNumber(number);
  if (values.ipv4 !== undefined) {
    const parts = (values.ipv4 as string).split('.').map(Number);
    if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
      return err(`--ipv4 '${values.ipv4}' is not an IPv4 address`);
    ipv4 = Uint8Array.from(parts);
  }
  const mtu = values['eth-mtu'] === undefined ? 1500 : Number(values['eth-mtu']);
  if (!Number.isInteger(mtu) || mtu < 576 || mtu > 9216) {
    return err(`--eth-mtu ${values['eth-mtu']}: expected 576..9216`);
  }
  return ok({ cable, mac, ipv4, mtu });
}

export async function runServe(argv: readonly string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv], allowPositionals: true, strict: true,
      options: {
        chip: { type: 'string' }, 'ib-dev': { type: 'string', short: 'd' }, 'nic-mac': { type: 'string' },
        ipv4: { type: 'string' }, 'eth-mtu': { type: 'string' }, pcap: { type: 'string' },
        'hwrm-log': { type: 'string' }, trace: { type: 'string' }, verbose: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    console.error(`rig-bnxt serve: ${(e as Error).message.split('\n')[0]} (see rig-bnxt serve --help)`);
    return 2;
  }
  if (values.help) { console.log(SERVE_USAGE); return 0; }
  const fail = (why: string) => { console.error(`rig-bnxt serve: ${why}`); return 2; };
  if (positionals.length !== 1)
    return fail(
      positionals.length === 0 ? 'missing SOCKET (a path for the unix socket)'
        : `expected one SOCKET, got ${positionals.join(' ')}`,
    );
  const chipName = (values.chip as string | undefined) ?? (process.env[CHIP_ENV] || DEFAULT_EMU_CHIP);
  const chip = chipByName(chipName);
  if (!chip) return fail(`--chip ${chipName}: not a known chip (one of ${chipNames().join(', ')})`);
  const port = portOptions(values);
  if (!port.ok) return fail(port.error);
  const { cable, mac, ipv4, mtu } = port.value;
  const verbose = values.verbose === true;
  let modelFailed = false;
  const started = await serveVfioUser({
    socketPath: positionals[0]!, verbose, tracePath: values.trace as string | undefined,
    config: {
      mac, ipv4, mtu, cable, pcapPath: values.pcap as string | undefined, seed: 1, mode: 'thread', chip: chip.name,
    },
    onEvent: (e) => {
      if (e.kind === 'connected') console.log('client connected');
      if (e.kind === 'log') console.log(e.line);
      if (e.kind === 'model-failed') {
        modelFailed = true;
        console.error(`rig-bnxt serve: the software NIC stopped: internal error in ${e.part}: ${e.detail}`);
      }
      if (e.kind === 'hwrm' && verbose)
        console.log(`hwrm ${e.name} seq ${e.seqId} -> ${e.errorCode === 0 ? 'ok' : `error ${e.errorCode}`}`);
    },
  });
  if (!started.ok) return fail(started.error);
  const server = started.value;
  const macText = Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join(':');
  console.log(`serving ${chip.name} (${hex4(chip.pciVendorId)}:${hex4(chip.pciDeviceId)}) MAC ${macText} ` +
    `on ${server.socketPath}; waiting for a vfio-user client`);
  const stop = () => { void server.close(); };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { reason, stats } = await server.ended;
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  if (values['hwrm-log'] !== undefined) {
    writeFileSync(values['hwrm-log'] as string,
      server.hwrm.map((h) => `${h.name} seq=${h.seqId} error=${h.errorCode}`).join('\n') +
      (server.hwrm.length ? '\n' : ''));
  }
  console.log(
    `ended: ${reason}; ${stats?.messages ?? 0} messages, ${stats?.errors ?? 0} refused, ${server.hwrm.length} HWRM ` +
      `commands, ${stats?.iommuFaults ?? 0} IOMMU faults`,
  );
  return modelFailed ? 1 : 0;
}
