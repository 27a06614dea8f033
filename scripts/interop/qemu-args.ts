/**
 * The QEMU command line of one guest run: docs/interop.md's, with this run's
 * ports. TCG only (no KVM), no tap: the control NIC is slirp with restrict=on (the guest reaches
 * nothing but the explicit forwards on 127.0.0.1) and the data NIC is one UDP datagram per
 * Ethernet frame between two 127.0.0.1 ports.
 */
import { join } from 'node:path';
import {
  GUEST_CONTROL_MAC, GUEST_DATA_MAC, GUEST_PINGPONG_PORT, GUESTFWD_IP, INITRD_FILE, KERNEL_FILE, REPO_ROOT,
} from './guest-config.ts';
import type { RunPorts } from './free-ports.ts';

export interface QemuFiles {
  readonly cacheDir: string;
  readonly jobFile: string;
  readonly serialLog: string;
  /** null: no capture of the data NIC. */
  readonly pcap: string | null;
  /**
   * The data NIC's UDP socket, made by the harness and passed to QEMU as this file descriptor
   * (bound to the guest port, connected to the host port; data-socket.ts says why). Absent:
   * QEMU makes its own socket on the guest port.
   */
  readonly dataFd?: number;
}

export const RELAY_SCRIPT = join(REPO_ROOT, 'scripts', 'interop', 'tcp-relay.mjs');

/**
 * `guestfwd`: also let the guest connect to GUESTFWD_IP:18515, each connection running the relay
 * to the host's 127.0.0.1:serverPort (the doc's pitfall 7: a cmd: guestfwd runs per connection).
 */
export function qemuArgs(files: QemuFiles, ports: RunPorts, guestfwd: boolean): string[] {
  for (const path of [files.cacheDir, files.jobFile, files.serialLog, files.pcap ?? '']) {
    if (path.includes(',')) throw new Error(`QEMU option values cannot hold a comma: ${path}`);
  }
  let control = `user,id=ctl,restrict=on,hostfwd=tcp:127.0.0.1:${ports.tcpPort}-:${GUEST_PINGPONG_PORT}`;
  if (guestfwd) {
    control += `,guestfwd=tcp:${GUESTFWD_IP}:${GUEST_PINGPONG_PORT}-cmd:` +
      `${process.execPath} ${RELAY_SCRIPT} ${ports.serverPort}`;
  }
  // QEMU 7.2's net/dgram.c takes a passed socket as local.type=fd with no remote and send()s
  // on it, so it must be connected already.
  const data = files.dataFd !== undefined
    ? `dgram,id=data,local.type=fd,local.str=${files.dataFd}`
    : `dgram,id=data,local.type=inet,local.host=127.0.0.1,local.port=${ports.guestPort},` +
      `remote.type=inet,remote.host=127.0.0.1,remote.port=${ports.hostPort}`;
  const args = [
    '-accel', 'tcg', '-cpu', 'max', '-m', '512', '-smp', '1',
    '-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot',
    '-kernel', join(files.cacheDir, KERNEL_FILE),
    '-initrd', join(files.cacheDir, INITRD_FILE),
    '-append', 'console=ttyS0 panic=-1 quiet loglevel=4',
    '-netdev', control,
    '-device', `virtio-net-pci,netdev=ctl,mac=${GUEST_CONTROL_MAC}`,
    '-netdev', data,
    '-device', `virtio-net-pci,netdev=data,mac=${GUEST_DATA_MAC}`,
  ];
  if (files.pcap !== null) args.push('-object', `filter-dump,id=dump,netdev=data,file=${files.pcap}`);
  args.push('-fw_cfg', `name=opt/rxe/job,file=${files.jobFile}`, '-monitor', 'none', '-serial',
    `file:${files.serialLog}`);
  return args;
}
