/** The public Result type; it lives at the bottom of the tree (firmware-hwrm/) so every layer can use it. */
export { ok, err, fail, type Result } from '../firmware-hwrm/result.ts';
