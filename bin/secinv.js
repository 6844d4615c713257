#!/usr/bin/env node
// Entry point for the `secinv` command: runs the compiled CLI (built by `npm run build`, which `npm ci` runs via prepare).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
