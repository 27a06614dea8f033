/**
 * rig-bnxt: a userspace RoCE driver for Broadcom NetXtreme-E (Thor) NICs, with a software
 * model of the NIC. The public surface is what the spec names plus results and errors.
 */
export { Nic, type NicInfo, type NicOptions } from './nic.ts';
export { Region } from './region.ts';
export { Qp, type QpSide, type ConnectOptions, pathMtuFor } from './qp.ts';
export { formatEndpoint, parseEndpoint, type Endpoint } from './endpoint.ts';
export { ok, err, type Result } from './result.ts';
export { InvalidArgument } from './errors.ts';
