// Runs TypeScript sources directly: registers an ESM loader that strips types with esbuild.
// Used by npm start, npm run bench and the tests; worker threads inherit it through execArgv.
import { register } from 'node:module';
register('./ts-loader.mjs', import.meta.url);
