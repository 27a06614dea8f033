// Preload (node --import) that makes koffi unloadable, as where its native part is missing:
// require('koffi') and import('koffi') both throw. Every attempt is counted in
// globalThis.koffiAttempts (CommonJS requires, which is how rig-bnxt loads it) so a test can
// tell "never asked for" from "asked for and refused".
import Module, { register } from 'node:module';

globalThis.koffiAttempts = 0;
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === 'koffi' || request.startsWith('koffi/')) {
    globalThis.koffiAttempts++;
    throw new Error('Cannot find the native Koffi module; did you bundle it correctly? (blocked by the test)');
  }
  return resolve.call(this, request, ...rest);
};
const hook = `export async function resolve(specifier, context, next) {
  if (specifier === 'koffi' || specifier.startsWith('koffi/')) throw new Error('koffi import blocked by the test');
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
