#!/usr/bin/env node
// Entry point for the `secinv` command: runs the bundled CLI (built by `npm run build`, which `npm ci` runs via
// prepare; scripts/bundle.ts). On Node 22 and later, V8's compiled code is kept between runs in the operating system's
// temporary folder (NODE_COMPILE_CACHE names another, NODE_DISABLE_COMPILE_CACHE=1 turns it off); Node 20 has no such
// cache. It must be on before the bundle loads, hence the dynamic import.
import module from 'node:module';

module.enableCompileCache?.();
await import('../dist/bundle/secinv.js');
