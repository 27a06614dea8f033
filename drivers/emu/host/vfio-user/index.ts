/**
 * Serves one software NIC on a vfio-user socket (QEMU's `-device vfio-user-pci`), so a guest
 * kernel's own bnxt_en/bnxt_re, DPDK or any driver can drive the model. The server runs in its
 * own worker thread; this handle reports what happens and closes it.
 */
import { Worker } from 'node:worker_threads';
import { ok, err, type Result } from '../../../../firmware-hwrm/result.ts';
import type { EmuConfig } from '../../model/config.ts';
import type { ServerEvent, ServerStats } from './events.ts';
import type { HwrmObservation } from './nic-device.ts';

export type { ServerEvent, ServerStats, HwrmObservation };

export interface VfioUserServer {
  readonly socketPath: string;
  /** Resolves when the connection ended (client gone, or close()), with why and the counters. */
  readonly ended: Promise<{ readonly reason: string; readonly stats: ServerStats | undefined }>;
  /** Every HWRM request the guest sent so far, in order, with the answer's error code. */
  readonly hwrm: readonly HwrmObservation[];
  /**
   * Runs a test or fault control of the served model by name ('engine.counters', as
   * NicModel.control takes it): rejects with the control's error, or once the server ended.
   */
  control(name: string, ...args: unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

export interface ServeOptions {
  readonly socketPath: string;
  readonly config: EmuConfig;
  /** Every event as it happens (logs, HWRM requests, connection). */
  readonly onEvent?: (e: ServerEvent) => void;
  /** Log every refused message (default: only internal errors). */
  readonly verbose?: boolean;
  /** Write every HWRM request and response the guest's driver exchanged here, one JSON object a line. */
  readonly tracePath?: string;
  /** How long an in-band DMA (a range mapped without an fd) waits for the client's reply (remote-dma.ts). */
  readonly dmaReplyLimitMs?: number;
}

/** Starts the server; resolves once it listens (or with why it cannot). */
export function serveVfioUser(options: ServeOptions): Promise<Result<VfioUserServer>> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(workerUrl(), {
        workerData: {
          socketPath: options.socketPath, config: options.config, verbose: options.verbose ?? false,
          tracePath: options.tracePath, dmaReplyLimitMs: options.dmaReplyLimitMs,
        },
      });
    } catch (e) {
      resolve(err(`cannot start the vfio-user server thread: ${(e as Error).message}`));
      return;
    }
    const hwrm: HwrmObservation[] = [];
    let settle: (v: { reason: string; stats: ServerStats | undefined }) => void = () => {};
    const ended = new Promise<{ reason: string; stats: ServerStats | undefined }>((r) => { settle = r; });
    let listening = false;
    let finished = false;
    let nextControl = 1;
    const controls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
    void ended.then(() => {
      finished = true;
      for (const c of controls.values()) c.reject(new Error('the vfio-user server ended before the control answered'));
      controls.clear();
    });
    const control = (name: string, ...args: unknown[]) => new Promise<unknown>((res, rej) => {
      if (finished) return rej(new Error('the vfio-user server has ended'));
      const id = nextControl++;
      controls.set(id, { resolve: res, reject: rej });
      worker.postMessage({ kind: 'control', id, name, args });
    });
    worker.on('message', (e: ServerEvent) => {
      options.onEvent?.(e);
      if (e.kind === 'hwrm') hwrm.push(e);
      if (e.kind === 'control-reply') {
        const c = controls.get(e.id);
        controls.delete(e.id);
        if (e.ok) c?.resolve(e.value);
        else c?.reject(new Error(e.error));
      }
      if (e.kind === 'listening') {
        listening = true;
        resolve(ok({
          socketPath: options.socketPath, ended, hwrm, control,
          close: async () => { worker.postMessage({ kind: 'close' }); await ended; },
        }));
      }
      if (e.kind === 'failed') resolve(err(e.error));
      if (e.kind === 'ended') settle({ reason: e.reason, stats: e.stats });
    });
    worker.on('error', (e) => {
      const why = `the vfio-user server thread failed: ${e.stack ?? e.message}`;
      if (!listening) resolve(err(why));
      settle({ reason: why, stats: undefined });
    });
    worker.on('exit', () => {
      if (!listening) resolve(err('the vfio-user server thread exited before listening'));
      settle({ reason: 'the server thread exited', stats: undefined });
    });
  });
}

function workerUrl(): URL {
  // Sources run as .ts through the loader; the bundled CLI ships dist/vfio-user-worker.mjs beside itself.
  return import.meta.url.endsWith('.ts') ? new URL('./worker.ts', import.meta.url)
    : new URL('./vfio-user-worker.mjs', import.meta.url);
}
