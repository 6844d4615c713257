// Builds the web console (console/src) into dist/console/, which `secinv serve` serves at /console/
// (src/http/console.ts). Preact's JSX through esbuild: no Babel, no framework plugin.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Not the default `assets/`: /console/assets/… are the console's asset pages.
    assetsDir: 'static',
    // Everything from files: the content security policy allows no inline script, style or font.
    assetsInlineLimit: 0,
    target: 'es2022',
    reportCompressedSize: true,
  },
  // No network at build or run time, no telemetry; the dev server is for working on the console only.
  server: { proxy: { '/v1': 'http://127.0.0.1:8080' } },
});
