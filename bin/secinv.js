#!/usr/bin/env node
// Entry point for the `secinv` command: runs the compiled CLI (built by `npm run build`, which `npm ci` runs via prepare).
import '../dist/cli/bin.js';
