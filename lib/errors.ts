/** The public misuse error; it lives at the bottom of the tree (firmware-hwrm/) so every layer can throw it. */
export { InvalidArgument, invalid, assert } from '../firmware-hwrm/errors.ts';
