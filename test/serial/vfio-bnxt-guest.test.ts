// rig-bnxt's own driver through a real kernel's VFIO (issue 28): a Debian trixie 6.12 guest under
// QEMU 11.1 (TCG, q35, Intel virtual IOMMU with interrupt remapping and caching mode) whose
// PCI function 00:04.0 is a software NIC served over vfio-user (scripts/vfio-bnxt-guest), once as
// each chip of BNXT_GUEST_CHIPS. Behind the vIOMMU every 4 KiB the guest's driver maps reaches the
// served NIC as its own DMA_MAP, so this is the run that needs the model's IOMMU to translate page
// by page (drivers/emu/model/iommu.ts). In the guest, with Node.js from Debian's nodejs and the
// bundle built from this tree:
//  - what a user meets: rig-bnxt probe before the bind says to run bind-vfio.sh; bind-vfio.sh loads
//    vfio-pci (modprobe) and binds the function, alone in its IOMMU group; a user who is not root
//    is told how to get the group's node, and with it probes the NIC;
//  - the README's API example on Nic.open('0000:00:04.0'): both completions and the bytes; its
//    driver trace is the same, command by command and field by field (addresses and PSNs aside),
//    as the same example's on an in-process software NIC of the same chip;
//  - rig-bnxt probe -v, and pingpong, perf send_lat and send_bw against rig-bnxt on the host on
//    the served NIC's cable (a switched segment), every payload checked byte for byte in the
//    NIC's capture; perf read_lat on the NIC alone (reads are served to the same NIC only);
//  - against a second guest on the same segment, the bnxt guest's real bnxt_en and bnxt_re:
//    its ibv_rc_pingpong against rig-bnxt pingpong over VFIO, and rig-bnxt perf over VFIO against
//    its ib_send_lat, payloads checked; both guests' kernel logs clean; no IOMMU fault on either
//    served NIC.
// Skipped, with the reason, where the guests cannot be built (not root, no apt-get).
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildImages, runVfioGuests, type VfioGuestReport } from '../../scripts/vfio-bnxt-guest/run.ts';
import { A_IP, A_MAC, GUEST_DEVICE, HUGEPAGES, PEER_STEPS, READ_LAT } from '../../scripts/vfio-bnxt-guest/job.ts';
import { compareDriverTraces, consoleFile, inProcessTrace } from '../../scripts/vfio-bnxt-guest/same-trace.ts';
import { guestPerftestMessage } from '../../scripts/bnxt-guest/run.ts';
import { BNXT_GUEST_CHIPS, type BnxtGuestChip } from '../../scripts/bnxt-guest/guest-chip.ts';
import { checkPingpongCapture, readPcap, type CapturedFrame } from '../../scripts/interop/capture-check.ts';
import {
  parsePerftestRow, parsePingpongOutput, type SerialTranscript,
} from '../../scripts/interop/serial-transcript.ts';
import { parseTrace } from '../../firmware-hwrm/trace.ts';
import { chipByName } from '../../firmware-hwrm/chips.ts';
import { PERF_SEND_FILL } from '../../scripts/cli/run-perf.ts';
import { checkPeerStep, perftestAddresses } from '../helpers/peer-step-check.ts';
import { RoceFrame } from '../../drivers/emu/model/wire/roce-frame.ts';
import { parseFrame } from '../../drivers/emu/model/wire/parse.ts';
import { ParseStatus } from '../../drivers/emu/model/wire/parse-status.ts';

function whySkip(): string | false {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return `the guests are x86-64 Debian images (this is ${process.platform} ${process.arch})`;
  if (process.getuid?.() !== 0) return 'building the QEMU chroot and running QEMU in it needs root';
  if (spawnSync('sh', ['-c', 'command -v apt-get && command -v unshare']).status !== 0)
    return 'the guests are built from Debian packages with apt-get (and QEMU runs under unshare)';
  return false;
}

/** A step of a guest's job: its exit status and its output as one text. */
function step(x: SerialTranscript, id: string): { status: number | null; text: string; lines: readonly string[] } {
  const s = x.steps.get(id);
  return { status: s?.status ?? null, text: (s?.output ?? []).join('\n'), lines: s?.output ?? [] };
}

/**
 * Kernel log lines of level 0-4 (dmesg -r: <0> emergency .. <4> warning) about what this run
 * drives: VFIO, the IOMMU, PCI, the device, or a kernel bug. Under TCG the boot itself warns
 * about the emulated clocks and firmware tables (tsc calibration, APIC timer, ACPI IRQ override,
 * amd_pstate), which is no concern of the run's.
 */
function badKernelLines(serial: string, topic: RegExp): string[] {
  const from = serial.indexOf('BNXT-GUEST dmesg-begin');
  const to = serial.indexOf('BNXT-GUEST dmesg-end');
  if (from < 0 || to < from) return ['(no kernel log dumped)'];
  return serial.slice(from, to).split('\n').filter((l) => /^<[0-4]>/.test(l) &&
    (topic.test(l) || /BUG|WARNING|Oops|Call Trace|segfault/.test(l)));
}

function capture(path: string): CapturedFrame[] {
  return existsSync(path) ? readPcap(readFileSync(path)) : [];
}

/**
 * The frames of one exchange in a capture that holds several: guest A's queue pairs are numbered
 * alike in every session (each rig-bnxt run brings the NIC up anew), so QP numbers do not tell
 * the second jobs' steps apart; their PSNs do. Each side's requests start at the PSN it printed,
 * and its peer's ACKs and NAKs carry those PSNs: the frames whose PSN lies within `packets` of
 * either start (24-bit PSNs, drawn at random on both sides). Frames that do not parse as RoCEv2
 * are all kept (the capture check reports bad ones).
 */
function framesOfExchange(frames: readonly CapturedFrame[], psns: readonly number[], packets: number): CapturedFrame[] {
  const f = new RoceFrame();
  return frames.filter((c) => parseFrame(c.bytes, c.bytes.length, f, null) !== ParseStatus.OK ||
    psns.some((p) => ((f.psn - p) & 0xffffff) < packets));
}

/** Both images, built (or found up to date) once for the file. */
let images: ReturnType<typeof buildImages> | undefined;

const skip = whySkip();
for (const chip of BNXT_GUEST_CHIPS) {
  t.test(`rig-bnxt's own driver drives a served ${chip} through a guest kernel's vfio-pci behind a vIOMMU`,
    { skip }, (t) => guestRun(t, chip));
}

async function guestRun(t: Test, chip: BnxtGuestChip): Promise<void> {
  images ??= buildImages();
  if (!images.ok) return void t.fail(images.error);
  const r = await runVfioGuests({ images: images.value, chip });
  t.teardown(() => {
    if (t.passing() !== false) return;
    t.comment(`run folder ${r.workDir}\n--- guest A ---\n${r.a.serial}\n--- guest B ---\n${r.b.serial}`);
  });
  t.comment(`${chip}: both guests, first QEMU start to last exit, ${(r.durationMs / 1000).toFixed(1)} s`);
  for (const [name, g] of [['A', r.a], ['B', r.b]] as const) {
    t.notOk(g.timedOut, `guest ${name} powered off by itself`);
    t.equal(g.qemuExit, 0, `guest ${name}'s QEMU exited cleanly`);
  }
  const deviceId = chipByName(chip)!.pciDeviceId.toString(16);
  const device = new RegExp(`BNXT-GUEST device ${GUEST_DEVICE} vendor=0x14e4 device=0x${deviceId} group=(\\d+) ` +
    'driver=none');
  const group = device.exec(r.a.serial)?.[1];
  t.ok(group !== undefined, `guest A sees the served ${chip} at ${GUEST_DEVICE}, in an IOMMU group, with no driver`);
  await t.test('what a VFIO user meets', async (t) => userSteps(t, r, group ?? '?'));
  await t.test('the README\'s API example, and its trace on both roads', async (t) => apiSteps(t, r, chip));
  await t.test('probe -v', async (t) => probeStep(t, r, chip));
  await t.test('traffic against rig-bnxt on the host', async (t) => hostTraffic(t, r));
  await t.test('READs and SENDs on the NIC alone', async (t) => aloneSteps(t, r));
  // NIC B's capture: B talks to A alone, so A's frames there are the second jobs'.
  const seenByB = capture(r.nicB.pcapPath);
  await t.test('against bnxt_re in a second guest on the same segment', async (t) => peerSteps(t, r, seenByB));
  await t.test('kernel logs, IOMMU faults, firmware answers', async (t) => endChecks(t, r));
}

function probeStep(t: Test, r: VfioGuestReport, chip: string): void {
  const c = chipByName(chip)!;
  const p = step(r.a.job, 'probe');
  t.equal(p.status, 0);
  t.match(p.text, new RegExp(`chip:\\s+${chip} \\(0x${c.chipNum.toString(16)}, ${c.family}\\)`));
  t.match(p.text, new RegExp(`MAC:\\s+${A_MAC}`));
  t.match(p.text, new RegExp(`IPv4:\\s+${A_IP.replace(/\./g, '\\.')}`));
  t.match(p.text, /link:\s+up, 200 Gb\/s, MTU 1500/);
  t.match(p.text, /DMA memory:\s+\d+ bytes in use, 0 held back/);
}

async function hostTraffic(t: Test, r: VfioGuestReport): Promise<void> {
  t.equal(r.hostFailure, null, 'every host step ran');
  const options = {
    guestMac: A_MAC, guestTools: { pingpong: 'rig-bnxt pingpong', perf: 'rig-bnxt perf' },
    fromGuest: (size: number) => new Uint8Array(size).fill(PERF_SEND_FILL),
  };
  // Each step's own capture, the host NIC's (rig-bnxt in the guest starts its QPs at the same
  // number each run, so NIC A's capture alone would not tell the steps apart).
  for (const s of r.hostSteps) {
    const frames = capture(join(r.workDir, 'a', `host-${s.step.id}.pcap`));
    await t.test(s.step.id, async (t) => { checkPeerStep(t, s, frames, options); });
  }
}

function aloneSteps(t: Test, r: VfioGuestReport): void {
  const huge = step(r.a.job, 'hugepages');
  t.equal(huge.status, 0, 'bind-vfio.sh reserves hugepages');
  t.match(huge.text, `${HUGEPAGES} hugepages of 2 MiB reserved`);
  const x = step(r.a.job, 'transfers');
  t.equal(x.status, 0, 'every transfer intact');
  t.equal(x.lines.filter((l) => / bytes from \d+ to \d+: intact$/.test(l)).length, 6,
    'three READs and three SENDs (within a page, across 4 KiB pages, across a 2 MiB page), byte for byte');
  // The spec serves reads to the same NIC only: read_lat's both sides run in the guest.
  const s = step(r.a.job, 'read_lat');
  t.equal(s.status, 0, 'rig-bnxt perf read_lat -d exits 0');
  t.same([parsePerftestRow(s.lines)?.sizeBytes, parsePerftestRow(s.lines)?.iterations],
    [READ_LAT.sizeBytes, READ_LAT.iters], `${READ_LAT.iters} reads of ${READ_LAT.sizeBytes} B`);
}

function endChecks(t: Test, r: VfioGuestReport): void {
  t.same(badKernelLines(r.a.serial, /vfio|iommu|dmar|pci|0000:00:04/i), [],
    'guest A: no error or warning from VFIO, the IOMMU or PCI');
  t.same(badKernelLines(r.b.serial, /bnxt|infiniband|rdma|ib_|roce/i), [],
    'guest B: no error or warning from bnxt_en, bnxt_re or the RDMA core');
  for (const [name, n] of [['A', r.nicA], ['B', r.nicB]] as const) {
    t.match(n.endReason, /closed/, `NIC ${name}: the guest left`);
    t.equal(n.stats?.iommuFaults, 0, `NIC ${name}: no IOMMU fault`);
    t.equal(n.stats?.engineCounters['dmaFaults'] ?? 0, 0, `NIC ${name}: no DMA fault in the engine`);
    t.same(n.hwrm.filter((h) => h.errorCode < 0).map((h) => h.name), [], `NIC ${name}: every HWRM request answered`);
  }
  t.same(r.nicA.hwrm.filter((h) => h.errorCode !== 0).map((h) => `${h.name} -> ${h.errorCode}`), [],
    'rig-bnxt\'s driver had no HWRM request refused');
  const dmaMaps = r.nicA.stats?.byCommand['DMA_MAP'] ?? 0;
  t.ok(dmaMaps > 500, `NIC A took ${dmaMaps} DMA_MAPs (one per 4 KiB IOMMU page the guest mapped)`);
}

function userSteps(t: Test, r: VfioGuestReport, group: string): void {
  const unbound = step(r.a.job, 'probe-unbound');
  t.equal(unbound.status, 0, 'probe before the bind fails');
  t.match(unbound.text, `${GUEST_DEVICE} is not bound to any driver: run scripts/bind-vfio.sh ${GUEST_DEVICE}`);
  const bind = step(r.a.job, 'bind');
  t.equal(bind.status, 0, 'bind-vfio.sh binds it (loading vfio-pci with modprobe)');
  t.match(bind.text, `${GUEST_DEVICE}: IOMMU group ${group}, device node /dev/vfio/${group}`);
  t.notMatch(bind.text, /warning/, 'no other device shares its group');
  const again = step(r.a.job, 'bind-again');
  t.equal(again.status, 0);
  t.match(again.text, `${GUEST_DEVICE} is already bound to vfio-pci`, 'a second bind is a no-op that says so');
  const state = step(r.a.job, 'state');
  t.match(state.text, /^driver vfio-pci$/m, 'the function is on vfio-pci');
  t.match(state.text, new RegExp(`^group ${group} members ${GUEST_DEVICE} $`, 'm'), 'alone in its group');
  t.match(state.text, new RegExp(`^crw------- .* root .* ${group}$`, 'm'), 'the group node is root\'s');
  const denied = step(r.a.job, 'probe-nobody');
  t.equal(denied.status, 0, 'a user who is not root is refused');
  t.match(denied.text, `permission denied opening /dev/vfio/${group}: run as root, or 'sudo chown $USER ` +
    `/dev/vfio/${group}' and raise the locked-memory limit (ulimit -l)`);
  const owner = step(r.a.job, 'probe-nobody-owner');
  t.equal(owner.status, 0, 'that user, owning the group node (the advice), opens the NIC');
  t.match(owner.text, /link:\s+up/);
  const list = step(r.a.job, 'probe-list');
  t.match(list.text, new RegExp(`${GUEST_DEVICE}\\s+0x[0-9a-f]{4}\\s+BCM5\\d+ \\(P[57]\\)\\s+vfio-pci\\s+${group}`),
    'probe lists it: on vfio-pci, its group');
}

function apiSteps(t: Test, r: VfioGuestReport, chip: string): void {
  const api = step(r.a.job, 'api');
  t.equal(api.status, 0, 'the example exits 0');
  t.same(api.lines.filter((l) => l.startsWith('{')), ['{ ok: true, value: 5 }', '{ ok: true, value: 5 }'],
    'both completions: 5 bytes sent, 5 received');
  t.match(api.text, /^received "hello"$/m, 'the receive got the bytes sent');
  const printed = step(r.a.job, 'api-trace');
  let vfio;
  try {
    vfio = parseTrace(consoleFile(printed.lines));
  } catch (e) {
    return void t.fail(`the guest's trace did not come back: ${(e as Error).message}`);
  }
  const options = { mac: A_MAC, ipv4: A_IP, mtu: 1500, chip, stepped: true };
  const here = inProcessTrace(join(r.workDir, 'a', 'project'), options);
  if (!here.ok) return void t.fail(here.error);
  const count = (ch: string) => vfio.filter((x) => x.ch === ch).length;
  t.ok(count('hwrm') > 50 && count('cmdq') > 10 && count('db') > 10,
    `the VFIO road traced ${count('hwrm')} HWRM, ${count('cmdq')} CMDQ records and ${count('db')} doorbells`);
  t.same(compareDriverTraces(vfio, here.value), [],
    'the same commands, answers and doorbells with the same fields on both roads (addresses and PSNs aside)');
}

async function peerSteps(t: Test, r: VfioGuestReport, frames: readonly CapturedFrame[]): Promise<void> {
  t.equal(r.peerFailure, null, 'both second jobs ran to their end');
  t.same(r.gatesOpened, PEER_STEPS.map((p) => p.gate), 'each client went once the other guest\'s server listened');
  t.match(r.b.serial, /bnxt_re0: Device registered with IB successfully/, 'guest B: bnxt_re registered');
  for (const p of PEER_STEPS) {
    await t.test(p.id, async (t) => {
      const a = step(r.a.peerJob, p.serverIn === 'a' ? p.serverStep : p.clientStep);
      const b = step(r.b.job, p.serverIn === 'b' ? p.serverStep : p.clientStep);
      t.equal(a.status, 0, `rig-bnxt ${p.tool} over VFIO (guest A) exits 0`);
      t.equal(b.status, 0, `guest B's ${p.tool === 'pingpong' ? 'ibv_rc_pingpong' : 'ib_send_lat'} exits 0`);
      const role = p.serverIn === 'a' ? 'server' : 'client';
      // A bound on either side's packets: each message's, resends included many times over.
      const packets = 64 + 8 * p.iters * Math.ceil(p.sizeBytes / 1024);
      if (p.tool === 'pingpong') {
        const pp = parsePingpongOutput(a.lines);
        t.equal(pp?.iters, p.iters, `${p.iters} iterations`);
        t.equal(parsePingpongOutput(b.lines)?.iters, p.iters, 'and as many on B');
        if (pp === null) return;
        const mine = framesOfExchange(frames, [pp.localPsn, pp.remotePsn], packets);
        const c = checkPingpongCapture(mine, {
          guestQpn: pp.localQpn, guestPsn: pp.localPsn, hostQpn: pp.remoteQpn, hostPsn: pp.remotePsn,
          sizeBytes: p.sizeBytes, iters: p.iters, role,
        }, A_MAC);
        t.equal(c.messagesToGuest, p.iters, 'every message B -> A on the cable');
        t.equal(c.messagesFromGuest, p.iters, 'every message A -> B');
        t.same(c.badFrames, []);
        t.same(c.naks, [], 'no NAK');
        t.equal(c.echoesCompared, role === 'client' ? p.iters - 1 : p.iters, 'every echo compared');
        t.same(c.echoMismatches, [], 'every payload intact through both NICs and both drivers');
      } else {
        t.same([parsePerftestRow(a.lines)?.sizeBytes, parsePerftestRow(a.lines)?.iterations], [p.sizeBytes, p.iters]);
        t.same([parsePerftestRow(b.lines)?.sizeBytes, parsePerftestRow(b.lines)?.iterations], [p.sizeBytes, p.iters]);
        const q = perftestAddresses(a.lines);
        if (q === null) return void t.fail('no QP addresses in rig-bnxt perf\'s output');
        const mine = framesOfExchange(frames, [q.local[1], q.remote[1]], packets);
        const c = checkPingpongCapture(mine, {
          guestQpn: q.local[0], guestPsn: q.local[1], hostQpn: q.remote[0], hostPsn: q.remote[1],
          sizeBytes: p.sizeBytes, iters: p.iters, role, payloads: {
            toGuest: guestPerftestMessage(p.sizeBytes), fromGuest: new Uint8Array(p.sizeBytes).fill(PERF_SEND_FILL),
          },
        }, A_MAC);
        t.same(c.badFrames, []);
        t.same(c.naks, [], 'no NAK');
        t.equal(c.payloadsCompared, 2 * p.iters, 'every message each way compared with what its sender posted');
        t.same(c.payloadMismatches, [], 'every payload intact through both NICs and both drivers');
      }
    });
  }
}
