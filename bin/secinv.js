#!/usr/bin/env node
// Entry point for the `secinv` command: runs the bundled CLI (built by `npm run build`, which `npm ci` runs via
// prepare; scripts/bundle.ts).
import '../dist/bundle/secinv.js';
