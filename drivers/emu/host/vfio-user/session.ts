/**
 * One vfio-user connection, message by message: decodes each command, applies it to the
 * device (config space, BARs, guest memory, MSI-X vectors) and sends the reply the protocol
 * defines. A malformed or unknown message gets an error reply (EINVAL, ENOSYS) and changes
 * nothing; posted writes (NO_REPLY) are never answered. Never throws for what the client sent.
 */
import * as P from './protocol.ts';
import type { PciConfigSpace } from './pci-config.ts';
import type { MsixVectors } from './interrupts.ts';
import type { GuestMemory } from './guest-memory.ts';

/** A BAR as the device serves it (REGION_READ/WRITE after decoding). */
export interface BarRegion {
  readonly size: number;
  read(offset: number, count: number): Uint8Array;
  write(offset: number, data: Uint8Array): void;
}

export interface SessionDevice {
  readonly config: PciConfigSpace;
  /** BARs by region index (absent indices have size 0). */
  readonly bars: ReadonlyMap<number, BarRegion>;
  readonly vectors: MsixVectors;
  readonly memory: GuestMemory;
  /** DEVICE_RESET: back to power-on state. */
  reset(): void;
}

/** What we offer in VERSION (the client takes the smaller of each limit). */
export const SERVER_CAPABILITIES = {
  max_msg_fds: 16,
  max_data_xfer_size: 1048576,
  pgsizes: 4096,
  max_dma_maps: 65535,
} as const;

/** MSI-X: eventfds, maskable per vector through SET_IRQS (interrupts.ts), a fixed vector count. */
const MSIX_INFO_FLAGS = P.IRQ_INFO_FLAGS.EVENTFD | P.IRQ_INFO_FLAGS.MASKABLE | P.IRQ_INFO_FLAGS.NORESIZE;

export interface SessionStats {
  messages: number;
  errors: number;
  readonly byCommand: Map<string, number>;
}

export class VfioUserSession {
  readonly stats: SessionStats = { messages: 0, errors: 0, byCommand: new Map() };
  negotiated = false;
  /** The largest data one message may carry: the smaller of both sides' max_data_xfer_size. */
  maxTransferBytes: number = SERVER_CAPABILITIES.max_data_xfer_size;

  constructor(
    private readonly device: SessionDevice,
    private readonly send: (message: Uint8Array) => void,
    private readonly log: (line: string) => void = () => {},
  ) {}

  /** Handles one whole message; `fds` came with it and are owned from here on. */
  handle(header: P.Header, body: Uint8Array, fds: number[]): void {
    this.stats.messages++;
    const name = P.commandName(header.command);
    this.stats.byCommand.set(name, (this.stats.byCommand.get(name) ?? 0) + 1);
    if ((header.flags & P.FLAG.TYPE_MASK) !== P.FLAG.COMMAND) {
      this.closeAll(fds);
      this.log(`ignored a reply (id ${header.id}, ${name}) that answers nothing we sent`);
      return;
    }
    const noReply = (header.flags & P.FLAG.NO_REPLY) !== 0;
    let outcome: Uint8Array | { errno: number; why: string };
    try {
      outcome = this.dispatch(header, body, fds);
    } catch (e) {
      // A fault of ours must not take the guest down: answer with an error and log it.
      outcome = { errno: P.ERRNO.EINVAL, why: `internal error: ${(e as Error).stack ?? String(e)}` };
    }
    if (!(outcome instanceof Uint8Array)) {
      this.stats.errors++;
      this.log(`${name} (id ${header.id}) refused: ${outcome.why}`);
    }
    if (noReply) return;
    if (outcome instanceof Uint8Array)
      this.send(P.encodeMessage({ id: header.id, command: header.command, flags: P.FLAG.REPLY, error: 0 }, outcome));
    else this.send(P.encodeMessage({
      id: header.id, command: header.command, flags: P.FLAG.REPLY | P.FLAG.ERROR, error: outcome.errno,
    }));
  }

  private closeAll(fds: number[]): void {
    this.dropFds(fds);
  }

  private dispatch(h: P.Header, body: Uint8Array, fds: number[]): Uint8Array | { errno: number; why: string } {
    const bad = (why: string) => ({ errno: P.ERRNO.EINVAL, why });
    const d = this.device;
    if (h.command !== P.CMD.VERSION && !this.negotiated) return bad('VERSION must come first');
    if (h.command !== P.CMD.DMA_MAP && h.command !== P.CMD.DEVICE_SET_IRQS && fds.length > 0) {
      this.dropFds(fds);
      return bad(`${fds.length} fds on a message that takes none`);
    }
    switch (h.command) {
      case P.CMD.VERSION: {
        const v = P.decodeVersion(body);
        if (typeof v === 'string') return bad(v);
        if (v.major !== 0) return bad(`protocol ${v.major}.${v.minor}: this server speaks 0.0`);
        this.negotiated = true;
        const theirs = v.capabilities.max_data_xfer_size;
        if (typeof theirs === 'number' && Number.isSafeInteger(theirs) && theirs >= 4096)
          this.maxTransferBytes = Math.min(theirs, SERVER_CAPABILITIES.max_data_xfer_size);
        return P.encodeVersion(0, 0, SERVER_CAPABILITIES);
      }
      case P.CMD.DMA_MAP: {
        const m = P.decodeDmaMap(body);
        if (typeof m === 'string') { this.dropFds(fds); return bad(m); }
        if (fds.length > 1) { this.dropFds(fds); return bad(`DMA_MAP with ${fds.length} fds`); }
        const why = d.memory.map(m.address, m.size, m.flags, fds[0], m.offset);
        return why ? bad(why) : new Uint8Array(0);
      }
      case P.CMD.DMA_UNMAP: {
        const u = P.decodeDmaUnmap(body);
        if (typeof u === 'string') return bad(u);
        const all = (u.flags & 2) !== 0; // VFIO_DMA_UNMAP_FLAG_ALL
        if ((u.flags & ~2) !== 0)
          return bad(`DMA_UNMAP flags 0x${u.flags.toString(16)} (dirty-page tracking is not offered)`);
        d.memory.unmap(u.address, u.size, all);
        return P.encodeDmaUnmap(u);
      }
      case P.CMD.DEVICE_GET_INFO:
        return P.encodeDeviceInfo(P.DEVICE_FLAGS.PCI | P.DEVICE_FLAGS.RESET, P.NUM_REGIONS, P.NUM_IRQS);
      case P.CMD.DEVICE_GET_REGION_INFO: {
        const r = P.decodeRegionInfoRequest(body);
        if (typeof r === 'string') return bad(r);
        if (r.index >= P.NUM_REGIONS) return bad(`region ${r.index}: the device has ${P.NUM_REGIONS}`);
        const rw = P.REGION_FLAGS.READ | P.REGION_FLAGS.WRITE;
        if (r.index === P.REGION.CONFIG)
          return P.encodeRegionInfo({ index: r.index, flags: rw, size: d.config.bytes.length, offset: 0 });
        const bar = d.bars.get(r.index);
        return P.encodeRegionInfo({ index: r.index, flags: bar ? rw : 0, size: bar?.size ?? 0, offset: 0 });
      }
      case P.CMD.DEVICE_GET_IRQ_INFO: {
        const q = P.decodeIrqInfoRequest(body);
        if (typeof q === 'string') return bad(q);
        if (q.index === P.IRQ.MSIX)
          return P.encodeIrqInfo(q.index, MSIX_INFO_FLAGS, d.vectors.count);
        if (q.index === P.IRQ.INTX || q.index === P.IRQ.MSI)
          return P.encodeIrqInfo(q.index, P.IRQ_INFO_FLAGS.EVENTFD, 0);
        return bad(`IRQ index ${q.index} is not offered`);
      }
      case P.CMD.DEVICE_SET_IRQS: {
        const s = P.decodeSetIrqs(body);
        if (typeof s === 'string') { this.dropFds(fds); return bad(s); }
        if (s.index !== P.IRQ.MSIX) {
          this.dropFds(fds);
          return s.count === 0 && (s.flags & P.SET_IRQS_FLAGS.DATA_NONE) !== 0 ? new Uint8Array(0)
            : bad(`SET_IRQS on index ${s.index}: only MSI-X is offered`);
        }
        if ((s.flags & P.SET_IRQS_FLAGS.DATA_EVENTFD) === 0 && fds.length > 0) { this.dropFds(fds); return bad(
          'SET_IRQS: fds without DATA_EVENTFD',
        ); }
        const why = d.vectors.set(s, fds);
        if (why) { this.dropFds(fds); return bad(why); }
        return new Uint8Array(0);
      }
      case P.CMD.REGION_READ:
      case P.CMD.REGION_WRITE: {
        const write = h.command === P.CMD.REGION_WRITE;
        const a = P.decodeRegionAccess(body, write);
        if (typeof a === 'string') return bad(a);
        if (a.count > SERVER_CAPABILITIES.max_data_xfer_size) return bad(`${a.count} bytes in one access`);
        const size = a.region === P.REGION.CONFIG ? d.config.bytes.length : d.bars.get(a.region)?.size ?? 0;
        if (a.offset + a.count > size)
          return bad(`region ${a.region} access 0x${a.offset.toString(16)}+${a.count} past its ${size} bytes`);
        if (a.region === P.REGION.CONFIG) {
          if (!write) return P.encodeRegionAccess(a.offset, a.region, a.count, d.config.read(a.offset, a.count));
          d.config.write(a.offset, a.data);
          return P.encodeRegionAccess(a.offset, a.region, a.count);
        }
        const bar = d.bars.get(a.region)!;
        if (!write) return P.encodeRegionAccess(a.offset, a.region, a.count, bar.read(a.offset, a.count));
        bar.write(a.offset, a.data);
        return P.encodeRegionAccess(a.offset, a.region, a.count);
      }
      case P.CMD.DEVICE_RESET:
        d.reset();
        return new Uint8Array(0);
      default:
        this.dropFds(fds);
        return { errno: P.ERRNO.ENOSYS, why: `${P.commandName(h.command)} is not implemented` };
    }
  }

  private dropFds(fds: number[]): void {
    for (const fd of fds.splice(0)) this.device.memory.closeFd(fd);
  }
}
