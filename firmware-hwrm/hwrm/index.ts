/**
 * HWRM message formats shared by the driver's HWRM channel and the software NIC's firmware
 * model: request types, headers, error codes, and each command's request/response layout.
 */
export * from './header.ts';
export * from './commands.ts';
export * from './errors.ts';
export * from './ver-get.ts';
export * from './func.ts';
export * from './func-drv.ts';
export * from './port.ts';
export * from './backing-store.ts';
export * from './stat-ctx.ts';
export * from './ring.ts';
export * from './queue.ts';
export * from './port-caps.ts';
export * from './vnic-caps.ts';
export * from './func-cfg.ts';
export * from './l2.ts';
export * from './fw-nvm.ts';
