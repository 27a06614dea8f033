/** The CLI uses the library's Result: one definition for the whole project. */
export { ok, err, type Result } from '../../lib/result.ts';
