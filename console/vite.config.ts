// Builds the console into console/dist (checked in, served by the public API at /console/).
// No inline script or style may appear in the output: the CSP forbids them.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    target: 'es2022',
    reportCompressedSize: false,
  },
  logLevel: 'warn',
});
