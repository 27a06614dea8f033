/** Cables: what carries the software NIC's Ethernet frames, and wrappers around them. */
export { CableStats, dropAll, type Cable, type FrameReceiver } from './cable.ts';
export { LoopCable, type LoopCableOptions } from './loop-cable.ts';
export { UdpCable, type UdpCableOptions } from './udp-cable.ts';
export { StreamCable, type StreamCableOptions } from './stream-cable.ts';
export { PcapTap, type PcapTapOptions } from './pcap-tap.ts';
export { refuseNonLoopback, refusePort } from './loopback.ts';
export { PairCable, PairLink, SharedStepping, pairLink, type Stepped } from './pair-cable.ts';
export { LocalDelivery } from './local-delivery.ts';
